"""TruncatedNormal, MSRA and Bilinear initializers; Fluid 1.5's init_on_cpu arguments accepted."""

import numpy as np
import pytest
from oar import fluid

INIT = fluid.initializer


def init_value(initializer, shape, seed=7):
    main, startup = fluid.Program(), fluid.Program()
    startup.random_seed = seed
    with fluid.program_guard(main, startup):
        fluid.layers.create_parameter(shape, "float32", name="p", default_initializer=initializer)
    scope = fluid.Scope()
    fluid.Executor(fluid.CPUPlace()).run(startup, scope=scope)
    return np.array(scope.find_var("p").value)


def bilinear_ref(shape):
    """Fluid's loop, with the row index by integer division (the intended bilinear kernel)."""
    w = np.zeros(int(np.prod(shape)), "float32")
    size = shape[3]
    f = np.ceil(size / 2.0)
    c = (2 * f - 1 - f % 2) / (2.0 * f)
    for i in range(w.size):
        x = i % size
        y = (i // size) % shape[2]
        w[i] = (1 - abs(x / f - c)) * (1 - abs(y / f - c))
    return w.reshape(shape)


@pytest.mark.parametrize("shape", [[2, 2, 4, 4], [3, 1, 3, 3]])
def test_bilinear_matches_the_loop(shape):
    np.testing.assert_allclose(init_value(INIT.Bilinear(), shape), bilinear_ref(shape), rtol=1e-6)
    assert INIT.BilinearInitializer is INIT.Bilinear


def test_bilinear_refuses_non_square_or_non_4d():
    with pytest.raises(ValueError, match="must be 4-D"):
        init_value(INIT.Bilinear(), [4, 4])
    with pytest.raises(ValueError, match="square kernel"):
        init_value(INIT.Bilinear(), [1, 1, 3, 4])


def test_truncated_normal_stays_within_two_std():
    v = init_value(INIT.TruncatedNormal(loc=1.0, scale=0.5), [200, 50])
    assert v.min() >= 0.0 and v.max() <= 2.0
    assert abs(v.mean() - 1.0) < 0.02 and 0.4 < v.std() < 0.5  # truncation shrinks the std to ~0.44
    assert INIT.TruncatedNormalInitializer is INIT.TruncatedNormal


def test_msra_uniform_and_normal_scales():
    fan_in = 8 * 3 * 3
    u = init_value(INIT.MSRA(uniform=True), [16, 8, 3, 3])
    limit = np.sqrt(6.0 / fan_in)
    assert np.abs(u).max() <= limit and np.abs(u).max() > 0.9 * limit
    n = init_value(INIT.MSRAInitializer(uniform=False), [64, 8, 3, 3])
    assert abs(n.std() - np.sqrt(2.0 / fan_in)) < 0.01
    fixed = init_value(INIT.MSRA(uniform=True, fan_in=6.0), [4, 5])
    assert np.abs(fixed).max() <= 1.0


def test_init_on_cpu_and_force_flags_are_accepted():
    assert INIT.force_init_on_cpu() is False
    with INIT.init_on_cpu():
        assert INIT.force_init_on_cpu() is True
        v = init_value(INIT.Constant(0.5, force_cpu=True), [2, 2])
    assert INIT.force_init_on_cpu() is False
    np.testing.assert_array_equal(v, np.full((2, 2), 0.5, "float32"))

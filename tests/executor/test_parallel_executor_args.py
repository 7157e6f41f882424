"""ParallelExecutor's arguments follow Fluid 1.8: ``use_cuda`` is required (seed 001's ``fluid.ParallelExecutor()``
is a TypeError there, and must not quietly pick a device here)."""

import numpy as np
import pytest
from oar import fluid


def test_use_cuda_is_required():
    with pytest.raises(TypeError, match="use_cuda"):
        fluid.ParallelExecutor()


def test_runs_with_use_cuda_false():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        x = fluid.layers.data(name="x", shape=[2], dtype="float32")
        y = fluid.layers.scale(x, scale=3.0)
    fluid.Executor(fluid.CPUPlace()).run(startup)
    pe = fluid.ParallelExecutor(False, main_program=main)
    (out,) = pe.run(fetch_list=[y.name], feed={"x": np.ones((4, 2), "float32")})
    np.testing.assert_allclose(out, np.full((4, 2), 3.0, "float32"))

"""Five Adam steps of a CNN (conv, max/avg pool, batch_norm, fc, cross_entropy) from fixed weights
give the real Fluid 1.8.5's losses, weights and moving statistics (golden data in data/)."""

import importlib.util
from pathlib import Path

import numpy as np
from oar import fluid

DATA = Path(__file__).parent / "data"
_spec = importlib.util.spec_from_file_location("fluid18_cnn_train", DATA / "fluid18_cnn_train.py")
golden = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(golden)


def test_training_matches_fluid18():
    with fluid.unique_name.guard():
        main, startup, loss = golden.build(fluid)
    exe, scope = fluid.Executor(fluid.CPUPlace()), fluid.Scope()
    exe.run(startup, scope=scope)
    xs, ys = golden.data()
    losses = [exe.run(main, feed={"img": x, "label": y}, fetch_list=[loss], scope=scope)[0]
              for x, y in zip(xs, ys)]
    expected = np.load(DATA / "fluid18_cnn_train.npz")
    np.testing.assert_allclose(np.concatenate(losses), expected["losses"], rtol=1e-4)

    def value(name):
        v = scope.find_var(name).value
        return np.asarray(getattr(v, "_array", v))

    for i in range(1, 8):
        np.testing.assert_allclose(value(f"p{i}"), expected[f"p{i}"], rtol=1e-3, atol=1e-5, err_msg=f"p{i}")
    np.testing.assert_allclose(value("bn_mean"), expected["moving_mean"], rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(value("bn_var"), expected["moving_var"], rtol=1e-4, atol=1e-6)

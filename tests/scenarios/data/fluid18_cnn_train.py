"""Five Adam steps of the seed's MNIST CNN (plus batch_norm and dropout-free avg pooling variants)
from fixed weights: the real Fluid 1.8.5's losses and final weights, as golden data.

``build(fluid)`` builds the same program in either framework. Regenerate with
the oracle: ``$FLUID18_PYTHON tests/scenarios/data/fluid18_cnn_train.py``.
"""

import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
STEPS = 5


def data():
    rng = np.random.RandomState(7)
    xs = [rng.rand(16, 1, 28, 28).astype("float32") for _ in range(STEPS)]
    ys = [rng.randint(0, 10, (16, 1)).astype("int64") for _ in range(STEPS)]
    return xs, ys


def build(fluid):
    rng = np.random.RandomState(3)

    def w(shape, scale):
        init = fluid.initializer.NumpyArrayInitializer((rng.randn(*shape) * scale).astype("float32"))
        return fluid.ParamAttr(name=f"p{w.count}", initializer=init)

    w.count = 0

    def attr(shape, scale):
        w.count += 1
        return w(shape, scale)

    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        img = fluid.data(name="img", shape=[None, 1, 28, 28], dtype="float32")
        label = fluid.data(name="label", shape=[None, 1], dtype="int64")
        c1 = fluid.layers.conv2d(img, 20, 5, padding=2, act="relu", param_attr=attr((20, 1, 5, 5), 0.28),
                                 bias_attr=attr((20,), 0.1))
        p1 = fluid.layers.pool2d(c1, pool_size=2, pool_stride=2, pool_type="max")
        c2 = fluid.layers.conv2d(p1, 20, 5, padding=2, param_attr=attr((20, 20, 5, 5), 0.06), bias_attr=False)
        bn = fluid.layers.batch_norm(c2, act="relu", param_attr=attr((20,), 0.1), bias_attr=attr((20,), 0.1),
                                    moving_mean_name="bn_mean", moving_variance_name="bn_var")
        p2 = fluid.layers.pool2d(bn, pool_size=3, pool_stride=2, pool_padding=1, pool_type="avg")
        pred = fluid.layers.fc(p2, 10, act="softmax", param_attr=attr((980, 10), 0.03), bias_attr=attr((10,), 0.1))
        loss = fluid.layers.mean(fluid.layers.cross_entropy(input=pred, label=label))
        fluid.optimizer.Adam(learning_rate=0.01).minimize(loss, startup)
    return main, startup, loss


if __name__ == "__main__":
    import paddle.fluid as fluid

    main, startup, loss = build(fluid)
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    xs, ys = data()
    losses = [exe.run(main, feed={"img": x, "label": y}, fetch_list=[loss])[0] for x, y in zip(xs, ys)]
    scope = fluid.global_scope()
    params = {f"p{i}": np.array(scope.find_var(f"p{i}").get_tensor()) for i in range(1, 8)}
    params["moving_mean"] = np.array(scope.find_var("bn_mean").get_tensor())
    params["moving_var"] = np.array(scope.find_var("bn_var").get_tensor())
    np.savez(os.path.join(HERE, "fluid18_cnn_train.npz"), losses=np.concatenate(losses), **params)

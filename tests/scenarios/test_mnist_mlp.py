"""The Paddle book's MNIST MLP (fc 200 relu, fc 200 relu, fc 10 softmax, Adam) on a learnable synthetic task.

Ten smooth 28x28 prototype images; each sample is a prototype, randomly
shifted in brightness, plus strong pixel noise. The MLP must reach > 95% test
accuracy within the test's budget, evaluated through ``clone(for_test=True)``.
"""

import numpy as np
from oar import fluid


def make_data(n, rng, protos):
    labels = rng.integers(0, 10, n)
    imgs = protos[labels] * rng.uniform(0.7, 1.3, (n, 1, 1, 1)) + rng.normal(0, 0.6, (n, 1, 28, 28))
    return imgs.astype("float32"), labels.reshape(-1, 1).astype("int64")


def prototypes(rng):
    yy, xx = np.mgrid[0:28, 0:28] / 27.0
    protos = []
    for _ in range(10):
        fx, fy, px, py = rng.uniform(0.5, 3, 2).tolist() + rng.uniform(0, 2 * np.pi, 2).tolist()
        protos.append(np.sin(2 * np.pi * fx * xx + px) * np.cos(2 * np.pi * fy * yy + py))
    return np.stack(protos)[:, None].astype("float32")


def multilayer_perceptron(img):
    hidden = fluid.layers.fc(input=img, size=200, act="relu")
    hidden = fluid.layers.fc(input=hidden, size=200, act="relu")
    return fluid.layers.fc(input=hidden, size=10, act="softmax")


def test_mlp_reaches_95_percent():
    rng = np.random.default_rng(0)
    protos = prototypes(rng)
    main, startup = fluid.Program(), fluid.Program()
    main.random_seed = startup.random_seed = 90
    with fluid.program_guard(main, startup):
        img = fluid.layers.data(name="img", shape=[1, 28, 28], dtype="float32")
        label = fluid.layers.data(name="label", shape=[1], dtype="int64")
        prediction = multilayer_perceptron(img)
        avg_loss = fluid.layers.mean(fluid.layers.cross_entropy(input=prediction, label=label))
        acc = fluid.layers.accuracy(input=prediction, label=label)
        test_program = main.clone(for_test=True)
        fluid.optimizer.Adam(learning_rate=0.001).minimize(avg_loss)
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    test_x, test_y = make_data(1000, rng, protos)
    losses = []
    for _ in range(80):
        x, y = make_data(64, rng, protos)
        (loss,) = exe.run(main, feed={"img": x, "label": y}, fetch_list=[avg_loss])
        losses.append(float(loss[0]))
    (test_acc,) = exe.run(test_program, feed={"img": test_x, "label": test_y}, fetch_list=[acc])
    assert np.mean(losses[-10:]) < np.mean(losses[:10]) / 4
    print(f"MLP test accuracy {float(test_acc[0]):.3f}")
    assert float(test_acc[0]) > 0.95, f"test accuracy {float(test_acc[0]):.3f}"

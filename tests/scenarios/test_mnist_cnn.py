"""Scenario: the seed's MNIST CNN trains to > 95% accuracy on a learnable synthetic 28x28 task.

Network as in the seed guide: conv 1->20 5x5 pad 2 + relu + max-pool 2, conv
20->20 5x5 pad 2 + relu + max-pool 2, fc 980->10 softmax, cross_entropy, Adam,
batch 64. The task: each class is a fixed pattern of strokes, drawn with a
random shift of up to 2 pixels, random intensity and Gaussian noise.
"""

import numpy as np
import pytest
from oar import fluid


def make_templates(rng):
    """Ten stroke patterns: each a few random horizontal/vertical bars and a blob."""
    yy, xx = np.mgrid[0:28, 0:28]
    templates = np.zeros((10, 28, 28), "float32")
    for k in range(10):
        for _ in range(3):
            a, b = rng.integers(4, 24, 2)
            length = rng.integers(6, 14)
            if rng.random() < 0.5:
                templates[k, a, b:min(b + length, 27)] = 1.0
                templates[k, a + 1, b:min(b + length, 27)] = 1.0
            else:
                templates[k, a:min(a + length, 27), b] = 1.0
                templates[k, a:min(a + length, 27), b + 1] = 1.0
        cy, cx = rng.integers(6, 22, 2)
        templates[k] += np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / 8.0).astype("float32")
    return np.clip(templates, 0, 1)


def make_batch(rng, templates, n):
    labels = rng.integers(0, 10, n)
    imgs = np.zeros((n, 1, 28, 28), "float32")
    shifts = rng.integers(-2, 3, (n, 2))
    for i in range(n):
        imgs[i, 0] = np.roll(templates[labels[i]], tuple(shifts[i]), axis=(0, 1))
    imgs *= rng.uniform(0.7, 1.3, (n, 1, 1, 1)).astype("float32")
    imgs += rng.normal(0, 0.3, imgs.shape).astype("float32")
    return imgs, labels.reshape(-1, 1).astype("int64")


def convolutional_neural_network(img):
    conv_pool_1 = fluid.nets.simple_img_conv_pool(input=img, filter_size=5, num_filters=20, pool_size=2,
                                                  pool_stride=2, conv_padding=2, act="relu")
    conv_pool_2 = fluid.nets.simple_img_conv_pool(input=conv_pool_1, filter_size=5, num_filters=20,
                                                  pool_size=2, pool_stride=2, conv_padding=2, act="relu")
    return fluid.layers.fc(input=conv_pool_2, size=10, act="softmax")


def layers_network(img):
    c1 = fluid.layers.conv2d(img, num_filters=20, filter_size=5, padding=2, act="relu")
    p1 = fluid.layers.pool2d(c1, pool_size=2, pool_stride=2, pool_type="max")
    c2 = fluid.layers.conv2d(p1, num_filters=20, filter_size=5, padding=2, act="relu")
    p2 = fluid.layers.pool2d(c2, pool_size=2, pool_stride=2, pool_type="max")
    return fluid.layers.fc(p2, size=10, act="softmax")


def _train(net, steps=60):
    rng = np.random.default_rng(0)
    templates = make_templates(rng)
    main, startup = fluid.Program(), fluid.Program()
    main.random_seed = startup.random_seed = 1
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        img = fluid.data(name="img", shape=[None, 1, 28, 28], dtype="float32")
        label = fluid.data(name="label", shape=[None, 1], dtype="int64")
        prediction = net(img)
        avg_loss = fluid.layers.mean(fluid.layers.cross_entropy(input=prediction, label=label))
        acc = fluid.layers.accuracy(input=prediction, label=label)
        test_program = main.clone(for_test=True)
        fluid.optimizer.Adam(learning_rate=0.001).minimize(avg_loss)
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    first = None
    for _ in range(steps):
        x, y = make_batch(rng, templates, 64)
        loss, = exe.run(main, feed={"img": x, "label": y}, fetch_list=[avg_loss], scope=scope)
        first = float(loss.item()) if first is None else first
    accs = []
    for _ in range(4):
        x, y = make_batch(rng, templates, 128)
        accs.append(exe.run(test_program, feed={"img": x, "label": y}, fetch_list=[acc], scope=scope)[0].item())
    return first, float(loss.item()), float(np.mean(accs))


@pytest.mark.slow
def test_mnist_cnn_reaches_95_percent():
    first, last, acc = _train(convolutional_neural_network)
    assert last < first
    assert acc > 0.95, f"test accuracy {acc:.3f} (loss {first:.3f} -> {last:.3f})"


def test_nets_and_layers_versions_build_the_same_program():
    progs = []
    for net in (convolutional_neural_network, layers_network):
        main = fluid.Program()
        with fluid.program_guard(main, fluid.Program()), fluid.unique_name.guard():
            net(fluid.data(name="img", shape=[None, 1, 28, 28], dtype="float32"))
        progs.append([(op.type, sorted(op.attrs.items())) for op in main.global_block().ops])
    assert progs[0] == progs[1]
    assert [t for t, _ in progs[0]] == ["conv2d", "elementwise_add", "relu", "pool2d"] * 2 + [
        "mul", "elementwise_add", "softmax"]

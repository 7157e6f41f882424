"""A small ResNet (conv + batch_norm + residual blocks + global pooling) learns a synthetic
image task: which of four quadrants holds a bright, noisy blob. Held-out accuracy > 90%."""

from __future__ import annotations

import numpy as np
from oar import fluid

SIZE = 12


def make_data(n: int, rng) -> tuple:
    x = rng.normal(0, 0.5, (n, 3, SIZE, SIZE)).astype("float32")
    y = rng.integers(0, 4, n)
    h = SIZE // 2
    for i, q in enumerate(y):
        r0, c0 = (q // 2) * h + rng.integers(0, h - 3), (q % 2) * h + rng.integers(0, h - 3)
        x[i, :, r0 : r0 + 3, c0 : c0 + 3] += rng.uniform(1.0, 2.0, (3, 1, 1))
    return x, y.reshape(-1, 1).astype("int64")


def conv_bn(x, ch, stride=1, act="relu"):
    h = fluid.layers.conv2d(x, ch, 3, stride=stride, padding=1, bias_attr=False)
    return fluid.layers.batch_norm(h, act=act)


def basic_block(x, ch, stride):
    h = conv_bn(x, ch, stride)
    h = conv_bn(h, ch, 1, act=None)
    short = x
    if stride != 1 or x.shape[1] != ch:
        short = fluid.layers.batch_norm(
            fluid.layers.conv2d(x, ch, 1, stride=stride, bias_attr=False)
        )
    return fluid.layers.relu(fluid.layers.elementwise_add(h, short))


def resnet(img):
    h = conv_bn(img, 8)
    h = basic_block(h, 8, 1)
    h = basic_block(h, 16, 2)
    h = fluid.layers.pool2d(h, pool_type="avg", global_pooling=True)
    return fluid.layers.fc(h, 4, act="softmax")


def test_small_resnet_learns_quadrants():
    rng = np.random.default_rng(0)
    xtr, ytr = make_data(1024, rng)
    xte, yte = make_data(256, rng)
    main, startup = fluid.Program(), fluid.Program()
    main.random_seed = startup.random_seed = 1
    with fluid.program_guard(main, startup):
        img = fluid.data("img", [None, 3, SIZE, SIZE], "float32")
        label = fluid.data("label", [None, 1], "int64")
        pred = resnet(img)
        loss = fluid.layers.mean(fluid.layers.cross_entropy(pred, label))
        acc = fluid.layers.accuracy(pred, label)
        test_prog = main.clone(for_test=True)
        fluid.optimizer.Adam(0.01).minimize(loss)
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    for _epoch in range(3):
        for i in range(0, len(xtr), 32):
            exe.run(
                main,
                feed={"img": xtr[i : i + 32], "label": ytr[i : i + 32]},
                fetch_list=[loss],
                scope=scope,
            )
    (test_acc,) = exe.run(test_prog, feed={"img": xte, "label": yte}, fetch_list=[acc], scope=scope)
    assert float(np.asarray(test_acc).reshape(-1)[0]) > 0.9

"""The scenario models of the deployment tests, trained a few steps and saved as inference models."""

from __future__ import annotations

import numpy as np
from oar import fluid


def _train_and_save(build, feeds_fn, dirname, steps=3, seed=1, **save_kw):
    main, startup = fluid.Program(), fluid.Program()
    main.random_seed = startup.random_seed = seed
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        feed_names, pred, loss = build()
        fluid.optimizer.SGD(learning_rate=0.01).minimize(loss)
    scope = fluid.Scope()
    exe = fluid.Executor(fluid.CPUPlace())
    rng = np.random.default_rng(seed)
    with fluid.scope_guard(scope):
        exe.run(startup)
        for _ in range(steps):
            exe.run(main, feed=feeds_fn(rng, 8, train=True), fetch_list=[loss])
        fluid.io.save_inference_model(dirname, feed_names, [pred], exe, main, **save_kw)
    return dirname


def fit_a_line(dirname, **kw):
    def build():
        x = fluid.layers.data(name="x", shape=[13], dtype="float32")
        y = fluid.layers.data(name="y", shape=[1], dtype="float32")
        pred = fluid.layers.fc(input=x, size=1, act=None)
        loss = fluid.layers.mean(fluid.layers.square_error_cost(input=pred, label=y))
        return ["x"], pred, loss

    def feeds(rng, n, train=False):
        f = {"x": rng.standard_normal((n, 13)).astype("float32")}
        if train:
            f["y"] = rng.standard_normal((n, 1)).astype("float32")
        return f

    return _train_and_save(build, feeds, dirname, **kw), feeds


def mlp(dirname, **kw):
    def build():
        img = fluid.layers.data(name="img", shape=[784], dtype="float32")
        label = fluid.layers.data(name="label", shape=[1], dtype="int64")
        h = fluid.layers.fc(input=img, size=64, act="relu")
        h = fluid.layers.fc(input=h, size=32, act="tanh")
        h = fluid.layers.dropout(h, dropout_prob=0.3)
        pred = fluid.layers.fc(input=h, size=10, act="softmax")
        loss = fluid.layers.mean(fluid.layers.cross_entropy(input=pred, label=label))
        return ["img"], pred, loss

    def feeds(rng, n, train=False):
        f = {"img": rng.random((n, 784), dtype=np.float32)}
        if train:
            f["label"] = rng.integers(0, 10, (n, 1)).astype("int64")
        return f

    return _train_and_save(build, feeds, dirname, **kw), feeds


def mnist_cnn(dirname, **kw):
    def build():
        img = fluid.layers.data(name="img", shape=[1, 28, 28], dtype="float32")
        label = fluid.layers.data(name="label", shape=[1], dtype="int64")
        c1 = fluid.layers.conv2d(img, num_filters=8, filter_size=5, padding=2)
        b1 = fluid.layers.batch_norm(c1, act="relu")
        p1 = fluid.layers.pool2d(b1, pool_size=2, pool_stride=2, pool_type="max")
        c2 = fluid.layers.conv2d(p1, num_filters=8, filter_size=3, act="relu", bias_attr=False)
        b2 = fluid.layers.batch_norm(c2)
        p2 = fluid.layers.pool2d(b2, pool_size=2, pool_stride=2, pool_type="avg")
        d = fluid.layers.dropout(p2, dropout_prob=0.25)
        f = fluid.layers.fc(input=d, size=32)
        fb = fluid.layers.batch_norm(f, act="sigmoid")
        pred = fluid.layers.fc(input=fb, size=10, act="softmax")
        loss = fluid.layers.mean(fluid.layers.cross_entropy(input=pred, label=label))
        return ["img"], pred, loss

    def feeds(rng, n, train=False):
        f = {"img": rng.random((n, 1, 28, 28), dtype=np.float32)}
        if train:
            f["label"] = rng.integers(0, 10, (n, 1)).astype("int64")
        return f

    return _train_and_save(build, feeds, dirname, **kw), feeds


SCENARIOS = {"fit_a_line": fit_a_line, "mlp": mlp, "mnist_cnn": mnist_cnn}


def reference(dirname, feed, **load_kw):
    """Outputs of ``Executor.run`` on the loaded program (no passes)."""
    scope = fluid.Scope()
    exe = fluid.Executor(fluid.CPUPlace())
    with fluid.scope_guard(scope):
        prog, feeds, fetches = fluid.io.load_inference_model(dirname, exe, **load_kw)
        return exe.run(prog, feed=feed, fetch_list=fetches), prog

"""An is_sparse embedding (SelectedRows gradient) trains exactly like the dense one under every optimizer.

Ids repeat within a batch, so rows must be merged; clipping and regularization
see the same gradient in both forms.
"""

import numpy as np
import pytest
from oar import fluid

OPT = fluid.optimizer
rng = np.random.default_rng(17)
TABLE = rng.normal(size=(12, 4)).astype("float32")
IDS = np.array([[3], [7], [3], [0], [11], [7]], "int64")
TARGET = rng.normal(size=(6, 4)).astype("float32")

MAKERS = {
    "SGD": lambda: OPT.SGD(0.1),
    "Momentum": lambda: OPT.Momentum(0.1, 0.9),
    "Adagrad": lambda: OPT.Adagrad(0.1),
    "RMSProp": lambda: OPT.RMSProp(0.01, centered=True),
    "Adam": lambda: OPT.Adam(0.05),
    "Adamax": lambda: OPT.Adamax(0.05),
    "DecayedAdagrad": lambda: OPT.DecayedAdagrad(0.1),
    "Ftrl": lambda: OPT.Ftrl(0.1, l1=0.001),
    "Lamb": lambda: OPT.Lamb(0.05),
    "Adadelta": lambda: OPT.Adadelta(1.0),
    "LarsMomentum": lambda: OPT.LarsMomentum(0.1, 0.9, lars_coeff=0.05),
    "SGD+L2": lambda: OPT.SGD(0.1, regularization=fluid.regularizer.L2Decay(0.1)),
    "SGD+clip_value": lambda: OPT.SGD(0.1, grad_clip=fluid.clip.GradientClipByValue(0.02)),
    "SGD+clip_global_norm": lambda: OPT.SGD(
        0.1, grad_clip=fluid.clip.GradientClipByGlobalNorm(0.05)
    ),
}


def train(make, is_sparse, steps=3):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        ids = fluid.layers.data("ids", [1], dtype="int64")
        target = fluid.layers.data("target", [4])
        emb = fluid.layers.embedding(
            ids,
            size=[12, 4],
            is_sparse=is_sparse,
            param_attr=fluid.ParamAttr(
                name="emb", initializer=fluid.initializer.NumpyArrayInitializer(TABLE)
            ),
        )
        loss = fluid.layers.mean(fluid.layers.square(emb - target))
        make().minimize(loss)
    if is_sparse:
        assert main.global_block().var("emb@GRAD").type == "selected_rows"
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    for _ in range(steps):
        exe.run(main, feed={"ids": IDS, "target": TARGET}, scope=scope)
    return np.array(scope.find_var("emb").value)


@pytest.mark.parametrize("name", list(MAKERS))
def test_sparse_equals_dense(name):
    dense = train(MAKERS[name], False)
    assert np.abs(dense - TABLE).max() > 1e-4
    np.testing.assert_allclose(train(MAKERS[name], True), dense, rtol=1e-5, atol=1e-6)


def test_adagrad_sparse_leaves_unseen_rows_alone():
    got = train(MAKERS["Adagrad"], True)
    unseen = [i for i in range(12) if i not in IDS]
    np.testing.assert_array_equal(got[unseen], TABLE[unseen])

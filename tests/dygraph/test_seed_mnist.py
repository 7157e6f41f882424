"""Seed 004's MNIST model, written as in the seed (only imports changed): debugging printouts,
L2-regularised Adam with PolynomialDecay, and the epoch-0 checkpoint resume check."""

# the seed's code is kept as the seed writes it
# ruff: noqa: UP008, UP032, F841

import contextlib
import importlib.util
import io
import pathlib
import sys

import numpy as np
import pytest
from oar import fluid
from oar.plugins import registries

if not {"conv2d", "pool2d"} <= set(registries().ops.types()):
    pytest.skip("conv2d/pool2d ops are not installed yet", allow_module_level=True)

from oar.fluid.dygraph.nn import Conv2D, Linear, Pool2D

_spec = importlib.util.spec_from_file_location(
    "dygraph_test_models", pathlib.Path(__file__).with_name("_models.py")
)
_models = sys.modules.setdefault("dygraph_test_models", importlib.util.module_from_spec(_spec))
_spec.loader.exec_module(_models)


# --- the seed's model, verbatim -------------------------------------------------------------------
class MNIST(fluid.dygraph.Layer):
    def __init__(self):
        super(MNIST, self).__init__()
        self.conv1 = Conv2D(
            num_channels=1, num_filters=20, filter_size=5, stride=1, padding=2, act="relu"
        )
        self.pool1 = Pool2D(pool_size=2, pool_stride=2, pool_type="max")
        self.conv2 = Conv2D(
            num_channels=20, num_filters=20, filter_size=5, stride=1, padding=2, act="relu"
        )
        self.pool2 = Pool2D(pool_size=2, pool_stride=2, pool_type="max")
        self.fc = Linear(input_dim=980, output_dim=10, act="softmax")

    def forward(self, inputs, label=None, check_shape=False, check_content=False):
        outputs1 = self.conv1(inputs)
        outputs2 = self.pool1(outputs1)
        outputs3 = self.conv2(outputs2)
        outputs4 = self.pool2(outputs3)
        _outputs4 = fluid.layers.reshape(outputs4, [outputs4.shape[0], -1])
        outputs5 = self.fc(_outputs4)
        if check_shape:
            print("\n########## print network layer's superparams ##############")
            print(
                "conv1-- kernel_size:{}, padding:{}, stride:{}".format(
                    self.conv1.weight.shape, self.conv1._padding, self.conv1._stride
                )
            )
            print(
                "conv2-- kernel_size:{}, padding:{}, stride:{}".format(
                    self.conv2.weight.shape, self.conv2._padding, self.conv2._stride
                )
            )
            print(
                "pool1-- pool_type:{}, pool_size:{}, pool_stride:{}".format(
                    self.pool1._pool_type, self.pool1._pool_size, self.pool1._pool_stride
                )
            )
            print(
                "pool2-- pool_type:{}, poo2_size:{}, pool_stride:{}".format(
                    self.pool2._pool_type, self.pool2._pool_size, self.pool2._pool_stride
                )
            )
            print(
                "fc-- weight_size:{}, bias_size_{}, activation:{}".format(
                    self.fc.weight.shape, self.fc.bias.shape, self.fc._act
                )
            )
            print("\n########## print shape of features of every layer ###############")
            print("inputs_shape: {}".format(inputs.shape))
            print("outputs1_shape: {}".format(outputs1.shape))
            print("outputs2_shape: {}".format(outputs2.shape))
            print("outputs3_shape: {}".format(outputs3.shape))
            print("outputs4_shape: {}".format(outputs4.shape))
            print("outputs5_shape: {}".format(outputs5.shape))
        if check_content:
            print("\n########## print convolution layer's kernel ###############")
            print("conv1 params -- kernel weights:", self.conv1.weight[0][0])
            print("conv2 params -- kernel weights:", self.conv2.weight[0][0])
            idx1 = np.random.randint(0, outputs1.shape[1])
            idx2 = np.random.randint(0, outputs3.shape[1])
            print("\nThe {}th channel of conv1 layer: ".format(idx1), outputs1[0][idx1])
            print("The {}th channel of conv2 layer: ".format(idx2), outputs3[0][idx2])
            print("The output of last layer:", outputs5[0], "\n")
        if label is not None:
            acc = fluid.layers.accuracy(input=outputs5, label=label)
            return outputs5, acc
        else:
            return outputs5


def test_check_shape_and_content_printouts():
    imgs, labels = _models.synthetic_mnist(4)
    buf = io.StringIO()
    with fluid.dygraph.guard(place=fluid.CPUPlace()):
        model = MNIST()
        with contextlib.redirect_stdout(buf):
            _, acc = model(
                fluid.dygraph.to_variable(imgs),
                fluid.dygraph.to_variable(labels),
                check_shape=True,
                check_content=True,
            )
        w00 = model.conv1.weight.numpy()[0][0]
    out = buf.getvalue()
    assert "conv1-- kernel_size:[20, 1, 5, 5], padding:[2, 2], stride:[1, 1]" in out
    assert "conv2-- kernel_size:[20, 20, 5, 5], padding:[2, 2], stride:[1, 1]" in out
    assert "pool1-- pool_type:max, pool_size:[2, 2], pool_stride:[2, 2]" in out
    assert "fc-- weight_size:[980, 10], bias_size_[10], activation:softmax" in out
    for line in (
        "inputs_shape: [4, 1, 28, 28]",
        "outputs1_shape: [4, 20, 28, 28]",
        "outputs2_shape: [4, 20, 14, 14]",
        "outputs3_shape: [4, 20, 14, 14]",
        "outputs4_shape: [4, 20, 7, 7]",
        "outputs5_shape: [4, 10]",
    ):
        assert line in out
    assert "conv1 params -- kernel weights:" in out and "shape: [5, 5]" in out
    # the printed kernel holds the weights' values (compare numbers, not numpy's line wrapping)
    import re

    printed = out.split("conv1 params -- kernel weights:", 1)[1]
    nums = [float(x) for x in re.findall(r"-?\d+\.\d*(?:e[-+]?\d+)?", printed[:2000])]
    assert all(any(abs(n - w) <= 1e-6 + 1e-5 * abs(w) for n in nums) for w in w00[0][:3])
    assert (
        "channel of conv1 layer:" in out and "shape: [28, 28]" in out and "shape: [14, 14]" in out
    )
    assert "The output of last layer:" in out and "shape: [10]" in out
    assert acc.shape == [1]


def _train(epochs, start_epoch=0, state=None, save_after_epoch=None, n=60, bs=20):
    imgs, labels = _models.synthetic_mnist(n, seed=11)
    losses, saved = [], None
    with fluid.dygraph.guard(place=fluid.CPUPlace()):
        model = MNIST()
        if state is not None:
            model.load_dict(state[0])
        model.train()
        total_steps = (n // bs) * epochs
        lr = fluid.dygraph.PolynomialDecay(0.01, total_steps, 0.001)
        optimizer = fluid.optimizer.AdamOptimizer(
            learning_rate=lr,
            regularization=fluid.regularizer.L2Decay(regularization_coeff=0.1),
            parameter_list=model.parameters(),
        )
        if state is not None:
            optimizer.set_dict(state[1])
        for epoch_id in range(start_epoch, epochs):
            for img, lab in _models.batches(imgs, labels, bs):
                image = fluid.dygraph.to_variable(img)
                label = fluid.dygraph.to_variable(lab)
                predict, acc = model(image, label)
                avg_acc = fluid.layers.mean(acc)
                loss = fluid.layers.cross_entropy(predict, label)
                avg_loss = fluid.layers.mean(loss)
                avg_loss.backward()
                optimizer.minimize(avg_loss)
                model.clear_gradients()
                losses.append(avg_loss.numpy())
            if epoch_id == save_after_epoch:
                saved = (
                    {k: v.numpy() for k, v in model.state_dict().items()},
                    {
                        k: (v.numpy() if hasattr(v, "numpy") else dict(v))
                        for k, v in optimizer.state_dict().items()
                    },
                )
    return losses, saved


@pytest.mark.slow
def test_seed_resume_from_epoch0_gives_identical_losses():
    full, state = _train(3, save_after_epoch=0)
    resumed, _ = _train(3, start_epoch=1, state=state)
    assert len(resumed) == len(full) - 3
    for a, b in zip(full[3:], resumed):
        assert np.array_equal(a, b), (a, b)
    assert float(full[-1][0]) < float(full[0][0])

"""Shared models and data for the dygraph tests (a learnable MNIST-shaped task)."""

from __future__ import annotations

import numpy as np
from oar import fluid
from oar.fluid.dygraph.nn import Linear


def synthetic_mnist(n: int, seed: int = 0) -> tuple:
    """[n, 1, 28, 28] float32 images whose class (0-9) is a bright 7x7 patch's position, plus noise."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 10, n)
    imgs = rng.normal(0.0, 0.3, (n, 1, 28, 28)).astype("float32")
    for i, c in enumerate(labels):
        r, col = divmod(int(c), 4)
        imgs[i, 0, r * 7 + 2 : r * 7 + 9, col * 7 : col * 7 + 7] += 1.0
    return imgs, labels.reshape(-1, 1).astype("int64")


def batches(imgs, labels, bs):
    for i in range(0, len(imgs), bs):
        yield imgs[i : i + bs], labels[i : i + bs]


class MLP(fluid.dygraph.Layer):
    def __init__(self):
        super().__init__()
        self.fc1 = Linear(input_dim=784, output_dim=64, act="relu")
        self.fc2 = Linear(input_dim=64, output_dim=10, act="softmax")

    def forward(self, inputs, label=None):
        x = fluid.layers.reshape(inputs, [inputs.shape[0], 784])
        x = self.fc2(self.fc1(x))
        if label is not None:
            return x, fluid.layers.accuracy(input=x, label=label)
        return x


def train_step(model, optimizer, img, lab):
    image = fluid.dygraph.to_variable(img)
    label = fluid.dygraph.to_variable(lab)
    predict, acc = model(image, label)
    loss = fluid.layers.cross_entropy(predict, label)
    avg_loss = fluid.layers.mean(loss)
    avg_loss.backward()
    optimizer.minimize(avg_loss)
    model.clear_gradients()
    return avg_loss.numpy(), acc.numpy()

"""CIFAR-10 / CIFAR-100 (``paddle.dataset.cifar``).

The upstream ``cifar-*-python.tar.gz`` holds pickled batches (``data``: uint8
rows of 3072 values, ``labels`` / ``fine_labels``). Readers yield
``(float32[3072] in [0, 1], int label)``.
"""

from __future__ import annotations

import pickle
import tarfile

import numpy as np

from oar_data.dataset.common import DatasetError, download

URL_PREFIX = "https://dataset.bj.bcebos.com/cifar/"
CIFAR10_URL = URL_PREFIX + "cifar-10-python.tar.gz"
CIFAR10_MD5 = "c58f30108f718f92721af3b95e74349a"
CIFAR100_URL = URL_PREFIX + "cifar-100-python.tar.gz"
CIFAR100_MD5 = "eb9058c3a382ffc7106e4002c42a8d85"


def reader_creator(filename: str, sub_name: str, cycle: bool = False):
    """Samples of every batch file in the tar whose name contains ``sub_name``."""

    def read_batch(batch: dict):
        data = batch.get(b"data", batch.get("data"))
        labels = batch.get(b"labels", batch.get("labels"))
        if labels is None:
            labels = batch.get(b"fine_labels", batch.get("fine_labels"))
        if data is None or labels is None:
            raise DatasetError(f"{filename}: a batch lacks 'data' or 'labels'")
        data = np.asarray(data)
        if len(data) != len(labels):
            raise DatasetError(
                f"{filename}: a batch has {len(data)} images and {len(labels)} labels"
            )
        scaled = data.astype(np.float32) / 255.0
        for sample, label in zip(scaled, labels):
            yield sample, int(label)

    def reader():
        while True:
            with tarfile.open(filename, mode="r") as f:
                names = sorted(m.name for m in f if sub_name in m.name and m.isfile())
                for name in names:
                    batch = pickle.load(f.extractfile(name), encoding="bytes")
                    yield from read_batch(batch)
            if not cycle:
                break

    return reader


def train100():
    return reader_creator(download(CIFAR100_URL, "cifar", CIFAR100_MD5), "train")


def test100():
    return reader_creator(download(CIFAR100_URL, "cifar", CIFAR100_MD5), "test")


def train10(cycle: bool = False):
    return reader_creator(download(CIFAR10_URL, "cifar", CIFAR10_MD5), "data_batch", cycle=cycle)


def test10(cycle: bool = False):
    return reader_creator(download(CIFAR10_URL, "cifar", CIFAR10_MD5), "test_batch", cycle=cycle)


def fetch() -> None:
    download(CIFAR10_URL, "cifar", CIFAR10_MD5)
    download(CIFAR100_URL, "cifar", CIFAR100_MD5)

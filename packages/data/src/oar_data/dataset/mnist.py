"""MNIST handwritten digits (``paddle.dataset.mnist``).

``train()`` / ``test()`` return readers of ``(image, label)``: a float32
vector of 784 pixels scaled to [-1, 1] and an int label, parsed from the
upstream idx gzip files.
"""

from __future__ import annotations

import gzip
import struct

import numpy as np

from oar_data.dataset.common import DatasetError, download

URL_PREFIX = "https://dataset.bj.bcebos.com/mnist/"
TEST_IMAGE_URL = URL_PREFIX + "t10k-images-idx3-ubyte.gz"
TEST_IMAGE_MD5 = "9fb629c4189551a2d022fa330f9573f3"
TEST_LABEL_URL = URL_PREFIX + "t10k-labels-idx1-ubyte.gz"
TEST_LABEL_MD5 = "ec29112dd5afa0611ce80d1b7f02629c"
TRAIN_IMAGE_URL = URL_PREFIX + "train-images-idx3-ubyte.gz"
TRAIN_IMAGE_MD5 = "f68b3c2dcbeaaa9fbdd348bbdeb94873"
TRAIN_LABEL_URL = URL_PREFIX + "train-labels-idx1-ubyte.gz"
TRAIN_LABEL_MD5 = "d53e105ee54ea40749a09fcbcd1e9432"

IMAGE_MAGIC = 2051
LABEL_MAGIC = 2049


def read_idx_images(path: str) -> np.ndarray:
    """An idx3 gzip file as a (n, rows*cols) uint8 array."""
    with gzip.open(path, "rb") as f:
        head = f.read(16)
        if len(head) < 16:
            raise DatasetError(f"{path}: too short for an idx image file header")
        magic, n, rows, cols = struct.unpack(">IIII", head)
        if magic != IMAGE_MAGIC:
            raise DatasetError(
                f"{path}: not an idx image file (magic {magic}, expected {IMAGE_MAGIC})"
            )
        data = np.frombuffer(f.read(), dtype=np.uint8)
    if data.size != n * rows * cols:
        raise DatasetError(
            f"{path}: header says {n} images of {rows}x{cols}, file holds {data.size} bytes"
        )
    return data.reshape(n, rows * cols)


def read_idx_labels(path: str) -> np.ndarray:
    """An idx1 gzip file as an int64 array of labels."""
    with gzip.open(path, "rb") as f:
        head = f.read(8)
        if len(head) < 8:
            raise DatasetError(f"{path}: too short for an idx label file header")
        magic, n = struct.unpack(">II", head)
        if magic != LABEL_MAGIC:
            raise DatasetError(
                f"{path}: not an idx label file (magic {magic}, expected {LABEL_MAGIC})"
            )
        data = np.frombuffer(f.read(), dtype=np.uint8)
    if data.size != n:
        raise DatasetError(f"{path}: header says {n} labels, file holds {data.size}")
    return data.astype(np.int64)


def reader_creator(image_filename: str, label_filename: str, buffer_size: int = 100):
    """A reader over one pair of idx files (``buffer_size`` kept for Paddle's signature)."""

    def reader():
        images = read_idx_images(image_filename)
        labels = read_idx_labels(label_filename)
        if len(images) != len(labels):
            raise DatasetError(
                f"{image_filename} has {len(images)} images but {label_filename} "
                f"has {len(labels)} labels"
            )
        scaled = images.astype(np.float32) / 255.0 * 2.0 - 1.0
        for i in range(len(labels)):
            yield scaled[i], int(labels[i])

    return reader


def train():
    """Reader of the 60,000 training samples ``(784 float32 in [-1, 1], int label)``."""
    return reader_creator(
        download(TRAIN_IMAGE_URL, "mnist", TRAIN_IMAGE_MD5),
        download(TRAIN_LABEL_URL, "mnist", TRAIN_LABEL_MD5),
        100,
    )


def test():
    """Reader of the 10,000 test samples ``(784 float32 in [-1, 1], int label)``."""
    return reader_creator(
        download(TEST_IMAGE_URL, "mnist", TEST_IMAGE_MD5),
        download(TEST_LABEL_URL, "mnist", TEST_LABEL_MD5),
        100,
    )


def fetch() -> None:
    """Download all four files into the cache."""
    for url, md5 in (
        (TRAIN_IMAGE_URL, TRAIN_IMAGE_MD5),
        (TRAIN_LABEL_URL, TRAIN_LABEL_MD5),
        (TEST_IMAGE_URL, TEST_IMAGE_MD5),
        (TEST_LABEL_URL, TEST_LABEL_MD5),
    ):
        download(url, "mnist", md5)

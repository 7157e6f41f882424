"""UCI Boston housing prices (``paddle.dataset.uci_housing``).

``housing.data`` is a whitespace table of 14 columns; the 13 features are
centred on their mean and divided by their range (over the whole file), then
the first 80% of rows are the training set and the rest the test set.
Readers yield ``(features float64[13], price float64[1])`` as Paddle does.
"""

from __future__ import annotations

import numpy as np

from oar_data.dataset.common import DatasetError, download

URL = "http://paddlemodels.bj.bcebos.com/uci_housing/housing.data"
MD5 = "d4accdce7a25600298819f8e28e8d593"

feature_names = [
    "CRIM",
    "ZN",
    "INDUS",
    "CHAS",
    "NOX",
    "RM",
    "AGE",
    "DIS",
    "RAD",
    "TAX",
    "PTRATIO",
    "B",
    "LSTAT",
]

UCI_TRAIN_DATA = None
UCI_TEST_DATA = None


def load_data(filename: str, feature_num: int = 14, ratio: float = 0.8) -> None:
    """Parse, normalise and split ``filename`` into ``UCI_TRAIN_DATA`` / ``UCI_TEST_DATA``."""
    global UCI_TRAIN_DATA, UCI_TEST_DATA
    raw = np.array(open(filename).read().split(), dtype=np.float64) if filename else None
    if raw is None or raw.size == 0 or raw.size % feature_num:
        size = 0 if raw is None else raw.size
        raise DatasetError(
            f"{filename}: expected rows of {feature_num} numbers, found {size} numbers"
        )
    data = raw.reshape(-1, feature_num)
    maximums, minimums = data.max(axis=0), data.min(axis=0)
    avgs = data.sum(axis=0) / data.shape[0]
    span = maximums[: feature_num - 1] - minimums[: feature_num - 1]
    span = np.where(span == 0, 1.0, span)
    data[:, : feature_num - 1] = (data[:, : feature_num - 1] - avgs[: feature_num - 1]) / span
    offset = int(data.shape[0] * ratio)
    UCI_TRAIN_DATA = data[:offset]
    UCI_TEST_DATA = data[offset:]


def _reader(part: str):
    load_data(download(URL, "uci_housing", MD5))
    rows = UCI_TRAIN_DATA if part == "train" else UCI_TEST_DATA

    def reader():
        for d in rows:
            yield d[:-1], d[-1:]

    return reader


def train():
    """Reader of the training rows ``(13 normalised features, [price])``."""
    return _reader("train")


def test():
    """Reader of the test rows ``(13 normalised features, [price])``."""
    return _reader("test")


def fetch() -> None:
    download(URL, "uci_housing", MD5)

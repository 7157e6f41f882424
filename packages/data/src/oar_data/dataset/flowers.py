"""Oxford 102 Category Flowers (``paddle.dataset.flowers``).

Reads ``102flowers.tgz`` (``jpg/image_00001.jpg``...), ``imagelabels.mat``
(labels 1..102) and ``setid.mat`` with scipy. As Paddle, ``train`` reads the
``tstid`` split (the largest), ``test`` the ``trnid`` split and ``valid`` the
``valid`` split, in archive order; labels are 0-based. The default mapper
decodes the image (BGR), applies ``image.simple_transform(im, 256, 224,
is_train, mean=[103.94, 116.78, 123.68])`` and flattens it to 150528 float32
values. Images are read straight from the archive (Paddle first re-packs them
into pickled batch files); the mapper runs in the reading thread, or in
``xmap_readers`` threads with ``use_xmap``.
"""

from __future__ import annotations

import functools
import itertools
import tarfile
from collections.abc import Callable, Iterator

import numpy as np

from oar_data.dataset import image
from oar_data.dataset.common import download

DATA_URL = "http://paddlemodels.bj.bcebos.com/flowers/102flowers.tgz"
LABEL_URL = "http://paddlemodels.bj.bcebos.com/flowers/imagelabels.mat"
SETID_URL = "http://paddlemodels.bj.bcebos.com/flowers/setid.mat"
DATA_MD5 = "52808999861908f626f3c1f4e79d11fa"
LABEL_MD5 = "e0620be6f572b9609742df49c70aed4d"
SETID_MD5 = "a5357ecc9cb78c4bef273ce3793fc85c"
# Paddle trains on the large 'tstid' split and tests on 'trnid'
TRAIN_FLAG = "tstid"
TEST_FLAG = "trnid"
VALID_FLAG = "valid"
MEAN = [103.94, 116.78, 123.68]

__all__ = ["train", "test", "valid", "fetch"]


def default_mapper(is_train: bool, sample: tuple) -> tuple:
    """``(encoded image bytes, label)`` -> ``(flattened float32 CHW image, label)``."""
    img, label = sample
    im = image.load_image_bytes(img)
    im = image.simple_transform(im, 256, 224, is_train, mean=MEAN)
    return im.flatten().astype("float32"), label


train_mapper = functools.partial(default_mapper, True)
test_mapper = functools.partial(default_mapper, False)


def _loadmat(path: str) -> dict:
    try:
        import scipy.io
    except ImportError:
        raise ImportError(
            "oar.dataset.flowers reads .mat files with scipy: pip install scipy"
        ) from None
    return scipy.io.loadmat(path)


def reader_creator(
    data_file: str,
    label_file: str,
    setid_file: str,
    dataset_name: str,
    mapper: Callable,
    buffered_size: int = 1024,
    use_xmap: bool = True,
    cycle: bool = False,
) -> Callable:
    labels = np.asarray(_loadmat(label_file)["labels"]).ravel()
    ids = np.asarray(_loadmat(setid_file)[dataset_name]).ravel()
    wanted = {f"jpg/image_{int(i):05d}.jpg": int(labels[int(i) - 1]) - 1 for i in ids}

    def samples() -> Iterator[tuple]:
        with tarfile.open(data_file) as tar:
            for member in tar:
                label = wanted.get(member.name)
                if label is not None:
                    yield tar.extractfile(member).read(), label  # type: ignore[union-attr]

    def reader() -> Iterator[tuple]:
        for _ in itertools.count() if cycle else range(1):
            if use_xmap:
                from oar_data.decorators import xmap_readers

                yield from xmap_readers(mapper, samples, 4, buffered_size, order=True)()
            else:
                for sample in samples():
                    yield mapper(sample)

    return reader


def _reader(
    flag: str, mapper: Callable, buffered_size: int, use_xmap: bool, cycle: bool
) -> Callable:
    return reader_creator(
        download(DATA_URL, "flowers", DATA_MD5),
        download(LABEL_URL, "flowers", LABEL_MD5),
        download(SETID_URL, "flowers", SETID_MD5),
        flag,
        mapper,
        buffered_size,
        use_xmap,
        cycle,
    )


def train(mapper: Callable = train_mapper, buffered_size: int = 1024, use_xmap: bool = True, cycle: bool = False) -> Callable:  # fmt: skip
    return _reader(TRAIN_FLAG, mapper, buffered_size, use_xmap, cycle)


def test(mapper: Callable = test_mapper, buffered_size: int = 1024, use_xmap: bool = True, cycle: bool = False) -> Callable:  # fmt: skip
    return _reader(TEST_FLAG, mapper, buffered_size, use_xmap, cycle)


def valid(
    mapper: Callable = test_mapper, buffered_size: int = 1024, use_xmap: bool = True
) -> Callable:
    return _reader(VALID_FLAG, mapper, buffered_size, use_xmap, False)


def fetch() -> None:
    download(DATA_URL, "flowers", DATA_MD5)
    download(LABEL_URL, "flowers", LABEL_MD5)
    download(SETID_URL, "flowers", SETID_MD5)

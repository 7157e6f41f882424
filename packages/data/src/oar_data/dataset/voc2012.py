"""PASCAL VOC 2012 semantic segmentation (``paddle.dataset.voc2012``).

Reads ``VOCtrainval_11-May-2012.tar`` directly: the names listed in
``ImageSets/Segmentation/<set>.txt``, their ``JPEGImages/<name>.jpg`` and
``SegmentationClass/<name>.png``. Samples are ``(image, label)``: the image
``H x W x 3`` uint8 in BGR order (as ``oar.dataset.image``), the label
``H x W`` uint8 class ids (the PNG's palette indices; 255 marks borders).
``train`` reads the ``trainval`` set, ``test`` the ``train`` set and ``val``
the ``val`` set, as Paddle does. (Fluid 1.8.5's reader fails on Python 3: it
formats the names as bytes.)
"""

from __future__ import annotations

import io
import tarfile
from collections.abc import Callable, Iterator

import numpy as np

from oar_data.dataset.common import download
from oar_data.dataset.image import load_image_bytes

VOC_URL = "http://host.robots.ox.ac.uk/pascal/VOC/voc2012/VOCtrainval_11-May-2012.tar"
VOC_MD5 = "6cd6e144f989b92b3379bac3b3de84fd"
SET_FILE = "VOCdevkit/VOC2012/ImageSets/Segmentation/{}.txt"
DATA_FILE = "VOCdevkit/VOC2012/JPEGImages/{}.jpg"
LABEL_FILE = "VOCdevkit/VOC2012/SegmentationClass/{}.png"
CACHE_DIR = "voc2012"

__all__ = ["train", "test", "val"]


def _label(data: bytes) -> np.ndarray:
    from PIL import Image

    with Image.open(io.BytesIO(data)) as img:
        if img.mode not in ("P", "L"):
            img = img.convert("L")
        return np.asarray(img, dtype=np.uint8)


def reader_creator(filename: str, sub_name: str) -> Callable:
    def reader() -> Iterator[tuple]:
        with tarfile.open(filename) as tar:
            members = {m.name: m for m in tar.getmembers()}

            def read(name: str) -> bytes:
                if name not in members:
                    raise ValueError(f"voc2012: {name} is missing from {filename}")
                return tar.extractfile(members[name]).read()  # type: ignore[union-attr]

            for line in read(SET_FILE.format(sub_name)).decode().splitlines():
                name = line.strip()
                if name:
                    image = load_image_bytes(read(DATA_FILE.format(name)))
                    yield image, _label(read(LABEL_FILE.format(name)))

    return reader


def _tar() -> str:
    return download(VOC_URL, CACHE_DIR, VOC_MD5)


def train() -> Callable:
    return reader_creator(_tar(), "trainval")


def test() -> Callable:
    return reader_creator(_tar(), "train")


def val() -> Callable:
    return reader_creator(_tar(), "val")

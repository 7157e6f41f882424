"""Image helpers of ``paddle.dataset.image``: load, resize_short, crops, flip, to_chw, transforms.

Images are numpy arrays in Paddle's layout: ``H x W x C`` with channels in BGR
order (as OpenCV, which Fluid uses, decodes them), ``H x W`` for grayscale.
Decoding and resizing use Pillow (bicubic, as Fluid's ``cv2.INTER_CUBIC``;
pixel values may differ from OpenCV's by rounding).
"""

from __future__ import annotations

import io
import pickle
import tarfile
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "load_image_bytes",
    "load_image",
    "resize_short",
    "to_chw",
    "center_crop",
    "random_crop",
    "left_right_flip",
    "simple_transform",
    "load_and_transform",
    "batch_images_from_tar",
]


def _pil() -> Any:
    try:
        from PIL import Image
    except ImportError as exc:  # pragma: no cover - Pillow is a dependency of most installs
        raise ImportError("oar.dataset.image needs Pillow: pip install Pillow") from exc
    return Image


def _from_pil(img: Any, is_color: bool) -> np.ndarray:
    if is_color:
        arr = np.asarray(img.convert("RGB"))
        return np.ascontiguousarray(arr[:, :, ::-1])  # BGR, as OpenCV
    return np.asarray(img.convert("L"))


def load_image_bytes(bytes: bytes, is_color: bool = True) -> np.ndarray:
    """Decode an encoded image (JPEG, PNG...) to ``H x W x 3`` BGR (or ``H x W`` gray)."""
    return _from_pil(_pil().open(io.BytesIO(bytes)), is_color)


def load_image(file: str, is_color: bool = True) -> np.ndarray:
    """Read and decode an image file (see :func:`load_image_bytes`)."""
    with _pil().open(file) as img:
        return _from_pil(img, is_color)


def resize_short(im: np.ndarray, size: int) -> np.ndarray:
    """Resize so the shorter edge is ``size`` (the longer edge keeps the aspect ratio)."""
    h, w = im.shape[:2]
    if h > w:
        h_new, w_new = size * h // w, size
    else:
        h_new, w_new = size, size * w // h
    Image = _pil()
    if im.ndim == 3:
        resized = Image.fromarray(np.ascontiguousarray(im[:, :, ::-1])).resize(
            (w_new, h_new), Image.BICUBIC
        )
        return np.ascontiguousarray(np.asarray(resized)[:, :, ::-1])
    return np.asarray(Image.fromarray(im).resize((w_new, h_new), Image.BICUBIC))


def to_chw(im: np.ndarray, order: tuple = (2, 0, 1)) -> np.ndarray:
    """``H x W x C`` -> ``C x H x W`` (or another axis ``order``)."""
    if len(im.shape) != len(order):
        raise ValueError(f"to_chw: order {order} does not fit an image of shape {im.shape}")
    return im.transpose(order)


def center_crop(im: np.ndarray, size: int, is_color: bool = True) -> np.ndarray:
    """The central ``size x size`` window."""
    h, w = im.shape[:2]
    h_start, w_start = (h - size) // 2, (w - size) // 2
    if h_start < 0 or w_start < 0:
        raise ValueError(f"center_crop: size {size} exceeds the image {h}x{w}")
    return im[h_start : h_start + size, w_start : w_start + size]


def random_crop(im: np.ndarray, size: int, is_color: bool = True) -> np.ndarray:
    """A ``size x size`` window at a random position (``np.random``)."""
    h, w = im.shape[:2]
    if size > h or size > w:
        raise ValueError(f"random_crop: size {size} exceeds the image {h}x{w}")
    h_start = np.random.randint(0, h - size + 1)
    w_start = np.random.randint(0, w - size + 1)
    return im[h_start : h_start + size, w_start : w_start + size]


def left_right_flip(im: np.ndarray, is_color: bool = True) -> np.ndarray:
    """Mirror along the width."""
    return im[:, ::-1]


def simple_transform(
    im: np.ndarray,
    resize_size: int,
    crop_size: int,
    is_train: bool,
    is_color: bool = True,
    mean: Any = None,
) -> np.ndarray:
    """resize_short; random crop + random flip (train) or center crop; CHW float32; minus mean.

    ``mean``: per-channel values (length C) or an array of the cropped CHW shape.
    """
    im = resize_short(im, resize_size)
    if is_train:
        im = random_crop(im, crop_size, is_color)
        if np.random.randint(2) == 0:
            im = left_right_flip(im, is_color)
    else:
        im = center_crop(im, crop_size, is_color)
    if im.ndim == 3:
        im = to_chw(im)
    im = im.astype("float32")
    if mean is not None:
        mean = np.asarray(mean, dtype=np.float32)
        if mean.ndim == 1 and im.ndim == 3:
            mean = mean[:, np.newaxis, np.newaxis]
        im -= mean
    return im


def load_and_transform(
    filename: str,
    resize_size: int,
    crop_size: int,
    is_train: bool,
    is_color: bool = True,
    mean: Any = None,
) -> np.ndarray:
    """:func:`load_image` then :func:`simple_transform`."""
    return simple_transform(
        load_image(filename, is_color), resize_size, crop_size, is_train, is_color, mean
    )


def batch_images_from_tar(
    data_file: str, dataset_name: str, img2label: dict, num_per_batch: int = 1024
) -> str:
    """Split the images of a tar archive into pickled batches beside it; returns the file list.

    Each batch file holds ``{"label": [...], "data": [encoded image bytes...]}``; the
    returned text file lists the batch files, one per line (Paddle's layout).
    """
    out_path = Path(data_file).parent / f"{dataset_name}_batch"
    meta_file = out_path / f"{dataset_name}.txt"
    if meta_file.exists():
        return str(meta_file)
    out_path.mkdir(parents=True, exist_ok=True)
    data, labels, names = [], [], []
    with tarfile.open(data_file) as tar:
        for member in tar:
            if member.name in img2label:
                data.append(tar.extractfile(member).read())  # type: ignore[union-attr]
                labels.append(img2label[member.name])
                if len(data) == num_per_batch:
                    names.append(_dump_batch(out_path, len(names), data, labels))
                    data, labels = [], []
    if data:
        names.append(_dump_batch(out_path, len(names), data, labels))
    meta_file.write_text("".join(f"{n}\n" for n in names))
    return str(meta_file)


def _dump_batch(out_path: Path, index: int, data: list, labels: list) -> str:
    path = out_path / f"batch_{index}"
    with open(path, "wb") as f:
        pickle.dump({"label": labels, "data": data}, f, protocol=2)
    return str(path)

"""Kernels of im2sequence: patches gathered by kh x kw strided slices of the padded images."""

from __future__ import annotations

from oar.errors import ShapeError

from oar_kernels_cpu.kernels import FLOATS, array_module, kernel
from oar_kernels_cpu.kernels._sequence import array_of, with_lod

xp = array_module(__name__)


def _grid(x_shape, attrs, sizes) -> list:
    """(out_h, out_w) per image."""
    kh, kw = attrs["kernels"]
    sh, sw = attrs["strides"]
    up, left, down, right = attrs["paddings"]
    n, _, h, w = x_shape
    if sizes is None:
        dims = [(h, w)] * n
    else:
        oh_s, ow_s = attrs["out_stride"]
        dims = [(-(-int(a) // oh_s), -(-int(b) // ow_s)) for a, b in sizes]
    grid = []
    for i, (hi, wi) in enumerate(dims):
        oh, ow = (hi + up + down - kh) // sh + 1, (wi + left + right - kw) // sw + 1
        if oh <= 0 or ow <= 0:
            raise ShapeError(
                f"im2sequence: image {i} of size {hi}x{wi} (padded by {attrs['paddings']}) is "
                f"smaller than the {kh}x{kw} filter"
            )
        if (oh - 1) * sh + kh > h + up + down or (ow - 1) * sw + kw > w + left + right:
            raise ShapeError(f"im2sequence: image {i}'s real size exceeds the tensor's {h}x{w}")
        grid.append((oh, ow))
    return grid


def _sizes(inputs):
    y = inputs.get("Y")
    return None if y is None else array_of(y).reshape(-1, 2).tolist()


def _padded(x, attrs):
    up, left, down, right = attrs["paddings"]
    return xp.pad(x, ((0, 0), (0, 0), (up, down), (left, right)))


@kernel("im2sequence", FLOATS, lod=True)
def im2sequence(inputs, attrs):
    x = array_of(inputs["X"])
    grid = _grid(x.shape, attrs, _sizes(inputs))
    kh, kw = attrs["kernels"]
    sh, sw = attrs["strides"]
    xpad = _padded(x, attrs)
    c = x.shape[1]
    rows = []
    for i, (oh, ow) in enumerate(grid):
        patches = xp.empty((oh, ow, c, kh, kw), dtype=x.dtype)
        for a in range(kh):
            for b in range(kw):
                window = xpad[i, :, a : a + sh * (oh - 1) + 1 : sh, b : b + sw * (ow - 1) + 1 : sw]
                patches[:, :, :, a, b] = window.transpose(1, 2, 0)
        rows.append(patches.reshape(oh * ow, c * kh * kw))
    offsets = [0]
    for oh, ow in grid:
        offsets.append(offsets[-1] + oh * ow)
    return {"Out": with_lod(xp.concatenate(rows), [offsets])}


@kernel("im2sequence_grad", FLOATS, lod=True)
def im2sequence_grad(inputs, attrs):
    x = array_of(inputs["X"])
    grid = _grid(x.shape, attrs, _sizes(inputs))
    dout = array_of(inputs["Out@GRAD"])
    kh, kw = attrs["kernels"]
    sh, sw = attrs["strides"]
    up, left, down, right = attrs["paddings"]
    dpad = xp.zeros(_padded(x, attrs).shape, dtype=x.dtype)
    c = x.shape[1]
    start = 0
    for i, (oh, ow) in enumerate(grid):
        patches = dout[start : start + oh * ow].reshape(oh, ow, c, kh, kw)
        start += oh * ow
        for a in range(kh):
            for b in range(kw):
                window = dpad[i, :, a : a + sh * (oh - 1) + 1 : sh, b : b + sw * (ow - 1) + 1 : sw]
                window += patches[:, :, :, a, b].transpose(2, 0, 1)
    h, w = x.shape[2], x.shape[3]
    return {"X@GRAD": dpad[:, :, up : up + h, left : left + w]}

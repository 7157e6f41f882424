"""numpy kernels of add_position_encoding."""

from __future__ import annotations

from oar_kernels_cpu.kernels import FLOATS, array_module, kernel

xp = array_module(__name__)


def sinusoid(length: int, channels: int, dtype):
    """[length, channels]: sin(p / 10000^(i / (half - 1))) then the cosines, half = channels/2."""
    half = channels // 2
    scale = xp.power(10000.0, xp.arange(half) / max(half - 1, 1)) if half > 1 else xp.ones(half)
    angle = xp.arange(length)[:, None] / scale[None, :]
    return xp.concatenate([xp.sin(angle), xp.cos(angle)], axis=1).astype(dtype)


@kernel("add_position_encoding", FLOATS)
def add_position_encoding(inputs, attrs):
    x = inputs["X"]
    pe = sinusoid(x.shape[1], x.shape[2], x.dtype)
    return {"Out": attrs["alpha"] * x + attrs["beta"] * pe[None]}


@kernel("add_position_encoding_grad", FLOATS)
def add_position_encoding_grad(inputs, attrs):
    return {"X@GRAD": attrs["alpha"] * inputs["Out@GRAD"]}

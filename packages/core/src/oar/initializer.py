"""Initializers: each appends one op to the startup program that fills a parameter.

With ``Program.random_seed`` set, each random initializer gets a seed derived
from the program seed and the parameter's name, so runs repeat exactly while
two parameters of the same shape still differ.
"""

from __future__ import annotations

import contextlib
import math
import zlib
from collections.abc import Iterator
from typing import Any

import numpy as np

from oar.framework.dtypes import convert_dtype


class Initializer:
    """Base class: ``init(var, block)`` appends the filling op to ``block``."""

    def __call__(self, var: Any, block: Any) -> Any:
        raise NotImplementedError

    def _seed(self, var: Any, block: Any, seed: int) -> int:
        if seed:
            return seed
        program = block.program
        base = program.random_seed
        if not base:
            return 0
        # the n-th random initializer of this program: two builds of one network get the
        # same seeds (parameter names differ between builds), distinct parameters differ
        n = program.__dict__.get("_init_draws", 0)
        program.__dict__["_init_draws"] = n + 1
        return (base * 1000003 + zlib.crc32(f"init-{n}".encode())) % (2**31 - 1) or 1

    @staticmethod
    def _fans(var: Any) -> tuple:
        shape = list(var.shape)
        if not shape:
            return 1, 1
        if len(shape) == 1:
            return shape[0], shape[0]
        if len(shape) == 2:
            return shape[0], shape[1]
        receptive = int(np.prod(shape[2:]))
        return shape[1] * receptive, shape[0] * receptive

    def to_dict(self) -> dict:
        return {
            "class": type(self).__name__,
            **{k: v for k, v in vars(self).items() if not k.startswith("_")},
        }


class Constant(Initializer):
    def __init__(self, value: float = 0.0, force_cpu: bool = False) -> None:
        self.value = float(value)
        self.force_cpu = force_cpu

    def __call__(self, var, block):
        return block.append_op(
            "fill_constant",
            outputs={"Out": [var]},
            attrs={
                "shape": list(var.shape),
                "dtype": var.dtype,
                "value": self.value,
                "force_cpu": self.force_cpu,
            },
        )


class Uniform(Initializer):
    """Uniform in ``[low, high)``; with ``diag_num > 0``, the flattened positions
    ``i * (diag_step + 1)`` for ``i < diag_num`` are set to ``diag_val`` (as Fluid)."""

    def __init__(
        self,
        low: float = -1.0,
        high: float = 1.0,
        seed: int = 0,
        diag_num: int = 0,
        diag_step: int = 0,
        diag_val: float = 1.0,
    ) -> None:
        if low > high:
            raise ValueError(f"Uniform initializer: low ({low}) must not exceed high ({high})")
        if diag_num < 0 or diag_step < 0:
            raise ValueError(
                f"Uniform initializer: diag_num and diag_step must be >= 0, "
                f"given {diag_num} and {diag_step}"
            )
        self.low, self.high, self.seed = float(low), float(high), seed
        self.diag_num, self.diag_step, self.diag_val = (
            int(diag_num),
            int(diag_step),
            float(diag_val),
        )

    def __call__(self, var, block):
        return block.append_op(
            "uniform_random",
            outputs={"Out": [var]},
            attrs={
                "shape": list(var.shape),
                "dtype": var.dtype,
                "min": self.low,
                "max": self.high,
                "seed": self._seed(var, block, self.seed),
                "diag_num": getattr(self, "diag_num", 0),
                "diag_step": getattr(self, "diag_step", 0),
                "diag_val": getattr(self, "diag_val", 1.0),
            },
        )


class Normal(Initializer):
    _op = "gaussian_random"

    def __init__(self, loc: float = 0.0, scale: float = 1.0, seed: int = 0) -> None:
        self.loc, self.scale, self.seed = float(loc), float(scale), seed

    def __call__(self, var, block):
        return block.append_op(
            self._op,
            outputs={"Out": [var]},
            attrs={
                "shape": list(var.shape),
                "dtype": var.dtype,
                "mean": self.loc,
                "std": self.scale,
                "seed": self._seed(var, block, self.seed),
            },
        )


class TruncatedNormal(Normal):
    """Normal values redrawn until within two standard deviations."""

    _op = "truncated_gaussian_random"


class Xavier(Initializer):
    """Glorot: uniform in ±sqrt(6/(fan_in+fan_out)), or normal with std sqrt(2/(fan_in+fan_out))."""

    def __init__(
        self,
        uniform: bool = True,
        fan_in: float | None = None,
        fan_out: float | None = None,
        seed: int = 0,
    ) -> None:
        self.uniform, self.fan_in, self.fan_out, self.seed = uniform, fan_in, fan_out, seed

    def __call__(self, var, block):
        fi, fo = self._fans(var)
        fi = self.fan_in if self.fan_in is not None else fi
        fo = self.fan_out if self.fan_out is not None else fo
        return _fan_scaled(self, var, block, fi + fo)


class MSRA(Initializer):
    """He/Kaiming: uniform in ±sqrt(6/fan_in), or normal with std sqrt(2/fan_in)."""

    def __init__(self, uniform: bool = True, fan_in: float | None = None, seed: int = 0) -> None:
        self.uniform, self.fan_in, self.seed = uniform, fan_in, seed

    def __call__(self, var, block):
        fi, _ = self._fans(var)
        fi = self.fan_in if self.fan_in is not None else fi
        return _fan_scaled(self, var, block, fi)


def _fan_scaled(init: Any, var: Any, block: Any, fan: float) -> Any:
    """Uniform in ±sqrt(6/fan) when ``init.uniform``, else normal with std sqrt(2/fan)."""
    seed = init._seed(var, block, init.seed)
    if init.uniform:
        limit = math.sqrt(6.0 / fan)
        return Uniform(-limit, limit, seed)(var, block)
    return Normal(0.0, math.sqrt(2.0 / fan), seed)(var, block)


class NumpyArrayInitializer(Initializer):
    """Fill with a given numpy array (shape must match the parameter)."""

    def __init__(self, value: Any) -> None:
        self.value = np.asarray(value)

    def __call__(self, var, block):
        if list(self.value.shape) != list(var.shape):
            raise ValueError(
                f"NumpyArrayInitializer: array of shape {list(self.value.shape)} cannot initialise "
                f"'{var.name}' of shape {list(var.shape)}"
            )
        dtype = convert_dtype(var.dtype)
        key = {
            "float32": "fp32_values",
            "float16": "fp32_values",
            "float64": "fp64_values",
            "int32": "int32_values",
            "int64": "int64_values",
            "bool": "bool_values",
        }.get(dtype, "int32_values")
        values = self.value.astype(dtype).reshape(-1).tolist()
        return block.append_op(
            "assign_value",
            outputs={"Out": [var]},
            attrs={"shape": list(var.shape), "dtype": dtype, key: values},
        )

    def to_dict(self) -> dict:
        return {"class": "NumpyArrayInitializer", "shape": list(self.value.shape)}


class Bilinear(Initializer):
    """Bilinear-upsampling kernel for a ``conv2d_transpose`` filter of shape [C, C_in, K, K].

    Every (out, in) channel pair gets ``(1 - |x/f - c|) * (1 - |y/f - c|)`` with
    ``f = ceil(K/2)``, ``c = (2f - 1 - f % 2) / (2f)``. Fluid 1.8.5 under Python 3
    computes the row index with true division and so fills a skewed kernel;
    this one is the symmetric bilinear kernel Fluid intends (and 1.5 under Python 2 gave).
    """

    def __call__(self, var, block):
        shape = list(var.shape)
        if len(shape) != 4:
            raise ValueError(
                f"Bilinear initializer: '{var.name}' must be 4-D [C_out, C_in, K, K], given {shape}"
            )
        if shape[2] != shape[3]:
            raise ValueError(
                f"Bilinear initializer: '{var.name}' needs a square kernel, given {shape[2]}x{shape[3]}"
            )
        size = shape[3]
        f = math.ceil(size / 2.0)
        c = (2 * f - 1 - f % 2) / (2.0 * f)
        axis = 1 - np.abs(np.arange(size) / f - c)
        weight = np.broadcast_to(np.outer(axis, axis), shape).astype(np.float32)
        return NumpyArrayInitializer(weight)(var, block)


def force_init_on_cpu() -> bool:
    """Fluid 1.5's flag for initialising on the CPU; oar initialises with numpy, so always False."""
    return _force_init_on_cpu


_force_init_on_cpu = False


@contextlib.contextmanager
def init_on_cpu() -> Iterator[None]:
    """Fluid 1.5's ``with init_on_cpu():`` (accepted; initialisers already run with numpy on the host)."""
    global _force_init_on_cpu
    old, _force_init_on_cpu = _force_init_on_cpu, True
    try:
        yield
    finally:
        _force_init_on_cpu = old


ConstantInitializer = Constant
BilinearInitializer = Bilinear
UniformInitializer = Uniform
NormalInitializer = Normal
TruncatedNormalInitializer = TruncatedNormal
XavierInitializer = Xavier
MSRAInitializer = MSRA

__all__ = [
    "Initializer",
    "Constant",
    "Uniform",
    "Normal",
    "TruncatedNormal",
    "Xavier",
    "MSRA",
    "NumpyArrayInitializer",
    "ConstantInitializer",
    "UniformInitializer",
    "NormalInitializer",
    "TruncatedNormalInitializer",
    "XavierInitializer",
    "MSRAInitializer",
    "Bilinear",
    "BilinearInitializer",
    "force_init_on_cpu",
    "init_on_cpu",
]

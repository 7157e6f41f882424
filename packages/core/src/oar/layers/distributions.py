"""``fluid.layers.distributions``: Normal, Uniform, Categorical, MultivariateNormalDiag.

Parameters are floats, lists, numpy arrays or Variables (float32, as in Fluid); every
method appends ordinary ops, so results are Variables (or eager variables in dygraph).
Deliberate difference: ``Uniform.sample`` draws from ``[low, high)``; Fluid 1.8.5 scales
a ``[-1, 1)`` draw, so its samples can leave the interval.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from oar.errors import ArgumentError, ArgumentTypeError

__all__ = ["Distribution", "Normal", "Uniform", "Categorical", "MultivariateNormalDiag"]


def _L():
    from oar import layers

    return layers


def _param(dist: str, arg: str, value: Any) -> Any:
    from oar.layer_helper import is_variable

    if is_variable(value):
        if str(value.dtype) != "float32":
            return _L().cast(value, "float32")
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float, list, tuple, np.ndarray)):
        raise ArgumentTypeError(
            dist,
            f"{arg} must be a float, list, numpy.ndarray or Variable, given {type(value).__name__}",
        )
    arr = (
        np.asarray(value, dtype="float32").reshape(-1)
        if np.ndim(value) == 0
        else np.asarray(value, "float32")
    )
    return _L().assign(arr)


def _batch_shape(*vs) -> list:
    shape: list = []
    for v in vs:
        s = list(v.shape)
        if len(s) > len(shape):
            shape = s
    return shape


class Distribution:
    """The interface: ``sample``, ``entropy``, ``log_prob``, ``kl_divergence``."""

    def sample(self, shape: Any, seed: int = 0) -> Any:
        raise NotImplementedError(f"{type(self).__name__}.sample")

    def entropy(self) -> Any:
        raise NotImplementedError(f"{type(self).__name__}.entropy")

    def kl_divergence(self, other: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__}.kl_divergence")

    def log_prob(self, value: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__}.log_prob")


def _sample_shape(dist: str, shape: Any) -> list:
    if not isinstance(shape, (list, tuple)) or not all(
        isinstance(d, int) and not isinstance(d, bool) and d > 0 for d in shape
    ):
        raise ArgumentError(dist, f"shape must be a list of positive ints, given {shape!r}")
    return list(shape)


def _other(dist: str, other: Any, cls: type) -> None:
    if not isinstance(other, cls):
        raise ArgumentTypeError(
            dist, f"kl_divergence needs another {cls.__name__}, given {type(other).__name__}"
        )


class Uniform(Distribution):
    """Uniform on ``[low, high)``."""

    def __init__(self, low: Any, high: Any) -> None:
        self.low = _param("Uniform", "low", low)
        self.high = _param("Uniform", "high", high)

    def sample(self, shape: Any, seed: int = 0) -> Any:
        L = _L()
        full = _sample_shape("Uniform", shape) + _batch_shape(self.low, self.high)
        u = L.uniform_random(full, dtype="float32", min=0.0, max=1.0, seed=seed)
        return L.elementwise_add(
            L.elementwise_mul(u, L.elementwise_sub(self.high, self.low)), self.low
        )

    def log_prob(self, value: Any) -> Any:
        L = _L()
        inside = L.elementwise_mul(
            L.cast(L.less_than(self.low, value), "float32"),
            L.cast(L.less_than(value, self.high), "float32"),
        )
        return L.elementwise_sub(L.log(inside), L.log(L.elementwise_sub(self.high, self.low)))

    def entropy(self) -> Any:
        L = _L()
        return L.log(L.elementwise_sub(self.high, self.low))


class Normal(Distribution):
    """Normal with mean ``loc`` and standard deviation ``scale``."""

    def __init__(self, loc: Any, scale: Any) -> None:
        self.loc = _param("Normal", "loc", loc)
        self.scale = _param("Normal", "scale", scale)

    def sample(self, shape: Any, seed: int = 0) -> Any:
        L = _L()
        full = _sample_shape("Normal", shape) + _batch_shape(self.loc, self.scale)
        z = L.gaussian_random(full, mean=0.0, std=1.0, seed=seed, dtype="float32")
        return L.elementwise_add(L.elementwise_mul(z, self.scale), self.loc)

    def entropy(self) -> Any:
        L = _L()
        return L.scale(L.log(self.scale), 1.0, 0.5 + 0.5 * math.log(2 * math.pi))

    def log_prob(self, value: Any) -> Any:
        L = _L()
        var = L.square(self.scale)
        quad = L.elementwise_div(L.square(L.elementwise_sub(value, self.loc)), L.scale(var, 2.0))
        return L.scale(
            L.elementwise_add(quad, L.log(self.scale)), -1.0, -math.log(math.sqrt(2 * math.pi))
        )

    def kl_divergence(self, other: Any) -> Any:
        L = _L()
        _other("Normal", other, Normal)
        ratio = L.square(L.elementwise_div(self.scale, other.scale))
        t1 = L.square(L.elementwise_div(L.elementwise_sub(self.loc, other.loc), other.scale))
        return L.scale(L.elementwise_sub(L.elementwise_add(ratio, t1), L.log(ratio)), 0.5, -0.5)


class Categorical(Distribution):
    """Categorical over the last axis of unnormalised ``logits``."""

    def __init__(self, logits: Any) -> None:
        self.logits = _param("Categorical", "logits", logits)

    def _log_norm(self, logits: Any) -> tuple:
        L = _L()
        shifted = L.elementwise_sub(logits, L.reduce_max(logits, dim=-1, keep_dim=True))
        e = L.exp(shifted)
        z = L.reduce_sum(e, dim=-1, keep_dim=True)
        return shifted, L.elementwise_div(e, z), L.log(z)

    def entropy(self) -> Any:
        L = _L()
        logits, prob, log_z = self._log_norm(self.logits)
        return L.scale(
            L.reduce_sum(
                L.elementwise_mul(prob, L.elementwise_sub(logits, log_z)), dim=-1, keep_dim=True
            ),
            -1.0,
        )

    def kl_divergence(self, other: Any) -> Any:
        L = _L()
        _other("Categorical", other, Categorical)
        a, prob, log_za = self._log_norm(self.logits)
        b, _, log_zb = self._log_norm(other.logits)
        diff = L.elementwise_sub(L.elementwise_sub(a, log_za), L.elementwise_sub(b, log_zb))
        return L.reduce_sum(L.elementwise_mul(prob, diff), dim=-1, keep_dim=True)


class MultivariateNormalDiag(Distribution):
    """Multivariate normal with mean ``loc`` [k] and diagonal matrix ``scale`` [k, k], used as
    the covariance in ``entropy`` and ``kl_divergence`` (Fluid 1.8's formulas)."""

    def __init__(self, loc: Any, scale: Any) -> None:
        self.loc = _param("MultivariateNormalDiag", "loc", loc)
        self.scale = _param("MultivariateNormalDiag", "scale", scale)
        if len(self.scale.shape) != 2:
            raise ArgumentError(
                "MultivariateNormalDiag",
                f"scale must be a [k, k] matrix, given {list(self.scale.shape)}",
            )

    def _diag(self, m: Any) -> Any:
        L = _L()
        k = m.shape[-1]
        return L.reduce_sum(L.elementwise_mul(m, L.assign(np.eye(k, dtype="float32"))), dim=-1)

    def entropy(self) -> Any:
        L = _L()
        k = self.scale.shape[-1]
        log_det = L.reduce_sum(L.log(self._diag(self.scale)), dim=-1, keep_dim=True)
        return L.scale(log_det, 0.5, 0.5 * k * (1.0 + math.log(2 * math.pi)))

    def kl_divergence(self, other: Any) -> Any:
        L = _L()
        _other("MultivariateNormalDiag", other, MultivariateNormalDiag)
        d1, d2 = self._diag(self.scale), self._diag(other.scale)
        tr = L.reduce_sum(L.elementwise_div(d1, d2), dim=-1, keep_dim=True)
        quad = L.reduce_sum(
            L.elementwise_div(L.square(L.elementwise_sub(other.loc, self.loc)), d2),
            dim=-1,
            keep_dim=True,
        )
        log_det = L.reduce_sum(L.elementwise_sub(L.log(d2), L.log(d1)), dim=-1, keep_dim=True)
        k = float(self.scale.shape[-1])
        return L.scale(L.elementwise_add(L.elementwise_add(tr, quad), log_det), 0.5, -0.5 * k)

"""Dygraph loss layers of Fluid 1.8: BCELoss, L1Loss, MSELoss, NLLLoss (``reduction`` is
'mean', 'sum' or 'none'), built from the registered ops so gradients flow as usual."""

from __future__ import annotations

from typing import Any

import numpy as np

from oar.dygraph.layers import Layer
from oar.dygraph.nn import _check_input, _wrap_layers
from oar.dygraph.varbase import VarBase
from oar.errors import ArgumentError

__all__ = ["BCELoss", "L1Loss", "MSELoss", "NLLLoss", "NCE"]


def _reduction(layer: str, reduction: Any) -> str:
    if reduction not in ("mean", "sum", "none"):
        raise ArgumentError(
            layer, f"reduction must be 'mean', 'sum' or 'none', given {reduction!r}"
        )
    return reduction


def _reduce(x: VarBase, reduction: str) -> VarBase:
    from oar import layers

    if reduction == "mean":
        return layers.reduce_mean(x)
    if reduction == "sum":
        return layers.reduce_sum(x)
    return x


def _same_shape(layer: str, input: VarBase, label: VarBase) -> None:
    _check_input(layer, input)
    _check_input(layer, label)
    if list(input.shape) != list(label.shape):
        raise ArgumentError(
            layer,
            f"input {list(input.shape)} and label {list(label.shape)} must have the same shape",
        )


class L1Loss(Layer):
    """``|input - label|``, reduced."""

    def __init__(self, reduction: str = "mean") -> None:
        super().__init__()
        self.reduction = _reduction("L1Loss", reduction)

    def forward(self, input: VarBase, label: VarBase) -> VarBase:
        from oar import layers

        _same_shape("L1Loss", input, label)
        return _reduce(layers.abs(layers.elementwise_sub(input, label)), self.reduction)


class MSELoss(Layer):
    """``(input - label) ** 2``, reduced."""

    def __init__(self, reduction: str = "mean") -> None:
        super().__init__()
        self.reduction = _reduction("MSELoss", reduction)

    def forward(self, input: VarBase, label: VarBase) -> VarBase:
        from oar import layers

        _same_shape("MSELoss", input, label)
        return _reduce(layers.square(layers.elementwise_sub(input, label)), self.reduction)


class BCELoss(Layer):
    """Binary cross-entropy of probabilities ``input`` against ``label`` (each log clamped at
    -100, as in Fluid), times ``weight`` when given, reduced."""

    def __init__(self, weight: Any = None, reduction: str = "mean") -> None:
        super().__init__()
        self.weight = weight
        self.reduction = _reduction("BCELoss", reduction)

    def forward(self, input: VarBase, label: VarBase) -> VarBase:
        from oar import layers

        _same_shape("BCELoss", input, label)
        big = float(np.finfo(np.float32).max)
        log_p = layers.clip(layers.log(input), -100.0, big)
        log_q = layers.clip(layers.log(layers.scale(input, -1.0, 1.0)), -100.0, big)
        pos = layers.elementwise_mul(label, log_p)
        neg = layers.elementwise_mul(layers.scale(label, -1.0, 1.0), log_q)
        out = layers.scale(layers.elementwise_add(pos, neg), -1.0)
        if self.weight is not None:
            out = layers.elementwise_mul(out, self.weight)
        return _reduce(out, self.reduction)


class NLLLoss(Layer):
    """Negative log-likelihood of log-probabilities ``input`` ``[N, C, *d]`` at the class ids
    ``label`` ``[N, *d]``; ids equal to ``ignore_index`` count for nothing, ``weight`` ``[C]``
    weighs the classes, and 'mean' divides by the total weight of the counted ids."""

    def __init__(
        self, weight: Any = None, reduction: str = "mean", ignore_index: int = -100
    ) -> None:
        super().__init__()
        self.weight = weight
        self.reduction = _reduction("NLLLoss", reduction)
        self.ignore_index = int(ignore_index)

    def forward(self, input: VarBase, label: VarBase) -> VarBase:
        from oar import layers
        from oar.dygraph.base import to_variable

        _check_input("NLLLoss", input)
        _check_input("NLLLoss", label)
        shape = list(input.shape)
        if len(shape) < 2 or list(label.shape) != [shape[0]] + shape[2:]:
            raise ArgumentError(
                "NLLLoss",
                f"input must be [N, C, *d] and label [N, *d]; given {shape} and {list(label.shape)}",
            )
        c = shape[1]
        x = input
        if len(shape) > 2:
            x = layers.transpose(x, [0] + list(range(2, len(shape))) + [1])
        x = layers.reshape(x, [-1, c])
        lab = np.asarray(label.numpy()).reshape(-1).astype(np.int64)
        valid = lab != self.ignore_index
        if np.any((lab[valid] < 0) | (lab[valid] >= c)):
            raise ArgumentError("NLLLoss", f"label ids must be in [0, {c}) or ignore_index")
        safe = np.where(valid, lab, 0)
        w = (
            np.ones(c, np.float32)
            if self.weight is None
            else np.asarray(self.weight.numpy()).reshape(-1)
        )
        wsel = (w[safe] * valid).astype(x.numpy().dtype).reshape(-1, 1)
        picked = layers.index_sample(x, to_variable(safe.reshape(-1, 1)))
        loss = layers.scale(layers.elementwise_mul(picked, to_variable(wsel)), -1.0)
        if self.reduction == "none":
            return layers.reshape(loss, [shape[0]] + shape[2:])
        total = layers.reduce_sum(loss)
        if self.reduction == "sum":
            return total
        return layers.scale(total, 1.0 / float(wsel.sum()))


class NCE(Layer):
    """Noise-contrastive estimation: weight [num_total_classes, dim], and bias
    [num_total_classes, 1] only when ``bias_attr`` is given (Fluid 1.8.5's default has none);
    ``forward(input, label, sample_weight=None)`` gives the [N, 1] cost (op ``nce``)."""

    def __init__(
        self,
        num_total_classes,
        dim,
        sample_weight=None,
        param_attr=None,
        bias_attr=None,
        num_neg_samples=None,
        sampler="uniform",
        custom_dist=None,
        seed=0,
        is_sparse=False,
        dtype="float32",
    ) -> None:
        from oar.layers.nce import _SAMPLERS, _neg_samples

        super().__init__()
        for arg, v in (("num_total_classes", num_total_classes), ("dim", dim)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ArgumentError("NCE", f"{arg} must be a positive int, given {v!r}")
        s = _neg_samples("NCE", num_neg_samples)
        if sampler not in _SAMPLERS:
            raise ArgumentError(
                "NCE", f"sampler must be one of {list(_SAMPLERS)}, given {sampler!r}"
            )
        self._custom = None
        if sampler == "custom_dist":
            probs = None if custom_dist is None else np.asarray(custom_dist, "float32").reshape(-1)
            if probs is None or probs.size != num_total_classes:
                raise ArgumentError(
                    "NCE", f"custom_dist must give {num_total_classes} probabilities"
                )
            self._custom = probs
        self._attrs = {
            "num_total_classes": num_total_classes,
            "num_neg_samples": s,
            "sampler": _SAMPLERS[sampler],
            "seed": int(seed),
            "is_sparse": bool(is_sparse),
        }
        self._sample_weight = sample_weight
        self.weight = self.create_parameter([num_total_classes, dim], param_attr, dtype, False)
        # as in Fluid 1.8.5, the bias exists only when bias_attr is given (truthy)
        self.bias = self.create_parameter(
            [num_total_classes, 1], bias_attr if bias_attr else False, dtype, True
        )

    def forward(self, input: VarBase, label: VarBase, sample_weight: Any = None) -> VarBase:
        from oar.dygraph.base import to_variable
        from oar.dygraph.nn import _op

        _check_input("NCE", input)
        _check_input("NCE", label)
        ins = {"Input": [input], "Label": [label], "Weight": [self.weight]}
        if self.bias is not None:
            ins["Bias"] = [self.bias]
        sw = sample_weight if sample_weight is not None else self._sample_weight
        if sw is not None:
            ins["SampleWeight"] = [sw]
        if self._custom is not None:
            ins["CustomDistProbs"] = [to_variable(self._custom)]
        cost, logits, labels = VarBase(None), VarBase(None), VarBase(None)
        _op(
            "nce",
            ins,
            {"Cost": [cost], "SampleLogits": [logits], "SampleLabels": [labels]},
            self._attrs,
        )
        return cost


_wrap_layers(globals(), __all__, __name__)

"""Weight-decay regularizers: they add a decay term to a parameter's gradient.

A regularizer set on a parameter's ParamAttr takes precedence over the
optimizer's ``regularization=`` (seed 002).
"""

from __future__ import annotations

from typing import Any


class WeightDecayRegularizer:
    """Base class: ``append(param, grad, block) -> new grad variable``."""

    def append(self, param: Any, grad: Any, block: Any) -> Any:
        raise NotImplementedError

    def to_dict(self) -> dict:
        return {"class": type(self).__name__, "regularization_coeff": self._coeff}


class L2Decay(WeightDecayRegularizer):
    """grad += coeff * param."""

    def __init__(self, regularization_coeff: float = 0.0) -> None:
        self._coeff = float(regularization_coeff)

    def append(self, param, grad, block):
        decay = block.create_var(name=f"{param.name}@L2DECAY", shape=param.shape, dtype=param.dtype)
        block.append_op("scale", {"X": [param]}, {"Out": [decay]}, {"scale": self._coeff})
        return decay

    def __repr__(self) -> str:
        return f"L2Decay, regularization_coeff={self._coeff:f}"


class L1Decay(WeightDecayRegularizer):
    """grad += coeff * sign(param)."""

    def __init__(self, regularization_coeff: float = 0.0) -> None:
        self._coeff = float(regularization_coeff)

    def append(self, param, grad, block):
        sign = block.create_var(name=f"{param.name}@SIGN", shape=param.shape, dtype=param.dtype)
        block.append_op("sign", {"X": [param]}, {"Out": [sign]})
        decay = block.create_var(name=f"{param.name}@L1DECAY", shape=param.shape, dtype=param.dtype)
        block.append_op("scale", {"X": [sign]}, {"Out": [decay]}, {"scale": self._coeff})
        return decay

    def __repr__(self) -> str:
        return f"L1Decay, regularization_coeff={self._coeff:f}"


L2DecayRegularizer = L2Decay
L1DecayRegularizer = L1Decay


def append_regularization_ops(params_grads: list, regularization: Any = None) -> list:
    """Add each parameter's decay to its gradient (ParamAttr's regularizer wins over the optimizer's)."""
    out = []
    for param, grad in params_grads:
        reg = getattr(param, "regularizer", None) or regularization
        if grad is None or reg is None or not isinstance(reg, WeightDecayRegularizer):
            out.append((param, grad))
            continue
        block = grad.block
        decay = reg.append(param, grad, block)
        if grad.type == "selected_rows":
            grad_dense = block.create_var(
                name=f"{grad.name}@DENSE", shape=param.shape, dtype=param.dtype
            )
            block.append_op("sum", {"X": [grad, decay]}, {"Out": [grad_dense]})
            out.append((param, grad_dense))
            continue
        new_grad = block.create_var(
            name=f"{grad.name}@REGULARIZED", shape=param.shape, dtype=param.dtype
        )
        block.append_op("sum", {"X": [grad, decay]}, {"Out": [new_grad]})
        out.append((param, new_grad))
    return out


__all__ = [
    "WeightDecayRegularizer",
    "L2Decay",
    "L1Decay",
    "L2DecayRegularizer",
    "L1DecayRegularizer",
    "append_regularization_ops",
]

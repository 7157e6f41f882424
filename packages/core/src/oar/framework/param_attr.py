"""ParamAttr: how a layer should create a parameter (name, initializer, lr, regularizer...)."""

from __future__ import annotations

from typing import Any

import attrs


@attrs.define
class ParamAttr:
    """Parameter attributes. Equal ``name``s make layers share one parameter.

    ``learning_rate`` multiplies the optimizer's rate for this parameter;
    ``regularizer`` overrides the optimizer's; ``trainable=False`` freezes it.
    """

    name: str | None = None
    initializer: Any = None
    learning_rate: float = 1.0
    regularizer: Any = None
    trainable: bool = True
    do_model_average: bool = True
    # Fluid 1.5's per-parameter clip; keyword-only so the positional order is 1.8's
    gradient_clip: Any = attrs.field(default=None, kw_only=True)

    def __attrs_post_init__(self):
        if self.name is not None and not isinstance(self.name, str):
            raise TypeError(f"ParamAttr: name must be a str, given {type(self.name).__name__}")
        if not isinstance(self.learning_rate, (int, float)):
            raise TypeError(
                f"ParamAttr: learning_rate must be a number, given {type(self.learning_rate).__name__}"
            )

    @staticmethod
    def _to_attr(arg: Any) -> ParamAttr | bool | list:
        """Coerce what users pass as ``param_attr``/``bias_attr`` (Fluid's rules).

        None -> default ParamAttr; str -> named; Initializer -> with it;
        WeightDecayRegularizer -> with it; False -> no parameter; a list -> each.
        """
        from oar.initializer import Initializer
        from oar.regularizer import WeightDecayRegularizer

        if arg is None:
            return ParamAttr()
        if isinstance(arg, (list, tuple)):
            return [ParamAttr._to_attr(a) for a in arg]
        if isinstance(arg, ParamAttr):
            return arg
        if isinstance(arg, str):
            return ParamAttr(name=arg)
        if isinstance(arg, Initializer):
            return ParamAttr(initializer=arg)
        if isinstance(arg, WeightDecayRegularizer):
            return ParamAttr(regularizer=arg)
        if isinstance(arg, bool):
            return ParamAttr() if arg else False
        raise TypeError(
            f"param_attr/bias_attr must be None, a str, a ParamAttr, an Initializer, a regularizer "
            f"or a bool, given {type(arg).__name__}"
        )

    def _to_kwargs(self, with_initializer: bool = False) -> dict:
        kw = {
            "name": self.name,
            "optimize_attr": {"learning_rate": float(self.learning_rate)},
            "regularizer": self.regularizer,
            "trainable": self.trainable,
            "gradient_clip_attr": self.gradient_clip,
            "do_model_average": self.do_model_average,
        }
        if with_initializer:
            kw["initializer"] = self.initializer
        return kw


@attrs.define(init=False)
class WeightNormParamAttr(ParamAttr):
    """Weight normalisation (``w = g * v / ||v||``) along ``dim``, Fluid 1.8's argument order
    (static graphs: see ``oar.weight_norm``; in dygraph a plain parameter)."""

    dim: int | None = None

    def __init__(
        self,
        dim: int | None = None,
        name: str | None = None,
        initializer: Any = None,
        learning_rate: float = 1.0,
        regularizer: Any = None,
        trainable: bool = True,
        do_model_average: bool = False,
        *,
        gradient_clip: Any = None,
    ) -> None:
        self.__attrs_init__(  # type: ignore[attr-defined]
            name,
            initializer,
            learning_rate,
            regularizer,
            trainable,
            do_model_average,
            gradient_clip=gradient_clip,
            dim=dim,
        )

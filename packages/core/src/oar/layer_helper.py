"""LayerHelper: the one path through which every layer creates variables, parameters and ops.

It hands every request to the current builder (``oar.framework.builder``): in
static mode that appends to the default main program (and parameter
initialisers to the startup program); under ``fluid.dygraph.guard()`` the eager
builder runs the op at once. One layer function serves both modes, and
nothing here asks which mode it is.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from oar.errors import ArgumentError, ArgumentTypeError, ShapeError
from oar.framework import unique_name
from oar.framework.mode import current_builder
from oar.framework.param_attr import ParamAttr, WeightNormParamAttr
from oar.framework.program import default_main_program, default_startup_program
from oar.framework.variable import Variable


def is_variable(x: Any) -> bool:
    """A static Variable or (in dygraph) an eager variable."""
    return isinstance(x, Variable) or current_builder().is_variable(x)


def check_variable(layer: str, arg: str, value: Any, allow_list: bool = False) -> None:
    """Raise a TypeError naming the layer and argument if ``value`` is not a Variable."""
    if allow_list and isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            check_variable(layer, f"{arg}[{i}]", v)
        return
    if not is_variable(value):
        want = "a Variable or a list of Variables" if allow_list else "a Variable"
        raise ArgumentTypeError(
            layer, f"argument '{arg}' must be {want}, given {type(value).__name__}", variable=arg
        )


class LayerHelper:
    def __init__(self, layer_type: str, **kwargs: Any) -> None:
        self.layer_type = layer_type
        self.kwargs = kwargs
        name = kwargs.get("name")
        self.name = name if name is not None else unique_name.generate(layer_type)

    @property
    def main_program(self):
        return default_main_program()

    @property
    def startup_program(self):
        return default_startup_program()

    # --- ops ------------------------------------------------------------------------------------
    def append_op(
        self,
        type: str,
        inputs: dict | None = None,
        outputs: dict | None = None,
        attrs: dict | None = None,
    ) -> Any:
        return current_builder().append_op(
            type, inputs or {}, outputs or {}, attrs or {}, self.layer_type
        )

    # --- variables ----------------------------------------------------------------------------
    def create_variable_for_type_inference(
        self, dtype: Any = None, stop_gradient: bool = False
    ) -> Any:
        return current_builder().create_tmp_variable(self.name, dtype, stop_gradient)

    create_tmp_variable = create_variable_for_type_inference

    def create_variable(self, **kwargs: Any) -> Any:
        return current_builder().create_variable(**kwargs)

    def create_global_variable(self, persistable: bool = False, **kwargs: Any) -> Any:
        return current_builder().create_global_variable(persistable=persistable, **kwargs)

    def set_variable_initializer(self, var: Variable, initializer: Any) -> Any:
        """Give a persistable variable an init op in the startup program (once)."""
        return current_builder().set_variable_initializer(var, initializer)

    def create_parameter(
        self,
        attr: Any,
        shape: Sequence,
        dtype: Any = "float32",
        is_bias: bool = False,
        default_initializer: Any = None,
        stop_gradient: bool = False,
    ) -> Any:
        """A parameter per ``attr`` (None if ``attr`` is False); equal names share one parameter."""
        from oar.initializer import Constant, Xavier

        attr = ParamAttr._to_attr(attr)
        if attr is False:
            return None
        attr = copy.copy(attr)
        shape = [int(d) for d in shape]
        if any(d <= 0 for d in shape):
            raise ShapeError(
                f"parameter shape must be positive, given {shape} "
                f"(are the input's dims known when the layer is built?)",
                layer=self.layer_type,
            )
        if attr.name is None:
            attr.name = unique_name.generate(f"{self.name}.{'b' if is_bias else 'w'}")
        init = attr.initializer or default_initializer or (Constant(0.0) if is_bias else Xavier())
        builder = current_builder()
        if isinstance(attr, WeightNormParamAttr) and not builder.eager:
            from oar.weight_norm import weight_normalized

            return weight_normalized(self.layer_type, attr, shape, dtype, init, builder)
        return current_builder().create_parameter(
            self.layer_type, attr, shape, dtype, is_bias, init, stop_gradient
        )

    # --- inputs -------------------------------------------------------------------------------
    def multiple_input(self, input_param_name: str = "input") -> list:
        inputs = self.kwargs.get(input_param_name, [])
        if not isinstance(inputs, (list, tuple)):
            inputs = [inputs]
        check_variable(self.layer_type, input_param_name, list(inputs), allow_list=True)
        return list(inputs)

    def input(self, input_param_name: str = "input") -> Any:
        inputs = self.multiple_input(input_param_name)
        if len(inputs) != 1:
            raise ArgumentTypeError(
                self.layer_type, f"'{input_param_name}' must be one Variable, given {len(inputs)}"
            )
        return inputs[0]

    def input_dtype(self, input_param_name: str = "input") -> str:
        dtypes = {v.dtype for v in self.multiple_input(input_param_name)}
        if len(dtypes) > 1:
            raise ArgumentTypeError(
                self.layer_type,
                f"inputs in '{input_param_name}' have different dtypes {sorted(dtypes)}",
            )
        return dtypes.pop()

    def param_attr_list(self, length: int) -> list:
        attr = ParamAttr._to_attr(self.kwargs.get("param_attr"))
        if isinstance(attr, list):
            if len(attr) != length:
                raise ArgumentError(
                    self.layer_type, f"{len(attr)} param_attrs given for {length} inputs"
                )
            return attr
        if length == 1:
            return [attr]
        if attr is not False and attr.name is not None:
            raise ArgumentError(
                self.layer_type, f"one named param_attr cannot serve {length} inputs"
            )
        return [copy.copy(attr) for _ in range(length)]

    # --- common tails: bias and activation ----------------------------------------------------
    def append_bias_op(self, input_var: Any, dim_start: int = 1, dim_end: int | None = None) -> Any:
        size = list(input_var.shape[dim_start:dim_end])
        bias_attr = self.kwargs.get("bias_attr")
        b = self.create_parameter(bias_attr, size, input_var.dtype, is_bias=True)
        if b is None:
            return input_var
        out = self.create_variable_for_type_inference(input_var.dtype)
        self.append_op(
            "elementwise_add", {"X": [input_var], "Y": [b]}, {"Out": [out]}, {"axis": dim_start}
        )
        return out

    def append_activation(self, input_var: Any, act: Any = None) -> Any:
        act = self.kwargs.get("act") if act is None else act
        if act is None:
            return input_var
        attrs: dict = {}
        if isinstance(act, dict):
            attrs = dict(act)
            act = attrs.pop("type")
        check_activation(self.layer_type, act)
        out = self.create_variable_for_type_inference(input_var.dtype)
        self.append_op(act, {"X": [input_var]}, {"Out": [out]}, attrs)
        return out


def check_activation(layer: str, act: Any) -> None:
    """Refuse an ``act`` that is not a registered X -> Out activation op."""
    from oar.plugins import registries

    if not isinstance(act, str):
        raise ArgumentTypeError(
            layer, f"act must be a str naming an activation, given {type(act).__name__}"
        )
    ops = registries().ops
    if act in ops and _is_activation(ops.get(act)):
        return
    known = sorted(t for t in ops.types() if _is_activation(ops.get(t)))
    raise ArgumentError(layer, f"unknown activation '{act}'; known activations: {known}")


def _is_activation(d: Any) -> bool:
    return (
        d.input_names == ("X",)
        and d.output_names == ("Out",)
        and d.grad is not None
        and not d.inputs[0].duplicable
        and not d.type.endswith("_grad")
        and d.type not in ("cast", "scale", "mean", "reshape2", "assign")
    )


def type_(exc: Exception) -> type:
    return type(exc)


def _dtype(d: Any) -> str:
    from oar.framework.dtypes import convert_dtype

    return convert_dtype(d)

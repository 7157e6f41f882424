"""LayerHelper: the one path through which every layer creates variables, parameters and ops.

In static mode it appends to the default main program (and parameter
initialisers to the startup program); under ``fluid.dygraph.guard()`` it hands
the same requests to the dygraph tracer, so one layer function serves both.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from oar.errors import OarError, ShapeError, at_user_line
from oar.framework import unique_name
from oar.framework.mode import _dygraph_tracer
from oar.framework.param_attr import ParamAttr
from oar.framework.program import default_main_program, default_startup_program
from oar.framework.variable import Variable


def is_variable(x: Any) -> bool:
    """A static Variable or a dygraph eager variable."""
    tracer = _dygraph_tracer()
    return isinstance(x, Variable) or (tracer is not None and tracer.is_variable(x))


def check_variable(layer: str, arg: str, value: Any, allow_list: bool = False) -> None:
    """Raise a TypeError naming the layer and argument if ``value`` is not a Variable."""
    if allow_list and isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            check_variable(layer, f"{arg}[{i}]", v)
        return
    if not is_variable(value):
        want = "a Variable or a list of Variables" if allow_list else "a Variable"
        raise TypeError(
            f"{layer}: argument '{arg}' must be {want}, given {type(value).__name__}{at_user_line()}"
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
        tracer = _dygraph_tracer()
        if tracer is not None:
            try:
                return tracer.trace_op(type, inputs or {}, outputs or {}, attrs or {})
            except OarError as exc:
                # failure path only: the op's infer_shape says what was wrong, in words
                from oar.dygraph.explain import explain_failure
                from oar.plugins import registries

                try:
                    opdef = registries().ops.get(type)
                    full = tracer.complete_attrs(type, attrs or {})
                except OarError:
                    raise exc from None
                explain_failure(type, opdef, inputs or {}, full)
                raise exc from exc.__cause__
        try:
            return self.main_program.current_block().append_op(type, inputs, outputs, attrs)
        except OarError as exc:
            msg = str(exc)
            if self.layer_type != type and not msg.startswith(f"layer '{self.layer_type}'"):
                raise type_(exc)(f"layer '{self.layer_type}': {msg}") from None
            raise

    # --- variables ----------------------------------------------------------------------------
    def create_variable_for_type_inference(
        self, dtype: Any = None, stop_gradient: bool = False
    ) -> Any:
        tracer = _dygraph_tracer()
        if tracer is not None:
            return tracer.create_variable(dtype=dtype, stop_gradient=stop_gradient)
        return self.main_program.current_block().create_var(
            name=unique_name.generate_with_ignorable_key(f"{self.name}.tmp"),
            dtype=dtype,
            persistable=False,
            stop_gradient=stop_gradient,
        )

    create_tmp_variable = create_variable_for_type_inference

    def create_variable(self, **kwargs: Any) -> Any:
        tracer = _dygraph_tracer()
        if tracer is not None:
            return tracer.create_variable(**kwargs)
        return self.main_program.current_block().create_var(**kwargs)

    def create_global_variable(self, persistable: bool = False, **kwargs: Any) -> Any:
        tracer = _dygraph_tracer()
        if tracer is not None:
            return tracer.create_variable(persistable=persistable, **kwargs)
        return self.main_program.global_block().create_var(persistable=persistable, **kwargs)

    def set_variable_initializer(self, var: Variable, initializer: Any) -> Any:
        """Give a persistable variable an init op in the startup program (once)."""
        tracer = _dygraph_tracer()
        if tracer is not None:
            return tracer.initialize(var, initializer)
        sblock = self.startup_program.global_block()
        if sblock.has_var(var.name):
            return sblock.var(var.name)
        svar = sblock.create_var(
            name=var.name,
            shape=var.shape,
            dtype=var.dtype,
            persistable=True,
            type=var.type,
            lod_level=var.lod_level,
        )
        initializer(svar, sblock)
        return svar

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
                f"layer '{self.layer_type}': parameter shape must be positive, given {shape} "
                f"(are the input's dims known when the layer is built?)"
            )
        if attr.name is None:
            attr.name = unique_name.generate(f"{self.name}.{'b' if is_bias else 'w'}")
        init = attr.initializer or default_initializer or (Constant(0.0) if is_bias else Xavier())
        tracer = _dygraph_tracer()
        if tracer is not None:
            return tracer.create_parameter(attr, shape, dtype, is_bias, init)
        main = self.main_program.global_block()
        existing = main.vars.get(attr.name)
        if existing is not None:
            if list(existing.shape) != shape or existing.dtype != _dtype(dtype):
                raise ShapeError(
                    f"layer '{self.layer_type}': parameter '{attr.name}' is shared by name but this layer "
                    f"needs shape {shape} dtype {_dtype(dtype)}, and it already has shape "
                    f"{list(existing.shape)} dtype {existing.dtype}{at_user_line()}"
                )
            return existing
        kwargs = attr._to_kwargs()
        sblock = self.startup_program.global_block()
        if not sblock.has_var(attr.name):
            sblock.create_parameter(shape=shape, dtype=dtype, initializer=init, **kwargs)
        param = main.create_parameter(shape=shape, dtype=dtype, **kwargs)
        if stop_gradient:
            param.stop_gradient = True
        return param

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
            raise TypeError(
                f"{self.layer_type}: '{input_param_name}' must be one Variable, given {len(inputs)}"
            )
        return inputs[0]

    def input_dtype(self, input_param_name: str = "input") -> str:
        dtypes = {v.dtype for v in self.multiple_input(input_param_name)}
        if len(dtypes) > 1:
            raise TypeError(
                f"{self.layer_type}: inputs in '{input_param_name}' have different dtypes {sorted(dtypes)}"
            )
        return dtypes.pop()

    def param_attr_list(self, length: int) -> list:
        attr = ParamAttr._to_attr(self.kwargs.get("param_attr"))
        if isinstance(attr, list):
            if len(attr) != length:
                raise ValueError(
                    f"{self.layer_type}: {len(attr)} param_attrs given for {length} inputs"
                )
            return attr
        if length == 1:
            return [attr]
        if attr is not False and attr.name is not None:
            raise ValueError(
                f"{self.layer_type}: one named param_attr cannot serve {length} inputs"
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
        raise TypeError(
            f"{layer}: act must be a str naming an activation, given {type(act).__name__}{at_user_line()}"
        )
    ops = registries().ops
    if act in ops and _is_activation(ops.get(act)):
        return
    known = sorted(t for t in ops.types() if _is_activation(ops.get(t)))
    raise ValueError(
        f"{layer}: unknown activation '{act}'; known activations: {known}{at_user_line()}"
    )


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

"""Builders: where layers, operators and optimizers put their ops.

Every layer function, Python operator on a variable and optimizer asks
:func:`oar.framework.mode.current_builder` for the builder of the current
mode and hands it the op: the :class:`StaticBuilder` appends to the default
main program (parameter initialisers to the startup program); the eager
builder (``oar.dygraph.eager_block.EagerBuilder``, installed by
``fluid.dygraph.guard()``) runs the op at once through the tracer. Static code
therefore never branches on the mode and never imports dygraph: what differs
between the modes is a method of the builder.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from typing import Any

from oar.errors import OarError, ShapeError
from oar.framework import unique_name
from oar.framework.dtypes import convert_dtype
from oar.framework.mode import _set_static_builder
from oar.framework.program import default_main_program, default_startup_program
from oar.framework.variable import Variable


class Builder:
    """The operations a mode provides; see :class:`StaticBuilder` for the static meaning of each."""

    eager = False

    # --- variables and ops (layers) -------------------------------------------------------------
    def is_variable(self, x: Any) -> bool:
        raise NotImplementedError

    def append_op(
        self, type: str, inputs: dict, outputs: dict, attrs: dict, layer: str | None = None
    ) -> Any:
        raise NotImplementedError

    def create_tmp_variable(self, prefix: str, dtype: Any, stop_gradient: bool = False) -> Any:
        """A variable for an op's output, named ``<prefix>.tmp_<n>`` where names matter."""
        raise NotImplementedError

    def create_variable(self, **kwargs: Any) -> Any:
        raise NotImplementedError

    def create_global_variable(self, persistable: bool = False, **kwargs: Any) -> Any:
        raise NotImplementedError

    def set_variable_initializer(self, var: Any, initializer: Any) -> Any:
        raise NotImplementedError

    def create_parameter(
        self,
        layer: str,
        attr: Any,
        shape: list,
        dtype: Any,
        is_bias: bool,
        initializer: Any,
        stop_gradient: bool = False,
    ) -> Any:
        raise NotImplementedError

    def check_same_dtype(self, layer: str, args: dict) -> None:
        """Refuse Variables of different dtypes where no op's shape inference will (eager)."""
        return None

    def const(self, value: float, like: Any) -> Any:
        """A one-element variable holding ``value`` in ``like``'s dtype (the ``x + 2`` operand)."""
        raise NotImplementedError

    # --- learning-rate schedules ----------------------------------------------------------------
    def lr_schedule(self, static: Callable[[], Any], eager: tuple) -> Any:
        """``static()`` appends a schedule's ops; ``eager`` = (class name, args, kwargs) of the
        ``fluid.dygraph`` schedule object Fluid returns in dygraph mode."""
        raise NotImplementedError

    # --- optimizers -----------------------------------------------------------------------------
    def gradients(
        self,
        opt: Any,
        loss: Any,
        startup_program: Any,
        parameter_list: Sequence | None,
        no_grad_set: Any,
    ) -> list:
        raise NotImplementedError

    def loss_guard(self, loss: Any, startup_program: Any) -> contextlib.AbstractContextManager:
        """Where an optimizer's ops for ``loss`` go (static: the loss's program)."""
        raise NotImplementedError

    def update_guard(self, program: Any) -> contextlib.AbstractContextManager:
        raise NotImplementedError

    def update_block(self) -> Any:
        raise NotImplementedError

    def run_update_pass(self, opt: Any, params_grads: list, run: Callable) -> list:
        """``run(params_grads)``: an optimizer's clip, regularization and update ops (the
        eager builder may replay the kernel calls of an earlier pass of the same kind)."""
        return run(params_grads)

    def set_learning_rate(self, opt: Any) -> None:
        raise NotImplementedError

    def param_learning_rate(self, lr: Any, param: Any) -> Any:
        raise NotImplementedError

    def existing_accumulator(self, opt: Any, name: str, param: Any) -> Any:
        raise NotImplementedError

    def restore_accumulator(self, opt: Any, var: Any) -> None:
        raise NotImplementedError

    def optimizer_state(self, opt: Any, what: str, *args: Any) -> Any:
        """Dygraph-only optimizer state: ``state_dict``, ``set_dict``, ``clear_gradients``,
        ``current_step_lr``."""
        raise NotImplementedError


class StaticBuilder(Builder):
    """Appends ops to the default main program's current block; initialisers go to the startup
    program."""

    eager = False

    def is_variable(self, x: Any) -> bool:
        return isinstance(x, Variable)

    def append_op(
        self, type: str, inputs: dict, outputs: dict, attrs: dict, layer: str | None = None
    ) -> Any:
        try:
            return default_main_program().current_block().append_op(type, inputs, outputs, attrs)
        except OarError as exc:
            if layer is not None and layer != type and getattr(exc, "layer", None) is None:
                exc.layer = layer
            raise

    def create_tmp_variable(self, prefix: str, dtype: Any, stop_gradient: bool = False) -> Any:
        return (
            default_main_program()
            .current_block()
            .create_var(
                name=unique_name.generate_with_ignorable_key(f"{prefix}.tmp"),
                dtype=dtype,
                persistable=False,
                stop_gradient=stop_gradient,
            )
        )

    def create_variable(self, **kwargs: Any) -> Any:
        return default_main_program().current_block().create_var(**kwargs)

    def create_global_variable(self, persistable: bool = False, **kwargs: Any) -> Any:
        return default_main_program().global_block().create_var(persistable=persistable, **kwargs)

    def set_variable_initializer(self, var: Any, initializer: Any) -> Any:
        sblock = default_startup_program().global_block()
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
        layer: str,
        attr: Any,
        shape: list,
        dtype: Any,
        is_bias: bool,
        initializer: Any,
        stop_gradient: bool = False,
    ) -> Any:
        main = default_main_program().global_block()
        existing = main.vars.get(attr.name)
        if existing is not None:
            if list(existing.shape) != shape or existing.dtype != convert_dtype(dtype):
                raise ShapeError(
                    f"parameter '{attr.name}' is shared by name but this layer needs shape "
                    f"{shape} dtype {convert_dtype(dtype)}, and it already has shape "
                    f"{list(existing.shape)} dtype {existing.dtype}",
                    layer=layer,
                    variable=attr.name,
                )
            return existing
        kwargs = attr._to_kwargs()
        sblock = default_startup_program().global_block()
        if not sblock.has_var(attr.name):
            sblock.create_parameter(shape=shape, dtype=dtype, initializer=initializer, **kwargs)
        param = main.create_parameter(shape=shape, dtype=dtype, **kwargs)
        if stop_gradient:
            param.stop_gradient = True
        return param

    def const(self, value: float, like: Any) -> Any:
        out = self.create_tmp_variable(unique_name.generate("fill_constant"), like.dtype)
        self.append_op(
            "fill_constant",
            {},
            {"Out": [out]},
            {"shape": [1], "dtype": like.dtype, "value": float(value), "force_cpu": False},
        )
        out.stop_gradient = True
        return out

    def lr_schedule(self, static: Callable[[], Any], eager: tuple) -> Any:
        return static()

    def gradients(
        self,
        opt: Any,
        loss: Any,
        startup_program: Any,
        parameter_list: Sequence | None,
        no_grad_set: Any,
    ) -> list:
        if not isinstance(loss, Variable):
            raise TypeError(
                f"{type(opt).__name__}.minimize: loss must be a Variable, given {type(loss).__name__}"
            )
        return opt.backward(loss, startup_program, parameter_list, no_grad_set)

    def loss_guard(self, loss: Any, startup_program: Any) -> contextlib.AbstractContextManager:
        from oar.framework.program import program_guard

        program = loss.block.program
        if startup_program is None:
            return program_guard(program)
        return program_guard(program, startup_program)

    def update_guard(self, program: Any) -> contextlib.AbstractContextManager:
        from oar.framework.operator import OpRole

        return program._role_guard(OpRole.Optimize)

    def update_block(self) -> Any:
        return default_main_program().global_block()

    def set_learning_rate(self, opt: Any) -> None:
        """Once per program: a persistable lr variable initialised by the startup program."""
        from oar.initializer import Constant

        program = default_main_program()
        if program in opt._lr_vars:
            return
        if isinstance(opt._learning_rate, Variable):
            opt._lr_vars.set(program, opt._learning_rate)
            return
        var = self.create_global_variable(
            name=unique_name.generate("learning_rate"), shape=[1], dtype="float32", persistable=True
        )
        self.set_variable_initializer(var, Constant(float(opt._learning_rate)))
        opt._lr_vars.set(program, var)

    def param_learning_rate(self, lr: Any, param: Any) -> Any:
        mult = float(param.optimize_attr.get("learning_rate", 1.0))
        if mult == 1.0:
            return lr
        block = default_main_program().global_block()
        out = block.create_var(
            name=unique_name.generate(f"{param.name}_lr"), shape=[1], dtype=lr.dtype
        )
        block.append_op("scale", {"X": [lr]}, {"Out": [out]}, {"scale": mult})
        return out

    def existing_accumulator(self, opt: Any, name: str, param: Any) -> Any:
        if param.name in opt._accumulators.get(name, {}):
            raise ValueError(
                f"{type(opt).__name__}: accumulator '{name}' for '{param.name}' exists already"
            )
        return None

    def restore_accumulator(self, opt: Any, var: Any) -> None:
        return None

    def optimizer_state(self, opt: Any, what: str, *args: Any) -> Any:
        raise RuntimeError(
            f"{type(opt).__name__}.{what} works in dygraph mode only (as in Fluid 1.8): call it "
            f"inside `with fluid.dygraph.guard():`"
        )


STATIC = StaticBuilder()
_set_static_builder(STATIC)

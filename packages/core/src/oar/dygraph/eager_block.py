"""A Block look-alike whose ``append_op`` runs the op at once, untraced.

Initializers, regularizers, gradient clips and optimizer update rules are
written against a static Block (``block.append_op(...)``,
``block.create_var(...)``). Handing them an :class:`EagerBlock` in dygraph
mode runs the very same ops through the same kernels, so every optimizer or
initializer that appends ops works in both modes without a second code path.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from oar.dygraph.varbase import VarBase
from oar.errors import DtypeError, OarError
from oar.framework.builder import Builder
from oar.framework.dtypes import convert_dtype


class _InitTarget:
    """What an initializer sees of a parameter before it has a value: name, shape, dtype."""

    __slots__ = ("name", "shape", "dtype", "target", "persistable", "type", "lod_level")

    def __init__(self, target: VarBase, name: str, shape: list, dtype: str) -> None:
        self.target = target
        self.name = name
        self.shape = tuple(shape)
        self.dtype = dtype
        self.persistable = True
        self.type = "lod_tensor"
        self.lod_level = 0


class EagerBlock:
    """Runs appended ops immediately on eager variables; keeps named variables it created."""

    def __init__(self, tracer: Any) -> None:
        self._tracer = tracer
        self.vars: dict = {}
        self.idx = 0
        self.ops: list = []
        self._recording: list | None = None  # ops run while an update pass is recorded
        self.builder = EagerBuilder(tracer, self)

    @property
    def program(self) -> Any:
        from oar.framework.program import default_main_program

        return default_main_program()

    # --- variables ------------------------------------------------------------------------------
    def create_var(
        self,
        name: str | None = None,
        shape: Any = None,
        dtype: Any = None,
        persistable: bool = False,
        stop_gradient: bool = True,
        **_: Any,
    ) -> VarBase:
        v = VarBase(
            None, name=name, stop_gradient=stop_gradient, persistable=persistable, dtype=dtype
        )
        return v

    def has_var(self, name: str) -> bool:
        return name in self.vars

    def var(self, name: str) -> VarBase:
        try:
            return self.vars[name]
        except KeyError:
            raise ValueError(
                f"dygraph: no variable named '{name}' was created in this eager block"
            ) from None

    _var_recursive = var
    _find_var_recursive = var

    def init_var(self, var: VarBase, shape: Any, dtype: Any, initializer: Any) -> VarBase:
        """Fill ``var`` by running ``initializer``'s op eagerly."""
        if shape is None:
            raise ValueError(f"dygraph: cannot initialise '{var.name}' without a shape")
        target = _InitTarget(
            var, var.name, [int(d) for d in shape], convert_dtype(dtype or "float32")
        )
        initializer(target, self)
        return var

    # --- ops ------------------------------------------------------------------------------------
    def append_op(
        self,
        type: str,
        inputs: dict | None = None,
        outputs: dict | None = None,
        attrs: dict | None = None,
        **_: Any,
    ) -> None:
        # untraced (as ``run_op``): optimizer updates and initialisers record no tape node
        inputs, outputs, attrs = _norm(inputs), _norm(outputs), dict(attrs or {})
        if self._recording is not None:  # an optimizer's update pass (oar.dygraph.update_replay)
            self._recording.append((type, inputs, outputs, dict(attrs)))
        self._tracer.trace_op(type, inputs, outputs, attrs, True)

    _prepend_op = append_op


def _norm(slots: dict | None) -> dict:
    out: dict = {}
    for slot, vs in (slots or {}).items():
        if vs.__class__ is list and len(vs) == 1 and vs[0].__class__ is not _InitTarget:
            out[slot] = vs  # an optimizer's slot: one variable (the common case, no copy)
            continue
        if not isinstance(vs, (list, tuple)):
            vs = [vs]
        out[slot] = [v.target if isinstance(v, _InitTarget) else v for v in vs]
    return out


class EagerBuilder(Builder):
    """Dygraph's builder: layer ops are traced (run now, taped for backward); optimizer updates
    and initialisers run untraced on the :class:`EagerBlock`."""

    eager = True

    def __init__(self, tracer: Any, block: EagerBlock) -> None:
        self._tracer = tracer
        self._block = block

    def is_variable(self, x: Any) -> bool:
        return isinstance(x, VarBase)

    def append_op(
        self, type: str, inputs: dict, outputs: dict, attrs: dict, layer: str | None = None
    ) -> Any:
        tracer = self._tracer
        try:
            return tracer.trace_op(type, inputs, outputs, attrs)
        except OarError as exc:
            # failure path only: the op's infer_shape says what was wrong, in words
            explain_eager_failure(tracer, type, inputs, attrs, exc)
            raise

    def create_tmp_variable(self, prefix: str, dtype: Any, stop_gradient: bool = False) -> Any:
        return VarBase(None, stop_gradient=stop_gradient, dtype=dtype)

    def create_variable(self, **kwargs: Any) -> Any:
        return self._tracer.create_variable(**kwargs)

    def create_global_variable(self, persistable: bool = False, **kwargs: Any) -> Any:
        return self._tracer.create_variable(persistable=persistable, **kwargs)

    def set_variable_initializer(self, var: Any, initializer: Any) -> Any:
        return self._tracer.initialize(var, initializer)

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
        return self._tracer.create_parameter(attr, shape, dtype, is_bias, initializer)

    def check_same_dtype(self, layer: str, args: dict) -> None:
        if len(args) < 2:
            return
        dtypes = {k: str(v.dtype) for k, v in args.items()}
        if len(set(dtypes.values())) > 1:
            given = ", ".join(f"{k} {d}" for k, d in dtypes.items())
            raise DtypeError.in_layer(
                layer, f"inputs must have the same dtype (nothing is cast), given {given}"
            )

    def const(self, value: float, like: Any) -> Any:
        return VarBase(np.full([1], value, dtype=like.dtype))

    def lr_schedule(self, static: Callable[[], Any], eager: tuple) -> Any:
        from oar.dygraph import learning_rate_scheduler as dy

        name, args, kwargs = eager
        return getattr(dy, name)(*args, **kwargs)

    # --- optimizers (oar.dygraph.optimizer does the work) ---------------------------------------
    def gradients(
        self,
        opt: Any,
        loss: Any,
        startup_program: Any,
        parameter_list: Sequence | None,
        no_grad_set: Any,
    ) -> list:
        from oar.dygraph.optimizer import gradients

        return gradients(opt, parameter_list, no_grad_set)

    def loss_guard(self, loss: Any, startup_program: Any) -> contextlib.AbstractContextManager:
        return contextlib.nullcontext()

    def update_guard(self, program: Any) -> contextlib.AbstractContextManager:
        from oar.dygraph.base import no_grad

        return no_grad()

    def update_block(self) -> Any:
        return self._block

    def run_update_pass(self, opt: Any, params_grads: list, run: Callable) -> list:
        from oar.dygraph.update_replay import run_update_pass

        return run_update_pass(self, opt, params_grads, run)

    def set_learning_rate(self, opt: Any) -> None:
        from oar.dygraph.optimizer import set_lr_var

        set_lr_var(opt)

    def param_learning_rate(self, lr: Any, param: Any) -> Any:
        from oar.dygraph.optimizer import scaled_lr

        return scaled_lr(lr, param)

    def existing_accumulator(self, opt: Any, name: str, param: Any) -> Any:
        return opt._accumulators.get(name, {}).get(param.name)  # minimize runs every step

    def restore_accumulator(self, opt: Any, var: Any) -> None:
        from oar.dygraph.optimizer import fill_from_holder

        fill_from_holder(opt, var)

    def optimizer_state(self, opt: Any, what: str, *args: Any) -> Any:
        from oar.dygraph import optimizer as dyopt

        return getattr(dyopt, what)(opt, *args)


def explain_eager_failure(tracer: Any, type: str, inputs: dict, attrs: dict, exc: OarError) -> None:
    """Raise the op's own shape-inference complaint about ``inputs`` if it has one; else give
    ``exc`` the op's name and the user's line."""
    from oar.dygraph.explain import explain_failure
    from oar.errors import user_site
    from oar.plugins import registries

    try:
        opdef = registries().ops.get(type)
        full = tracer.complete_attrs(type, attrs or {})
    except OarError:
        return
    explain_failure(type, opdef, inputs or {}, full)
    exc.with_context(callsite=user_site())

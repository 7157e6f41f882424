"""``StaticModelRunner``: a model saved by ``fluid.io.save_inference_model`` as a dygraph Layer.

The saved program's ops run one by one through the dygraph tracer, so the loaded
model can be called, fine-tuned (its persistable variables become parameters named
``<name>@LOADED``, as in Fluid 1.8.5) and mixed with other dygraph layers. In
training mode (the default) ops with an ``is_test`` attribute run as in training
(dropout drops, batch norm uses batch statistics and updates its moving ones);
``eval()`` gives the saved inference program's results.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from oar.dygraph.layers import Layer
from oar.dygraph.nn import _op, _wrap_layers
from oar.dygraph.varbase import ParamBase, VarBase
from oar.errors import ArgumentError, ArgumentTypeError
from oar.kernel_entry import EMPTY_VAR

__all__ = ["StaticModelRunner"]

LOADED_SUFFIX = "@LOADED"
_SKIPPED_OPS = ("feed", "fetch")


def _load_program(model_dir: str, model_filename: Any, params_filename: Any) -> tuple:
    """``(program, feed names, fetch names, {persistable name: array})`` read in static mode."""
    from oar import fluid
    from oar.executor import Executor
    from oar.framework.mode import _set_tracer
    from oar.places import CPUPlace
    from oar.scope import Scope, scope_guard

    scope = Scope()
    old = _set_tracer(None)  # the loader runs in static mode
    try:
        with scope_guard(scope):
            program, feeds, fetches = fluid.io.load_inference_model(
                model_dir, Executor(CPUPlace()), model_filename, params_filename
            )
    finally:
        _set_tracer(old)
    block = program.global_block()
    values = {}
    for name, var in block.vars.items():
        found = scope.find_var(name) if var.persistable else None
        if found is not None and found.get_tensor()._is_initialized():
            values[name] = np.asarray(found.get_tensor())
    return program, list(feeds), [v.name for v in fetches], values


class StaticModelRunner(Layer):
    """Load ``model_dir`` (written by ``fluid.io.save_inference_model``) as a trainable Layer.

    Call it with the feed targets in their saved order (numpy arrays or dygraph
    variables); it returns the fetch target, or a list when there are several.
    """

    def __init__(self, model_dir, model_filename=None, params_filename=None) -> None:
        super().__init__()
        if not isinstance(model_dir, str):
            raise ArgumentTypeError(
                "StaticModelRunner", f"model_dir must be a str, given {type(model_dir).__name__}"
            )
        if not os.path.isdir(model_dir):
            raise ArgumentError("StaticModelRunner", f"there is no directory named '{model_dir}'")
        program, self._feed_names, self._fetch_names, values = _load_program(
            model_dir, model_filename, params_filename
        )
        block = program.global_block()
        for op in block.ops:
            sub = [k for k, v in op.attrs.items() if k.endswith("block") and v is not None]
            if sub:
                raise ArgumentError(
                    "StaticModelRunner",
                    f"op '{op.type}' of '{model_dir}' runs a sub-block ({sub[0]}): "
                    f"control flow is not supported in dygraph; load it with "
                    f"fluid.io.load_inference_model and run it with an Executor",
                )
        self._ops = [op for op in block.ops if op.type not in _SKIPPED_OPS]
        written = {n for op in self._ops for names in op.outputs.values() for n in names}
        self._params: dict = {}
        for name, value in values.items():
            param = ParamBase(value, name + LOADED_SUFFIX)
            # variables the program itself updates (batch norm's moving statistics) take no
            # gradient, as in Fluid 1.8.5
            param.stop_gradient = name in written
            self.add_parameter(param.name, param)
            self._params[name] = param

    def forward(self, *args) -> Any:
        if len(args) != len(self._feed_names):
            raise ArgumentError(
                "StaticModelRunner",
                f"the saved model takes {len(self._feed_names)} inputs "
                f"({', '.join(self._feed_names)}), given {len(args)}",
            )
        env: dict = dict(self._params)
        for name, value in zip(self._feed_names, args):
            env[name] = _as_variable(name, value)
        for op in self._ops:
            _run(op, env, not self.training)
        outs = [env[n] for n in self._fetch_names]
        return outs[0] if len(outs) == 1 else outs


def _as_variable(name: str, value: Any) -> VarBase:
    if isinstance(value, VarBase):
        return value
    if isinstance(value, np.ndarray):
        from oar.dygraph.base import to_variable

        return to_variable(value)
    raise ArgumentTypeError(
        "StaticModelRunner",
        f"input '{name}' must be a numpy array or a dygraph variable, given {type(value).__name__}",
    )


def _run(op: Any, env: dict, is_test: bool) -> None:
    ins = {}
    for slot, names in op.inputs.items():
        if names and EMPTY_VAR not in names:
            missing = [n for n in names if n not in env]
            if missing:
                raise ArgumentError(
                    "StaticModelRunner",
                    f"op '{op.type}' reads variable '{missing[0]}' ({slot}), which the saved "
                    f"model neither feeds, computes before it, nor holds a saved value for",
                )
            ins[slot] = [env[n] for n in names]
    outs = {}
    for slot, names in op.outputs.items():
        if names and EMPTY_VAR not in names:
            outs[slot] = [
                env[n] if n in env and env[n].persistable else VarBase(None, name=n) for n in names
            ]
    attrs = dict(op.attrs)
    attrs["is_test"] = is_test  # dropped by _op for ops without the attr
    _op(op.type, ins, outs, attrs)
    for slot, names in op.outputs.items():
        env.update(zip(names, outs.get(slot, ())))


_wrap_layers(globals(), __all__, __name__)

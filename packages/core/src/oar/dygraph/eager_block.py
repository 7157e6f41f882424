"""A Block look-alike whose ``append_op`` runs the op at once, untraced.

Initializers, regularizers, gradient clips and optimizer update rules are
written against a static Block (``block.append_op(...)``,
``block.create_var(...)``). Handing them an :class:`EagerBlock` in dygraph
mode runs the very same ops through the same kernels, so every optimizer or
initializer that appends ops works in both modes without a second code path.
"""

from __future__ import annotations

from typing import Any

from oar.dygraph.varbase import VarBase
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
        self._tracer.run_op(type, _norm(inputs), _norm(outputs), dict(attrs or {}))

    _prepend_op = append_op


def _norm(slots: dict | None) -> dict:
    out: dict = {}
    for slot, vs in (slots or {}).items():
        if not isinstance(vs, (list, tuple)):
            vs = [vs]
        out[slot] = [v.target if isinstance(v, _InitTarget) else v for v in vs]
    return out

"""The ONNX exporter: walks one inference block and asks a converter per op for ONNX nodes."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

DEFAULT_OPSET = 13
SUPPORTED_OPSETS = range(13, 18)  # the converters write opset-13 nodes; 18 moved reduce axes

CONVERTERS: dict[str, Callable[[Graph, Any], None]] = {}


class UnsupportedOpError(ValueError):
    """The program uses ops (``ops``) that have no ONNX mapping."""

    def __init__(self, message: str, ops: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.ops = list(ops)


def converter(*types: str) -> Callable:
    def deco(fn: Callable) -> Callable:
        for t in types:
            CONVERTERS[t] = fn
        return fn

    return deco


def supported_ops() -> list:
    _load_converters()
    return sorted(CONVERTERS)


def _load_converters() -> None:
    from oar_deploy.onnx import ops_image, ops_math, ops_nn, ops_tensor  # noqa: F401  (register)


_DTYPES = {
    "float32": 1,
    "uint8": 2,
    "int8": 3,
    "int16": 5,
    "int32": 6,
    "int64": 7,
    "bool": 9,
    "float16": 10,
    "float64": 11,
}


def onnx_dtype(dtype: Any) -> int:
    name = np.dtype(dtype).name if not isinstance(dtype, str) else dtype
    try:
        return _DTYPES[name]
    except KeyError:
        raise UnsupportedOpError(f"ONNX export: dtype {name} has no ONNX mapping") from None


class Graph:
    """The ONNX graph under construction: nodes, initializers, unique names."""

    def __init__(self, program: Any, scope: Any, opset: int) -> None:
        from onnx import helper, numpy_helper

        self.helper, self.numpy_helper = helper, numpy_helper
        self.program, self.block, self.scope, self.opset = (
            program,
            program.global_block(),
            scope,
            opset,
        )
        self.nodes: list = []
        self.initializers: dict = {}
        self._n = 0
        self.op: Any = None

    # --- values -------------------------------------------------------------------------------
    def param(self, name: str) -> np.ndarray | None:
        var = self.block._find_var_recursive(name)
        if var is None or not var.persistable:
            return None
        sv = self.scope.find_var(name)
        if sv is None or not sv.is_initialized():
            return None
        return np.asarray(sv.get_tensor())

    def x(self, slot: str, i: int = 0) -> str:
        """The ONNX name of the op's input ``slot`` (a parameter becomes an initializer)."""
        name = self.op.input(slot)[i]
        if name not in self.initializers:
            arr = self.param(name)
            if arr is not None:
                self.initializers[name] = self.numpy_helper.from_array(arr, name)
        return name

    def y(self, slot: str, i: int = 0) -> str:
        return self.op.output(slot)[i]

    def has(self, slot: str) -> bool:
        return bool(self.op.input(slot))

    def shape(self, name: str) -> list | None:
        var = self.block._find_var_recursive(name)
        return None if var is None or var.shape is None else list(var.shape)

    def rank(self, name: str) -> int:
        shape = self.shape(name)
        if shape is None:
            self.fail(f"the rank of '{name}' is unknown")
        return len(shape)

    def dtype(self, name: str) -> str:
        return str(self.block._find_var_recursive(name).dtype)

    def const(self, value: Any, dtype: Any = None, hint: str = "const") -> str:
        arr = np.asarray(value, dtype=dtype)
        name = self.tmp(hint)
        self.initializers[name] = self.numpy_helper.from_array(arr, name)
        return name

    def tmp(self, hint: str = "t") -> str:
        self._n += 1
        return f"{hint}__oar{self._n}"

    def attr(self, name: str, default: Any = None) -> Any:
        v = self.op.attr(name)
        return default if v is None else v

    # --- nodes --------------------------------------------------------------------------------
    def node(
        self,
        op_type: str,
        inputs: Sequence[str],
        outputs: Sequence[str] | str | None = None,
        **attrs: Any,
    ) -> str:
        """Add a node; returns its (first) output name (a fresh one when not given)."""
        if outputs is None:
            outputs = [self.tmp(op_type.lower())]
        elif isinstance(outputs, str):
            outputs = [outputs]
        self.nodes.append(self.helper.make_node(op_type, list(inputs), list(outputs), **attrs))
        return outputs[0]

    def fail(self, why: str) -> None:
        where = (self.op.where() or "no source line").strip()
        raise UnsupportedOpError(
            f"ONNX export: op '{self.op.type}' ({where}): {why}",
            [self.op.type],
        )


def _value_info(g: Graph, name: str, batch_dim: str = "N") -> Any:
    var = g.block._find_var_recursive(name)
    shape = None
    if var is not None and var.shape is not None:
        shape = [d if d is not None and d >= 0 else batch_dim for d in var.shape]
    return g.helper.make_tensor_value_info(name, onnx_dtype(str(var.dtype)), shape)


def to_model(
    program: Any,
    feed_names: Sequence[str],
    fetch_targets: Sequence[Any],
    scope: Any,
    opset: int = DEFAULT_OPSET,
) -> Any:
    """The ``onnx.ModelProto`` of ``program`` (checked by ``onnx.checker``), without writing it."""
    try:
        import onnx
    except ImportError:
        from oar.errors import MissingPluginError

        raise MissingPluginError(
            "oar.onnx needs the onnx package: pip install oar-deploy[onnx]"
        ) from None
    if opset not in SUPPORTED_OPSETS:
        raise ValueError(
            f"ONNX export: opset {opset} is not supported; use one of "
            f"{list(SUPPORTED_OPSETS)} (default {DEFAULT_OPSET})"
        )
    _load_converters()
    block = program.global_block()
    missing = sorted({op.type for op in block.ops if op.type not in CONVERTERS} - {"feed", "fetch"})
    if missing:
        raise UnsupportedOpError(
            f"ONNX export: no ONNX mapping for op(s) {missing}; supported ops: "
            f"{', '.join(sorted(CONVERTERS))}",
            missing,
        )
    fetches = [t if isinstance(t, str) else t.name for t in fetch_targets]
    g = Graph(program, scope, opset)
    for op in block.ops:
        if op.type in ("feed", "fetch"):
            continue
        g.op = op
        CONVERTERS[op.type](g, op)
    graph = g.helper.make_graph(
        g.nodes,
        "oar",
        [_value_info(g, n) for n in feed_names],
        [_value_info(g, n) for n in fetches],
        list(g.initializers.values()),
    )
    model = g.helper.make_model(
        graph, opset_imports=[g.helper.make_opsetid("", opset)], producer_name="oar"
    )
    model.ir_version = min(
        model.ir_version, 8
    )  # opset <= 17 needs no newer IR; older runtimes read it
    onnx.checker.check_model(model)
    return model


def export(
    program: Any,
    feed_names: Sequence[str],
    fetch_targets: Sequence[Any],
    scope: Any,
    path: str,
    opset: int = DEFAULT_OPSET,
) -> Any:
    """Write ``program`` (feeds -> fetch targets, parameters from ``scope``) as an ONNX file.

    Returns the ``onnx.ModelProto``. The file is written atomically.
    """
    model = to_model(program, feed_names, fetch_targets, scope, opset)
    path = os.fspath(path)
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".oar-onnx-", dir=d)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(model.SerializeToString())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return model

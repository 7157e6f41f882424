"""``oar.summary``: a table of a model's layers (dygraph) or ops (static program) with output
shapes and parameter counts, and the totals, as ``paddle.summary`` / torchinfo print them."""

from __future__ import annotations

import sys
from typing import Any

import numpy as np


def _size(shape: Any) -> int:
    return int(np.prod([max(int(d), 1) for d in shape])) if shape is not None else 0


def _itemsize(dtype: Any) -> int:
    try:
        return np.dtype(str(dtype)).itemsize
    except TypeError:
        return 4


def _shape_of(out: Any) -> Any:
    if isinstance(out, (list, tuple)):
        return [_shape_of(o) for o in out]
    shape = getattr(out, "shape", None)
    return list(shape) if shape is not None else None


def _layer_rows(layer: Any, input_size: Any, dtypes: Any) -> tuple:
    from oar import dygraph

    sizes = (
        [input_size] if input_size and not isinstance(input_size[0], (list, tuple)) else input_size
    )
    kinds = dtypes if isinstance(dtypes, (list, tuple)) else [dtypes or "float32"] * len(sizes)
    rows: list = []
    handles = []

    def hook_for(name: str, sub: Any) -> Any:
        def hook(_layer: Any, _inputs: Any, outputs: Any) -> None:
            own = sub.parameters(include_sublayers=False)
            rows.append(
                (name, type(sub).__name__, _shape_of(outputs), sum(_size(p.shape) for p in own))
            )

        return hook

    with dygraph.guard():
        for name, sub in layer.named_sublayers(include_sublayers=True):
            handles.append(sub.register_forward_post_hook(hook_for(name, sub)))
        try:
            inputs = [
                dygraph.to_variable(np.zeros([d if d and d > 0 else 1 for d in s], dtype=k))
                for s, k in zip(sizes, kinds)
            ]
            layer.eval()
            layer(*inputs)
        finally:
            for h in handles:
                h.remove()
        params = layer.parameters()
    total = sum(_size(p.shape) for p in params)
    trainable = sum(_size(p.shape) for p in params if getattr(p, "trainable", True))
    nbytes = sum(_size(p.shape) * _itemsize(p.dtype) for p in params)
    return rows, total, trainable, nbytes


def _program_rows(program: Any) -> tuple:
    block = program.global_block()
    params = {p.name: p for p in block.all_parameters()}
    rows = []
    for i, op in enumerate(block.ops):
        outs = [n for names in op.outputs.values() for n in names]
        shapes = [
            list(block._var_recursive(n).shape)
            if block.has_var(n) and block.var(n).shape is not None
            else None
            for n in outs
        ]
        used = {n for names in op.inputs.values() for n in names if n in params}
        count = sum(_size(params[n].shape) for n in used)
        rows.append((f"{op.type}#{i}", op.type, shapes[0] if len(shapes) == 1 else shapes, count))
    total = sum(_size(p.shape) for p in params.values())
    trainable = sum(_size(p.shape) for p in params.values() if getattr(p, "trainable", True))
    nbytes = sum(_size(p.shape) * _itemsize(p.dtype) for p in params.values())
    return rows, total, trainable, nbytes


def summary(net: Any, input_size: Any = None, dtypes: Any = None, file: Any = None) -> dict:
    """Print the table and return ``{"total_params", "trainable_params", "total_bytes", "rows"}``.

    ``net``: a dygraph ``Layer`` (then ``input_size`` is one shape or a list of shapes; ``None``
    or -1 dims become 1, and the model runs once in eval mode on zeros) or a static ``Program``
    (its ops, with the shapes the program declares; ``input_size`` is not needed).
    Parameters shared between ops are counted once in the totals.
    """
    if hasattr(net, "global_block"):
        rows, total, trainable, nbytes = _program_rows(net)
        header = ("op", "type")
    else:
        if input_size is None:
            raise ValueError("summary(layer, input_size): a dygraph Layer needs input_size")
        rows, total, trainable, nbytes = _layer_rows(net, input_size, dtypes)
        header = ("layer", "type")
    out = file or sys.stdout
    width = max([len(r[0]) for r in rows] + [len(header[0])])
    twidth = max([len(r[1]) for r in rows] + [len(header[1])])
    line = "-" * (width + twidth + 44)
    print(line, file=out)
    print(
        f"{header[0]:<{width}}  {header[1]:<{twidth}}  {'output shape':<28}  {'params':>10}",
        file=out,
    )
    print(line, file=out)
    for name, kind, shape, count in rows:
        print(f"{name:<{width}}  {kind:<{twidth}}  {str(shape):<28}  {count:>10,}", file=out)
    print(line, file=out)
    print(f"Total params: {total:,}", file=out)
    print(f"Trainable params: {trainable:,}", file=out)
    print(f"Non-trainable params: {total - trainable:,}", file=out)
    print(f"Params size (MB): {nbytes / 2**20:.2f}", file=out)
    print(line, file=out)
    return {
        "total_params": total,
        "trainable_params": trainable,
        "total_bytes": nbytes,
        "rows": rows,
    }

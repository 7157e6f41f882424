"""Explain an eager kernel failure with the op's own shape inference.

Eager (dygraph) ops skip ``infer_shape`` to stay fast, so a bad shape first shows
up as a numpy error inside the kernel. On that failure path only, run the op's
``infer_shape`` on the actual shapes and dtypes: if it rejects them, its message
(op, slot, expected, given) replaces numpy's.
"""

from __future__ import annotations

from typing import Any

from oar.errors import DtypeError, ShapeError, describe_var, user_site
from oar.registry import VarMeta


def _meta(v: Any) -> VarMeta:
    return VarMeta(tuple(int(d) for d in v.shape), str(v.dtype))


def explain_failure(op_type: str, opdef: Any, inputs: dict, attrs: dict) -> None:
    """Raise ShapeError/DtypeError if ``op_type``'s infer_shape rejects the inputs; else return."""
    if opdef.infer_shape is None:
        return
    ins: dict = {}
    try:
        for s in opdef.inputs:
            vs = inputs.get(s.name) or []
            vs = vs if isinstance(vs, (list, tuple)) else [vs]
            metas = [_meta(v) for v in vs if v is not None]
            ins[s.name] = metas if s.duplicable else (metas[0] if metas else None)
        opdef.infer_shape(ins, attrs)
    except (ValueError, TypeError) as exc:
        detail = ", ".join(
            f"{slot}={describe_var(v.name, _meta(v))}"
            for slot, vs in inputs.items()
            for v in (vs if isinstance(vs, (list, tuple)) else [vs])
            if v is not None
        )
        cls = DtypeError if isinstance(exc, TypeError) else ShapeError
        raise cls(f"{exc}; inputs: {detail}", op=op_type, callsite=user_site()) from None
    except Exception:  # inference could not judge these inputs: keep the kernel's error
        return

"""Fluid/Paddle ``ProgramDesc`` protobuf models (``__model__``, ``.pdmodel``) <-> oar programs.

Field numbers follow the public ``framework.proto`` schema (ProgramDesc,
BlockDesc, VarDesc, VarType, OpDesc); the bytes are read and written with the
small wire codec in :mod:`oar_io.wire`, so no protobuf package is needed.
Feed and fetch ops become the feed and fetch name lists; op and slot names
are Fluid's, which oar uses too. Attributes an oar op does not define are
dropped (Paddle annotations such as ``op_callstack``), dtype attributes map
from Fluid's enum to oar's dtype names.
"""

from __future__ import annotations

from typing import Any

from oar_io import wire
from oar_io.errors import CorruptFileError
from oar_io.tensor_formats import FLUID_DTYPE_CODES, FLUID_DTYPES

VAR_TYPES = {
    7: "lod_tensor",
    8: "selected_rows",
    9: "feed_minibatch",
    10: "fetch_list",
    11: "step_scopes",
    13: "lod_tensor_array",
    15: "reader",
    17: "raw",
}
VAR_TYPE_CODES = {v: k for k, v in VAR_TYPES.items()}
# AttrType -> (OpDesc.Attr field, decoder)
(
    INT,
    FLOAT,
    STRING,
    INTS,
    FLOATS,
    STRINGS,
    BOOLEAN,
    BOOLEANS,
    BLOCK,
    LONG,
    BLOCKS,
    LONGS,
    FLOAT64S,
) = range(13)
FLOAT64 = 15


def _attr_value(a: dict) -> Any:
    t = wire.one(a, 2)
    if t == INT:
        return wire.signed32(wire.one(a, 3, 0))
    if t == FLOAT:
        return wire.floats(a, 4)[-1] if a.get(4) else 0.0
    if t == STRING:
        return wire.string(a, 5, "")
    if t == INTS:
        return [wire.signed32(x) for x in wire.ints(a, 6, signed=False)]
    if t == FLOATS:
        return wire.floats(a, 7)
    if t == STRINGS:
        return wire.strings(a, 8)
    if t == BOOLEAN:
        return bool(wire.one(a, 10, 0))
    if t == BOOLEANS:
        return [bool(x) for x in wire.ints(a, 11)]
    if t == BLOCK:
        return wire.one(a, 12, 0)
    if t == LONG:
        return wire.signed64(wire.one(a, 13, 0))
    if t == BLOCKS:
        return wire.ints(a, 14)
    if t == LONGS:
        return wire.ints(a, 15)
    if t == FLOAT64S:
        return wire.floats(a, 16, "<d")
    if t == FLOAT64:
        return wire.floats(a, 19, "<d")[-1] if a.get(19) else 0.0
    return None  # VAR/VARS/SCALAR attrs: not used by oar ops


def _slots(msgs: list) -> dict:
    return {wire.string(m, 1): wire.strings(m, 2) for m in msgs}


def _tensor_desc(vt: dict) -> tuple:
    """(dtype, shape, lod_level) from a VarType message."""
    for field in (3, 4):  # lod_tensor, tensor_array: LoDTensorDesc {tensor=1, lod_level=2}
        if vt.get(field):
            ld = wire.parse(wire.one(vt, field))
            td = wire.parse(wire.one(ld, 1))
            return FLUID_DTYPES.get(wire.one(td, 1)), tuple(wire.ints(td, 2)), wire.one(ld, 2, 0)
    if vt.get(2):  # selected_rows: TensorDesc
        td = wire.parse(wire.one(vt, 2))
        return FLUID_DTYPES.get(wire.one(td, 1)), tuple(wire.ints(td, 2)), 0
    return None, None, 0


def parse_program(data: bytes, path: str = "<bytes>") -> tuple:
    """``(program, feed names, fetch names)`` from ``ProgramDesc`` bytes."""
    from oar.api import build_program, registries

    ops_reg = registries().ops
    try:
        prog = wire.parse(data)
        blocks = wire.messages(prog, 1)
    except wire.WireError as exc:
        raise CorruptFileError(
            f"model file '{path}' is not a ProgramDesc protobuf: {exc}"
        ) from None
    if not blocks:
        raise CorruptFileError(f"model file '{path}' holds no blocks; it is not a ProgramDesc")
    descs: list = []
    feeds: dict = {}
    fetches: dict = {}
    missing: set = set()
    for bd in blocks:
        block_vars: dict = {}
        block_ops: list = []
        for vd in wire.messages(bd, 3):
            name = wire.string(vd, 1)
            vt = wire.parse(wire.one(vd, 2, b""))
            vtype = VAR_TYPES.get(wire.one(vt, 1), "raw")
            if vtype in ("feed_minibatch", "fetch_list"):
                continue
            dtype, shape, lod_level = _tensor_desc(vt)
            var = {
                "name": name,
                "shape": shape,
                "dtype": dtype,
                "lod_level": lod_level,
                "type": vtype,
                "persistable": bool(wire.one(vd, 3, 0)),
                "stop_gradient": bool(wire.one(vd, 6, 0)),
            }
            if wire.one(vd, 5, 0):
                var["kind"] = "parameter"
            else:
                var["need_check_feed"] = bool(wire.one(vd, 4, 0))
            block_vars[name] = var
        for od in wire.messages(bd, 4):
            op_type = wire.string(od, 3)
            ins, outs = _slots(wire.messages(od, 1)), _slots(wire.messages(od, 2))
            attrs = {wire.string(a, 1): _attr_value(a) for a in wire.messages(od, 4)}
            if op_type == "feed":
                feeds[int(attrs.get("col", 0))] = outs["Out"][0]
                block_vars[outs["Out"][0]]["is_data"] = True
                continue
            if op_type == "fetch":
                fetches[int(attrs.get("col", 0))] = ins["X"][0]
                continue
            if op_type not in ops_reg:
                missing.add(op_type)
                continue
            block_ops.append(
                {
                    "type": op_type,
                    "inputs": {k: v for k, v in ins.items() if v},
                    "outputs": {k: v for k, v in outs.items() if v},
                    "attrs": _oar_attrs(ops_reg.get(op_type), attrs),
                }
            )
        descs.append(
            {
                "idx": wire.one(bd, 1, 0),
                "parent_idx": wire.signed32(wire.one(bd, 2, 0)),
                "forward_block_idx": wire.signed32(wire.one(bd, 5, (1 << 64) - 1)),
                "vars": list(block_vars.values()),
                "ops": block_ops,
            }
        )
    if missing:
        raise NotImplementedError(
            f"model file '{path}' uses ops oar does not have: {sorted(missing)} "
            f"(install the plugin that defines them)"
        )
    program = build_program(descs)
    return program, [feeds[k] for k in sorted(feeds)], [fetches[k] for k in sorted(fetches)]


def _oar_attrs(opdef: Any, attrs: dict) -> dict:
    out = {}
    for name, spec in opdef.attrs.items():
        if name not in attrs or attrs[name] is None:
            continue
        value = attrs[name]
        if isinstance(spec.default, str) and name.endswith("dtype") and isinstance(value, int):
            value = FLUID_DTYPES.get(value, value) if value >= 0 else ""
        out[name] = value
    if "op_role" in attrs:
        out["op_role"] = attrs["op_role"]
    return opdef.complete_attrs(out)


# --- writing -------------------------------------------------------------------------------------
def _attr_bytes(name: str, value: Any) -> bytes | None:
    w = wire
    head = w.f_string(1, name)
    if isinstance(value, bool):
        return head + w.f_varint(2, BOOLEAN) + w.f_varint(10, int(value))
    if isinstance(value, int):
        if -(1 << 31) <= value < 1 << 31:
            return head + w.f_varint(2, INT) + w.f_varint(3, value)
        return head + w.f_varint(2, LONG) + w.f_varint(13, value)
    if isinstance(value, float):
        return head + w.f_varint(2, FLOAT) + w.f_float(4, value)
    if isinstance(value, str):
        return head + w.f_varint(2, STRING) + w.f_string(5, value)
    if isinstance(value, (list, tuple)):
        vals = list(value)
        if all(isinstance(v, bool) for v in vals) and vals:
            return head + w.f_varint(2, BOOLEANS) + b"".join(w.f_varint(11, int(v)) for v in vals)
        if all(isinstance(v, int) and not isinstance(v, bool) for v in vals):
            return head + w.f_varint(2, INTS) + b"".join(w.f_varint(6, v) for v in vals)
        if all(isinstance(v, (int, float)) for v in vals):
            return head + w.f_varint(2, FLOATS) + b"".join(w.f_float(7, float(v)) for v in vals)
        if all(isinstance(v, str) for v in vals):
            return head + w.f_varint(2, STRINGS) + b"".join(w.f_string(8, v) for v in vals)
    return None


def _var_bytes(v: Any) -> bytes:
    w = wire
    vtype = VAR_TYPE_CODES.get(v.type, 7)
    vt = w.f_varint(1, vtype)
    if v.type in ("lod_tensor", "lod_tensor_array", "selected_rows") and v.dtype:
        td = w.f_varint(1, FLUID_DTYPE_CODES[v.dtype]) + b"".join(
            w.f_varint(2, d) for d in (v.shape or ())
        )
        if v.type == "selected_rows":
            vt += w.f_bytes(2, td)
        else:
            vt += w.f_bytes(
                3 if v.type == "lod_tensor" else 4, w.f_bytes(1, td) + w.f_varint(2, v.lod_level)
            )
    from oar_io.static_io import is_parameter

    out = w.f_string(1, v.name) + w.f_bytes(2, vt) + w.f_varint(3, int(bool(v.persistable)))
    if getattr(v, "need_check_feed", False):
        out += w.f_varint(4, 1)
    if is_parameter(v):
        out += w.f_varint(5, 1)
    return out + w.f_varint(6, int(bool(v.stop_gradient)))


def _op_bytes(type_: str, ins: dict, outs: dict, attrs: dict) -> bytes:
    w = wire
    out = b"".join(
        w.f_bytes(1, w.f_string(1, k) + b"".join(w.f_string(2, n) for n in ns))
        for k, ns in ins.items()
    )
    out += b"".join(
        w.f_bytes(2, w.f_string(1, k) + b"".join(w.f_string(2, n) for n in ns))
        for k, ns in outs.items()
    )
    out += w.f_string(3, type_)
    for name, value in attrs.items():
        if name.endswith("dtype") and isinstance(value, str) and value in FLUID_DTYPE_CODES:
            value = FLUID_DTYPE_CODES[value]
        ab = _attr_bytes(name, value)
        if ab is not None:
            out += w.f_bytes(4, ab)
    return out


def dump_program(program: Any, feeds: list, fetches: list) -> bytes:
    """``ProgramDesc`` bytes with feed/fetch ops, loadable by Fluid 1.x ``load_inference_model``."""
    w = wire
    blocks = []
    for b in program.blocks:
        vars_ = [_var_bytes(v) for v in b.vars.values()]
        ops = [_op_bytes(op.type, op.inputs, op.outputs, op.attrs) for op in b.ops]
        if b.idx == 0 and (feeds or fetches):
            vars_.append(w.f_string(1, "feed") + w.f_bytes(2, w.f_varint(1, 9)) + w.f_varint(3, 1))
            vars_.append(
                w.f_string(1, "fetch") + w.f_bytes(2, w.f_varint(1, 10)) + w.f_varint(3, 1)
            )
            ops = [
                _op_bytes("feed", {"X": ["feed"]}, {"Out": [n]}, {"col": i})
                for i, n in enumerate(feeds)
            ] + ops
            ops += [
                _op_bytes("fetch", {"X": [n]}, {"Out": ["fetch"]}, {"col": i})
                for i, n in enumerate(fetches)
            ]
        body = w.f_varint(1, b.idx) + w.f_varint(2, b.parent_idx)
        body += b"".join(w.f_bytes(3, v) for v in vars_) + b"".join(w.f_bytes(4, o) for o in ops)
        body += w.f_varint(5, getattr(b, "forward_block_idx", -1))
        blocks.append(w.f_bytes(1, body))
    return b"".join(blocks) + w.f_bytes(4, w.f_varint(1, 0))


class ProtobufProgramFormat:
    """Fluid's ``ProgramDesc`` protobuf: reads ``__model__`` / ``.pdmodel`` files, writes Fluid-loadable ones."""

    name = "fluid_program"
    kind = "program"
    checked = False

    def sniff(self, head: bytes) -> bool:
        return head[:1] == b"\x0a"  # field 1 (blocks), length-delimited

    def dumps(self, program: Any, feed_names: list, fetch_names: list) -> bytes:
        return dump_program(program, feed_names, fetch_names)

    def loads(self, data: bytes, path: str = "<bytes>") -> tuple:
        return parse_program(data, path)

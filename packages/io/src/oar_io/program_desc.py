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
from oar_io.errors import CheckpointError, CorruptFileError, UnsupportedOpError
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
    t = wire.integer(a, 2, -1)
    if t == INT:
        return wire.signed32(wire.integer(a, 3, 0))
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
        return bool(wire.integer(a, 10, 0))
    if t == BOOLEANS:
        return [bool(x) for x in wire.ints(a, 11)]
    if t == BLOCK:
        return wire.integer(a, 12, 0)
    if t == LONG:
        return wire.signed64(wire.integer(a, 13, 0))
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
    out = {}
    for m in msgs:
        key = wire.string(m, 1)
        if key is None:
            raise wire.WireError("an op input/output slot has no name")
        out[key] = wire.strings(m, 2)
    return out


MAX_DIMS = 32  # numpy allows 64; no Fluid model has more than a handful


def _dims(td: dict) -> tuple:
    dims = wire.ints(td, 2)
    if len(dims) > MAX_DIMS:
        raise wire.WireError(f"a TensorDesc with {len(dims)} dims (at most {MAX_DIMS})")
    return tuple(dims)


def _tensor_desc(vt: dict) -> tuple:
    """(dtype, shape, lod_level) from a VarType message."""
    for field in (3, 4):  # lod_tensor, tensor_array: LoDTensorDesc {tensor=1, lod_level=2}
        if vt.get(field):
            ld = wire.message(vt, field)
            td = wire.message(ld, 1)
            lod_level = wire.integer(ld, 2, 0)
            if lod_level > 64:
                raise wire.WireError(f"lod_level {lod_level} is not plausible")
            return FLUID_DTYPES.get(wire.integer(td, 1, -1)), _dims(td), lod_level
    if vt.get(2):  # selected_rows: TensorDesc
        td = wire.message(vt, 2)
        return FLUID_DTYPES.get(wire.integer(td, 1, -1)), _dims(td), 0
    return None, None, 0


def parse_program(data: bytes, path: str = "<bytes>") -> tuple:
    """``(program, feed names, fetch names)`` from ``ProgramDesc`` bytes.

    The bytes may come from anywhere: every malformed input raises a
    :class:`~oar_io.errors.CorruptFileError` naming ``path``; blocks are walked
    one var/op at a time, so the cost stays a small multiple of the size.
    """
    try:
        return _parse_program(data, path)
    except CheckpointError:
        raise
    except wire.WireError as exc:
        raise CorruptFileError(
            f"model file '{path}' is not a well-formed ProgramDesc protobuf: {exc}"
        ) from None
    except (ValueError, TypeError, KeyError, IndexError, OverflowError, AttributeError) as exc:
        raise CorruptFileError(
            f"model file '{path}' does not describe a valid program: {type(exc).__name__}: "
            f"{str(exc)[:300]}"
        ) from None


def _parse_program(data: bytes, path: str) -> tuple:
    from oar.api import ProgramBuilder, registries

    ops_reg = registries().ops
    block_bytes = []
    for field, wt, val in wire.iter_fields(data):
        if field == 1:
            if wt != wire.LEN:
                raise wire.WireError(f"field 1 (blocks): wire type {wt}")
            block_bytes.append(val)
    if not block_bytes:
        raise CorruptFileError(f"model file '{path}' holds no blocks; it is not a ProgramDesc")
    builder = ProgramBuilder()
    feeds: dict = {}
    fetches: dict = {}
    missing: set = set()
    nblocks = len(block_bytes)
    for pos, raw in enumerate(block_bytes):
        head = {}
        var_msgs: list[bytes] = []
        op_msgs: list[bytes] = []
        for field, wt, val in wire.iter_fields(raw):
            if field in (3, 4):
                if wt != wire.LEN:
                    raise wire.WireError(f"block {pos}: field {field} has wire type {wt}")
                (var_msgs if field == 3 else op_msgs).append(val)
            elif wt == wire.VARINT:
                head[field] = val
        idx = head.get(1, 0)
        parent = wire.signed32(head.get(2, 0))
        fwd = wire.signed32(head.get(5, (1 << 64) - 1))
        if idx != pos or not -1 <= parent < idx:
            raise CorruptFileError(
                f"model file '{path}': block {pos} says idx {idx}, parent {parent}; blocks "
                f"must be numbered in order and have an earlier parent"
            )
        if not -1 <= fwd < nblocks:
            raise CorruptFileError(
                f"model file '{path}': block {pos} names forward block {fwd} of {nblocks}"
            )
        builder.add_block(parent, fwd)
        for vraw in var_msgs:
            vd = wire.parse(vraw)
            name = wire.string(vd, 1)
            if not name:
                raise CorruptFileError(
                    f"model file '{path}': block {pos} has a variable without a name"
                )
            if builder.has_var(pos, name):
                raise CorruptFileError(
                    f"model file '{path}': block {pos} declares variable {name[:200]!r} twice"
                )
            vt = wire.message(vd, 2)
            vtype = VAR_TYPES.get(wire.integer(vt, 1, -1), "raw")
            if vtype in ("feed_minibatch", "fetch_list"):
                continue
            dtype, shape, lod_level = _tensor_desc(vt)
            kw = dict(
                shape=shape,
                dtype=dtype,
                lod_level=lod_level,
                type=vtype,
                persistable=bool(wire.integer(vd, 3, 0)),
                stop_gradient=bool(wire.integer(vd, 6, 0)),
            )
            if wire.integer(vd, 5, 0):
                builder.add_var(pos, name, kind="parameter", **kw)
            else:
                builder.add_var(pos, name, need_check_feed=bool(wire.integer(vd, 4, 0)), **kw)
        for oraw in op_msgs:
            od = wire.parse(oraw)
            op_type = wire.string(od, 3)
            if not op_type:
                raise CorruptFileError(f"model file '{path}': block {pos} has an op without a type")
            ins, outs = _slots(wire.messages(od, 1)), _slots(wire.messages(od, 2))
            attrs = {}
            for a in wire.messages(od, 4):
                attrs[wire.string(a, 1, "")] = _attr_value(a)
            if op_type in ("feed", "fetch"):
                slot, table = ("Out", feeds) if op_type == "feed" else ("X", fetches)
                names = (outs if op_type == "feed" else ins).get(slot) or []
                col = attrs.get("col", 0)
                if len(names) != 1 or not isinstance(col, int) or not 0 <= col < 1 << 16:
                    raise CorruptFileError(
                        f"model file '{path}': a {op_type} op needs one '{slot}' variable and "
                        f"a column 0..65535 (given {names[:3]!r}, col {col!r})"
                    )
                if col in table:
                    raise CorruptFileError(
                        f"model file '{path}': two {op_type} ops for column {col}"
                    )
                if op_type == "feed":
                    if not builder.has_var(pos, names[0]):
                        raise CorruptFileError(
                            f"model file '{path}': the feed op writes {names[0][:200]!r}, "
                            f"which the block does not declare"
                        )
                    builder.set_var(pos, names[0], is_data=True)
                table[col] = names[0]
                continue
            if op_type not in ops_reg:
                missing.add(op_type[:100])
                continue
            builder.add_op(
                pos,
                op_type,
                {k: v for k, v in ins.items() if v},
                {k: v for k, v in outs.items() if v},
                _oar_attrs(ops_reg.get(op_type), attrs, nblocks),
            )
    if missing:
        raise UnsupportedOpError(
            f"model file '{path}' uses ops oar does not have: {sorted(missing)[:20]} "
            f"(install the plugin that defines them)"
        )
    for table, what in ((feeds, "feed"), (fetches, "fetch")):
        if sorted(table) != list(range(len(table))):
            raise CorruptFileError(
                f"model file '{path}': {what} columns {sorted(table)[:10]} are not 0..n-1"
            )
    return (
        builder.build(),
        [feeds[k] for k in sorted(feeds)],
        [fetches[k] for k in sorted(fetches)],
    )


def _oar_attrs(opdef: Any, attrs: dict, nblocks: int) -> dict:
    out = {}
    for name, spec in opdef.attrs.items():
        if name not in attrs or attrs[name] is None:
            continue
        value = attrs[name]
        if name.endswith("block") and isinstance(value, int) and not 0 < value < nblocks:
            raise CorruptFileError(
                f"op '{opdef.type}': attribute '{name}' names block {value} of {nblocks}"
            )
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
    if name == "sub_block" and isinstance(value, int):  # Fluid's BLOCK attr: a block index
        return head + w.f_varint(2, BLOCK) + w.f_varint(12, value)
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

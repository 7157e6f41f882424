"""``fluid.DataFeedDesc``: the slot description of a MultiSlot data feed (protobuf text format).

Reads the text proto Fluid's datasets take (``name``, ``batch_size``,
``pipe_command``, ``multi_slot_desc { slots { name type is_dense is_used } }``),
lets ``set_batch_size`` / ``set_dense_slots`` / ``set_use_slots`` change it, and
``desc()`` writes it back as Fluid prints it.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["DataFeedDesc"]

_TOKEN = re.compile(
    r'\s*(?:(\{)|(\})|([A-Za-z_][A-Za-z0-9_]*)\s*:?\s*|("(?:[^"\\]|\\.)*"|[^\s{}]+))'
)


def _tokens(text: str) -> list:
    out, pos = [], 0
    text = re.sub(r"#[^\n]*", "", text)
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise ValueError(
                f"DataFeedDesc: cannot parse the proto text near {text[pos : pos + 30]!r}"
            )
        out.append(m.groups())
        pos = m.end()
    return out


def _value(raw: str) -> Any:
    if raw.startswith('"'):
        return raw[1:-1]
    if raw in ("true", "false"):
        return raw == "true"
    try:
        return int(raw)
    except ValueError:
        return raw


def _parse(tokens: list, i: int = 0) -> tuple:
    fields: list = []
    while i < len(tokens):
        open_, close, name, _ = tokens[i]
        if close:
            return fields, i + 1
        if name is None:
            raise ValueError("DataFeedDesc: expected a field name in the proto text")
        nxt = tokens[i + 1] if i + 1 < len(tokens) else (None, None, None, None)
        if nxt[0]:
            sub, i = _parse(tokens, i + 2)
            fields.append((name, sub))
        else:
            raw = nxt[3] if nxt[3] is not None else nxt[2]
            fields.append((name, _value(raw)))
            i += 2
    return fields, i


class DataFeedDesc:
    """A MultiSlot data-feed description read from ``proto_file``."""

    def __init__(self, proto_file: str) -> None:
        with open(proto_file, encoding="utf-8") as f:
            fields, _ = _parse(_tokens(f.read()))
        self.name = "MultiSlotDataFeed"
        self.batch_size = 32
        self.pipe_command = "cat"
        self.slots: list = []
        for key, value in fields:
            if key == "multi_slot_desc":
                for skey, slot in value:
                    if skey == "slots":
                        self.slots.append(dict(slot))
            elif key in ("name", "batch_size", "pipe_command"):
                setattr(self, key, value)
        self._index = {s.get("name"): i for i, s in enumerate(self.slots)}

    def set_batch_size(self, batch_size: int) -> None:
        self.batch_size = batch_size

    def _slot(self, name: str) -> dict:
        if name not in self._index:
            raise ValueError(f"DataFeedDesc: no slot named {name!r}; slots: {list(self._index)}")
        return self.slots[self._index[name]]

    def set_dense_slots(self, dense_slots_name: list) -> None:
        for name in dense_slots_name:
            self._slot(name)["is_dense"] = True

    def set_use_slots(self, use_slots_name: list) -> None:
        for name in use_slots_name:
            self._slot(name)["is_used"] = True

    def desc(self) -> str:
        """The description in protobuf text format, as Fluid prints it."""

        def fmt(v: Any) -> str:
            if isinstance(v, bool):
                return "true" if v else "false"
            return f'"{v}"' if isinstance(v, str) else str(v)

        lines = [f'name: "{self.name}"', f"batch_size: {self.batch_size}"]
        if self.slots:
            lines.append("multi_slot_desc {")
            for slot in self.slots:
                lines.append("  slots {")
                lines += [f"    {k}: {fmt(v)}" for k, v in slot.items()]
                lines.append("  }")
            lines.append("}")
        lines.append(f'pipe_command: "{self.pipe_command}"')
        return "\n".join(lines) + "\n"

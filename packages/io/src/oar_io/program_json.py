"""Programs as versioned JSON (``Program.to_dict``), wrapped with the feed and fetch names."""

from __future__ import annotations

import json

from oar_io.container import loads_json
from oar_io.errors import CheckpointError, CorruptFileError

MODEL_FORMAT = "oar.inference_model"
MODEL_VERSION = 1


class JsonProgramFormat:
    """The default program format: readable, diffable, and restored exactly by ``Program.from_dict``."""

    name = "json"
    kind = "program"
    checked = True

    def sniff(self, head: bytes) -> bool:
        return head.lstrip()[:1] == b"{"

    def dumps(self, program, feed_names: list, fetch_names: list) -> bytes:
        doc = {
            "format": MODEL_FORMAT,
            "version": MODEL_VERSION,
            "feed_target_names": list(feed_names),
            "fetch_target_names": list(fetch_names),
            "program": program.to_dict(),
        }
        return json.dumps(doc, indent=1, sort_keys=False).encode("utf-8")

    def loads(self, data: bytes, path: str = "<bytes>") -> tuple:
        from oar.api import program_from_dict

        doc = loads_json(data, path, "model")
        if not isinstance(doc, dict):
            raise CorruptFileError(
                f"model file '{path}' holds a JSON {type(doc).__name__}, not a program"
            )
        if doc.get("format") == MODEL_FORMAT:
            if doc.get("version") != MODEL_VERSION:
                raise CorruptFileError(
                    f"model file '{path}': inference model version {doc.get('version')!r} "
                    f"is not supported (this oar-io reads {MODEL_VERSION})"
                )
            prog_doc, feeds, fetches = (
                doc.get("program"),
                doc.get("feed_target_names"),
                doc.get("fetch_target_names"),
            )
        else:  # a bare Program.to_dict()
            prog_doc, feeds, fetches = doc, [], []
        if not (
            isinstance(prog_doc, dict)
            and isinstance(feeds, list)
            and isinstance(fetches, list)
            and all(isinstance(n, str) for n in feeds + fetches)
        ):
            raise CorruptFileError(
                f"model file '{path}': program, feed_target_names and fetch_target_names must be "
                f"an object and two lists of names"
            )
        try:
            program = program_from_dict(prog_doc)
            check_program(program, path)
        except CheckpointError:
            raise
        except (
            ValueError,
            KeyError,
            TypeError,
            IndexError,
            AttributeError,
            OverflowError,
            RecursionError,
        ) as exc:
            raise CorruptFileError(
                f"model file '{path}' does not describe a valid program: {type(exc).__name__}: "
                f"{str(exc)[:300]}"
            ) from None
        return program, list(feeds), list(fetches)


def check_program(program, path: str) -> None:
    """Structure a loaded program must have before anything walks it (no parent cycles)."""
    n = len(program.blocks)
    if not n:
        raise CorruptFileError(f"model file '{path}' holds no blocks")
    for pos, b in enumerate(program.blocks):
        if (
            type(b.idx) is not int
            or b.idx != pos
            or type(b.parent_idx) is not int
            or not -1 <= b.parent_idx < pos
        ):
            raise CorruptFileError(
                f"model file '{path}': block {pos} says idx {b.idx!r}, parent {b.parent_idx!r}; "
                f"blocks must be numbered in order and have an earlier parent"
            )
        for name, v in b.vars.items():
            if not isinstance(name, str) or not name or getattr(v, "name", None) != name:
                raise CorruptFileError(f"model file '{path}': block {pos} has a bad variable name")
            shape = getattr(v, "shape", None)
            if shape is not None and (
                not isinstance(shape, (list, tuple)) or not all(type(d) is int for d in shape)
            ):
                raise CorruptFileError(
                    f"model file '{path}': variable {name[:200]!r} has shape {str(shape)[:100]}"
                )
        for op in b.ops:
            for name, value in op.attrs.items():
                if name.endswith("block") and type(value) is int and not 0 < value < n:
                    raise CorruptFileError(
                        f"model file '{path}': op '{op.type}' attribute '{name}' names block "
                        f"{value} of {n}"
                    )

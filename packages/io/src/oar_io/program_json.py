"""Programs as versioned JSON (``Program.to_dict``), wrapped with the feed and fetch names."""

from __future__ import annotations

import json

from oar_io.errors import CorruptFileError

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

        try:
            doc = json.loads(data)
        except ValueError as exc:
            raise CorruptFileError(f"model file '{path}' is not valid JSON: {exc}") from None
        if doc.get("format") == MODEL_FORMAT:
            if doc.get("version") != MODEL_VERSION:
                raise CorruptFileError(
                    f"model file '{path}': inference model version {doc.get('version')!r} "
                    f"is not supported (this oar-io reads {MODEL_VERSION})"
                )
            prog_doc, feeds, fetches = (
                doc["program"],
                doc["feed_target_names"],
                doc["fetch_target_names"],
            )
        else:  # a bare Program.to_dict()
            prog_doc, feeds, fetches = doc, [], []
        try:
            program = program_from_dict(prog_doc)
        except (ValueError, KeyError, TypeError) as exc:
            raise CorruptFileError(f"model file '{path}': {exc}") from None
        return program, list(feeds), list(fetches)

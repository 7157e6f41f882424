"""Errors raised when a saved file cannot be loaded: each names the file and the variable."""

from __future__ import annotations

from oar.errors import OarError


class CheckpointError(OarError, ValueError):
    """A saved file is damaged, of an unknown format, or does not fit the program."""


class CorruptFileError(CheckpointError):
    """A checksum, magic number or header field does not verify."""


class TruncatedFileError(CorruptFileError):
    """A file ends before the data its header announces."""


class MismatchError(CheckpointError):
    """The file is intact but holds a different name, dtype or shape than the program expects."""


class MissingVariableError(CheckpointError, FileNotFoundError):
    """A variable the program needs has no file (or no entry) in the checkpoint."""


class UnsafePathError(CheckpointError):
    """A file name derived from a variable or model would lie outside the target directory."""


class LimitExceededError(CorruptFileError):
    """A file declares more (data, nesting, entries) than it holds or than a loader accepts."""


class UnsupportedOpError(CheckpointError, NotImplementedError):
    """A model file uses ops no installed plugin defines."""


def at(path: str, name: str | None) -> str:
    """``file 'p' (variable 'v')`` for messages."""
    return f"file '{path}'" + (f" (variable '{name}')" if name else "")

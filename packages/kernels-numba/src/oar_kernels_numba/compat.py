"""Whether numba can run here, decided cheaply (package metadata, no ``import numba``).

numba pins the NumPy and Python versions it supports (``Requires-Dist`` /
``Requires-Python`` of its distribution) and refuses to import outside them; the
plugin checks the same constraints at ``import oar`` so an unsupported combination
is reported by ``oar plugins`` as unavailable instead of failing later. The real
import happens when a covered op family is first used (:func:`load_numba`).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import logging
import re
import sys

log = logging.getLogger("oar.kernels_numba")

_CMP = {
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
}


def _version_tuple(text: str) -> tuple:
    parts = []
    for p in text.split("."):
        m = re.match(r"\d+", p)
        if m is None:
            break
        parts.append(int(m.group()))
    return tuple(parts)


def _satisfies(version: str, spec: str) -> bool:
    """``version`` against a comma list like ``>=1.24,<2.4`` (enough for numba's pins)."""
    have = _version_tuple(version)
    for clause in spec.split(","):
        m = re.match(r"\s*(<=|>=|==|!=|<|>)\s*([\w.*]+)", clause)
        if m is None:
            continue
        op, want = m.group(1), m.group(2).replace(".*", "")
        want_t = _version_tuple(want)
        if not _CMP[op](have[: len(want_t)] if op in ("==", "!=") else have, want_t):
            return False
    return True


def unavailable_reason() -> str | None:
    """Why numba cannot run here (not installed, unsupported NumPy or Python), or None."""
    if importlib.util.find_spec("numba") is None:
        return "numba is not installed (pip install numba)"
    try:
        meta = importlib.metadata.metadata("numba")
        numba_version = meta["Version"]
        requires = importlib.metadata.requires("numba") or []
        numpy_version = importlib.metadata.version("numpy")
    except importlib.metadata.PackageNotFoundError:  # a source checkout: trust the import
        return None
    py = ".".join(map(str, sys.version_info[:3]))
    if meta["Requires-Python"] and not _satisfies(py, meta["Requires-Python"]):
        return f"numba {numba_version} does not support Python {py} ({meta['Requires-Python']})"
    for req in requires:
        m = re.match(r"\s*numpy\s*([^;]*)", req)
        if m and m.group(1).strip() and not _satisfies(numpy_version, m.group(1).strip("() ")):
            return (
                f"numba {numba_version} does not support NumPy {numpy_version} "
                f"(it requires numpy {m.group(1).strip()})"
            )
    return None


_numba = None
_error: str | None = None


def load_numba():
    """numba, imported once; None (and a logged warning) if the import fails anyway."""
    global _numba, _error
    if _numba is None and _error is None:
        try:
            import numba

            _numba = numba
        except Exception as exc:  # ImportError, or numba's own version checks
            _error = f"{type(exc).__name__}: {exc}"
            log.warning("oar-kernels-numba: numba failed to import, numpy kernels stay: %s", _error)
    return _numba

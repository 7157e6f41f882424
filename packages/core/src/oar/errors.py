"""Exception types oar raises, and the one place their messages are formatted.

Every user error says which op or layer, which variable, what was expected,
what was given, and the user's source line that created the op.
"""

from __future__ import annotations

from typing import Any


class OarError(Exception):
    """Base class for oar's own errors."""


class ShapeError(OarError, ValueError):
    """A shape does not fit what an op or layer needs."""


class DtypeError(OarError, TypeError):
    """A dtype does not fit what an op or layer needs."""


class AttrError(OarError, ValueError):
    """An op attribute is unknown, of the wrong type or out of range."""


class RegistryError(OarError, ValueError):
    """A plugin registered something twice, or something unknown."""


class KernelNotFoundError(OarError, RuntimeError):
    """No kernel is registered for an op on a device and dtype."""


class DeviceUnavailableError(OarError, RuntimeError):
    """The place asked for has no available device."""


class UninitializedVariableError(OarError, RuntimeError):
    """A program read a variable that holds no value in the scope."""


class FeedError(OarError, ValueError):
    """A feed names an unknown variable, or its value does not fit the variable."""


class FetchError(OarError, ValueError):
    """A fetch names a variable the program does not have."""


class MissingPluginError(OarError, ImportError):
    """A public name belongs to a plugin distribution that is not installed."""


class OpRuntimeError(OarError, RuntimeError):
    """A kernel failed while running an op; the message names the op and its line."""


class EOFException(OarError):
    """A non-iterable reader ran out of data for this epoch (``fluid.core.EOFException``)."""


def describe_var(name: str, meta: Any = None) -> str:
    """``name`` with shape and dtype when known, for messages."""
    if meta is None:
        return f"'{name}'"
    return f"'{name}' (shape {list(meta.shape)}, dtype {meta.dtype})"


def at_user_line() -> str:
    """The user's line calling into oar right now (for errors raised outside an op), or ''."""
    from oar.framework.callsite import user_callsite

    site = user_callsite()
    if not site:
        return ""
    filename, lineno, func, text = site
    line = f" [{text.strip()}]" if text else ""
    return f"\n  called at {filename}:{lineno} in {func}{line}"


def where(callsite: Any) -> str:
    """The user's source line as ``file:line``, or an empty string."""
    if not callsite:
        return ""
    filename, lineno, func, text = callsite
    line = f" [{text.strip()}]" if text else ""
    return f"\n  created at {filename}:{lineno} in {func}{line}"

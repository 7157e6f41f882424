"""Exception types oar raises, and the one place their messages are formatted.

Every user error says which op or layer, which variable, what was expected,
what was given, and the user's source line that created the op.
"""

from __future__ import annotations

from typing import Any


class OarError(Exception):
    """Base class for oar's own errors: a message plus structured context that renders itself.

    ``op`` (the op type), ``layer`` (the layer function or dygraph class that raised),
    ``variable`` (the variable's name) and ``callsite`` ((file, line, function, source) of the
    user's line) are fields: code that adds context sets a field that is still None, and
    ``str()`` renders them (``"<layer>: "`` before the message, or ``"layer '<layer>': "``
    before ``"op '<op>': "``, then the user's line). ``entry`` is the public layer the user
    called when the error came from a layer it called in turn (``ones`` -> ``fill_constant``).
    ``args[0]`` stays the bare message.
    """

    def __init__(
        self,
        *args: Any,
        op: str | None = None,
        layer: str | None = None,
        variable: str | None = None,
        callsite: tuple | None = None,
        created: bool | None = None,
        entry: str | None = None,
    ) -> None:
        super().__init__(*args)
        self.op = op
        self.layer = layer
        self.variable = variable
        self.callsite = callsite
        # the callsite is where the failing op was created (not the layer call being run)
        self.created = created
        self.entry = entry

    def __str__(self) -> str:
        body = super().__str__()
        head = ""
        if self.entry is not None and self.entry not in (self.layer, self.op):
            head = f"{self.entry}: "
        if self.layer is not None and self.op is None:
            head += f"{self.layer}: "
        elif self.layer is not None and self.layer != self.op:
            head += f"layer '{self.layer}': "
        if self.op is not None:
            head += f"op '{self.op}': "
        return head + body + site(self.callsite, "created" if self.created else "called")

    @classmethod
    def in_layer(cls, layer: str, message: str, **fields: Any) -> OarError:
        """``cls(message)`` raised by ``layer`` (renders as ``"<layer>: <message>"``)."""
        return cls(message, layer=layer, **fields)

    def with_context(self, **fields: Any) -> OarError:
        """Fill the fields that are still None (context is added once, innermost wins); self."""
        for k, v in fields.items():
            if v is not None and getattr(self, k, None) is None:
                setattr(self, k, v)
        return self

    def __reduce__(self):  # keep the fields across pickling (process readers, dist workers)
        return (_rebuild, (type(self), self.args, dict(self.__dict__)))


def _rebuild(cls: type, args: tuple, state: dict) -> OarError:
    exc = cls.__new__(cls)
    Exception.__init__(exc, *args)
    exc.__dict__.update(state)
    return exc


class ArgumentError(OarError, ValueError):
    """A layer's argument has a bad value: ``ArgumentError(layer, message)``."""

    def __init__(self, layer: str, message: str, **fields: Any) -> None:
        super().__init__(message, layer=layer, **fields)


class ArgumentTypeError(OarError, TypeError):
    """A layer's argument has a bad type: ``ArgumentTypeError(layer, message)``."""

    def __init__(self, layer: str, message: str, **fields: Any) -> None:
        super().__init__(message, layer=layer, **fields)


class ShapeError(OarError, ValueError):
    """A shape does not fit what an op or layer needs."""


class DtypeError(OarError, TypeError):
    """A dtype does not fit what an op or layer needs."""


class AttrError(OarError, ValueError):
    """An op attribute is unknown, of the wrong type or out of range."""


class RegistryError(OarError, ValueError):
    """A plugin registered something twice, or something unknown."""


class OpError(OarError, ValueError):
    """An op was appended with an unknown or missing input/output slot."""


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


class PluginUnavailableError(OarError, RuntimeError):
    """Raised by a plugin's registration hook when what it needs is missing here (a library not
    installed, or one that does not support this Python or NumPy): the plugin is rolled back
    and listed as unavailable, with this message, by ``oar plugins``."""


class NotProvidedError(OarError, AttributeError):
    """A Fluid 1.8 public name oar does not provide (yet); the message says why (docs/public-names.md)."""


class OpRuntimeError(OarError, RuntimeError):
    """A kernel failed while running an op; the message names the op and its line."""


class EOFException(OarError):
    """A non-iterable reader ran out of data for this epoch (``fluid.core.EOFException``)."""


def describe_var(name: str, meta: Any = None) -> str:
    """``name`` with shape and dtype when known, for messages."""
    if meta is None:
        return f"'{name}'"
    return f"'{name}' (shape {list(meta.shape)}, dtype {meta.dtype})"


def site(callsite: Any, verb: str = "called") -> str:
    """``callsite`` rendered as the message's last line (``called at`` / ``created at``), or ''."""
    if not callsite:
        return ""
    filename, lineno, func, text = callsite
    line = f" [{text.strip()}]" if text else ""
    return f"\n  {verb} at {filename}:{lineno} in {func}{line}"


def user_site() -> tuple | None:
    """The user's line calling into oar right now, as a callsite tuple (or None)."""
    from oar.framework.callsite import user_callsite

    return user_callsite()


def at_user_line() -> str:
    """The user's line calling into oar right now, rendered (for plain exceptions), or ''."""
    return site(user_site(), "called")


def where(callsite: Any) -> str:
    """An op's creation site rendered as the message's last line, or ''."""
    return site(callsite, "created")

"""Registries that plugins fill: op definitions, devices, kernels and named extras.

An op definition (:class:`OpDef`) is device-agnostic and serves the static
executor and dygraph alike. Kernels are keyed by (op type, device, dtype) and
carry a priority, so a third-party plugin can override a built-in one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import attrs

from oar.errors import AttrError, RegistryError
from oar.kernel_entry import EMPTY_VAR, KernelEntry


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED = _Required()
GRAD_SUFFIX = "@GRAD"


@attrs.frozen
class Slot:
    """An input or output slot of an op. ``duplicable`` slots take a list of variables."""

    name: str
    duplicable: bool = False
    dispensable: bool = False


@attrs.frozen
class Attr:
    """An op attribute: accepted Python type(s), default, and an optional check.

    ``check(value)`` returns an error message (str) when the value is not allowed.
    """

    type: Any
    default: Any = REQUIRED
    check: Callable[[Any], str | None] | None = None


@attrs.frozen
class VarMeta:
    """What shape inference knows of a variable: ``-1`` marks an unknown dim."""

    shape: tuple
    dtype: str
    lod_level: int = 0


@attrs.frozen
class GradSpec:
    """The common grad-op shape: one ``<type>_grad`` op.

    ``inputs`` lists forward slots the grad op reads (``"X"``, ``"Out"``) and
    output-grad slots (``"Out@GRAD"``); ``outputs`` lists the input-grad slots
    it writes (``"X@GRAD"``). The grad op gets the forward op's attrs.
    """

    inputs: tuple
    outputs: tuple
    type: str | None = None


@attrs.frozen
class GradOpDesc:
    """One op a grad maker asks for: names per slot, as in the IR."""

    type: str
    inputs: Mapping[str, list]
    outputs: Mapping[str, list]
    attrs: Mapping[str, Any] = attrs.field(factory=dict)


class GradContext:
    """What a grad maker sees of a forward op: names per slot, attrs, grad names.

    ``input_grad(slot)`` gives, per input variable, the name its gradient
    should be written to, or :data:`EMPTY_VAR` where no gradient is wanted.
    ``output_grad(slot)`` gives the names of the output gradients.
    """

    __slots__ = ("type", "inputs", "outputs", "attrs", "_input_grads", "_output_grads")

    def __init__(self, type, inputs, outputs, attrs, input_grads, output_grads):
        self.type = type
        self.inputs = inputs
        self.outputs = outputs
        self.attrs = attrs
        self._input_grads = input_grads
        self._output_grads = output_grads

    def input(self, slot: str) -> list:
        return list(self.inputs.get(slot, ()))

    def output(self, slot: str) -> list:
        return list(self.outputs.get(slot, ()))

    def input_grad(self, slot: str) -> list:
        return list(self._input_grads.get(slot, ()))

    def output_grad(self, slot: str) -> list:
        return list(self._output_grads.get(slot, ()))

    def wants(self, slot: str) -> bool:
        """True if any variable of input ``slot`` needs a gradient."""
        return any(n != EMPTY_VAR for n in self._input_grads.get(slot, ()))


def _spec_to_maker(fwd_type: str, spec: GradSpec) -> Callable[[GradContext], list]:
    grad_type = spec.type or fwd_type + "_grad"

    def maker(g: GradContext) -> list:
        ins = {}
        for s in spec.inputs:
            if s.endswith(GRAD_SUFFIX):
                ins[s] = g.output_grad(s[: -len(GRAD_SUFFIX)])
            else:
                names = g.input(s) if s in g.inputs else g.output(s)
                if names:
                    ins[s] = names
        outs = {}
        for s in spec.outputs:
            names = g.input_grad(s[: -len(GRAD_SUFFIX)])
            if any(n != EMPTY_VAR for n in names):
                outs[s] = names
        if not outs:
            return []
        return [GradOpDesc(grad_type, ins, outs, dict(g.attrs))]

    maker.grad_spec = spec  # type: ignore[attr-defined]
    return maker


def _parse_slot(s: Any) -> Slot:
    """``"X"`` required; ``"X?"`` dispensable; ``"X*"`` duplicable; ``"X*?"`` both."""
    if isinstance(s, Slot):
        return s
    dispensable = s.endswith("?")
    s = s.rstrip("?")
    duplicable = s.endswith("*")
    return Slot(s.rstrip("*"), duplicable=duplicable, dispensable=dispensable)


def _as_slots(slots: Iterable) -> tuple:
    return tuple(_parse_slot(s) for s in slots)


@attrs.define
class OpDef:
    """A device-agnostic op definition.

    ``infer_shape(ins, attrs) -> {out slot: VarMeta or [VarMeta]}`` where ``ins``
    maps each input slot to a :class:`VarMeta` (a list for duplicable slots,
    ``None`` when a dispensable slot is absent). It raises ``ValueError`` with a
    message naming the slot; the caller adds the op, variables and user line.

    ``grad`` is a :class:`GradSpec`, a maker ``f(GradContext) -> [GradOpDesc]``,
    or ``None`` for ops without a gradient.

    ``kernel_dtype`` names the input slot whose dtype selects the kernel, or an
    attr name prefixed with ``"attr:"``; by default the first input present,
    else the ``dtype`` attr, else float32.

    ``share_lod`` lists (input slot, output slot) pairs whose LoD is passed on.

    ``infer_var_type(inputs, outputs, attrs) -> {var name: var type}`` lets an op
    mark outputs as ``selected_rows`` (sparse gradients) when the IR is built.
    """

    type: str
    inputs: tuple = attrs.field(converter=_as_slots, factory=tuple)
    outputs: tuple = attrs.field(converter=_as_slots, factory=tuple)
    attrs: dict = attrs.field(factory=dict)
    infer_shape: Callable | None = None
    grad: Any = None
    kernel_dtype: str | None = None
    share_lod: tuple = ()
    infer_var_type: Callable | None = None
    doc: str = ""

    def __attrs_post_init__(self):
        if isinstance(self.grad, GradSpec):
            self.grad = _spec_to_maker(self.type, self.grad)

    @property
    def input_names(self) -> tuple:
        return tuple(s.name for s in self.inputs)

    @property
    def output_names(self) -> tuple:
        return tuple(s.name for s in self.outputs)

    def slot(self, name: str) -> Slot | None:
        for s in self.inputs + self.outputs:
            if s.name == name:
                return s
        return None

    def complete_attrs(self, given: Mapping[str, Any] | None) -> dict:
        """Defaults filled in, unknown names and wrong types refused."""
        given = dict(given or {})
        out = {}
        for name, spec in self.attrs.items():
            if name in given:
                value = _coerce_attr(self.type, name, spec, given.pop(name))
            elif spec.default is REQUIRED:
                raise AttrError(f"attribute '{name}' is required but not given", op=self.type)
            else:
                value = spec.default
            out[name] = value
        for name, value in given.items():
            if name.startswith("op_") or name in _FREE_ATTRS:
                out[name] = value  # framework-level annotations (role, namescope, device)
                continue
            raise AttrError(
                f"unknown attribute '{name}' (given {value!r}); "
                f"known attributes: {sorted(self.attrs)}",
                op=self.type,
            )
        return out


_FREE_ATTRS = frozenset({"is_test_annotation", "use_mkldnn", "use_cudnn", "name"})


def _coerce_attr(op_type: str, name: str, spec: Attr, value: Any) -> Any:
    kind = spec.type
    if kind is not None and kind is not Any:
        value = _coerce_type(op_type, name, kind, value)
    if spec.check is not None and value is not None:
        msg = spec.check(value)
        if msg:
            raise AttrError(f"attribute '{name}' {msg}, given {value!r}", op=op_type)
    return value


def _coerce_type(op_type, name, kind, value):
    import numpy as np

    if value is None:
        return None
    if (
        kind is float
        and isinstance(value, (int, float, np.integer, np.floating))
        and not isinstance(value, bool)
    ):
        return float(value)
    if kind is int and isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return int(value)
    if kind is bool and isinstance(value, (bool, np.bool_)):
        return bool(value)
    if kind is str and isinstance(value, str):
        return value
    if kind in (list, tuple) and isinstance(value, (list, tuple, np.ndarray)):
        return [v.item() if isinstance(v, np.generic) else v for v in list(value)]
    if not isinstance(kind, type) or kind not in (float, int, bool, str, list, tuple):
        if isinstance(value, kind):
            return value
    tname = kind.__name__ if isinstance(kind, type) else str(kind)
    raise AttrError(
        f"attribute '{name}' expects {tname}, given {type(value).__name__} {value!r}", op=op_type
    )


class OpRegistry:
    """Op type -> :class:`OpDef`. Refuses duplicates."""

    def __init__(self) -> None:
        self._ops: dict[str, OpDef] = {}
        self._owner: dict[str, str] = {}
        self._family: dict[str, str] = {}
        self.current_plugin = "?"
        #: the op family (``oar.ops`` module name) being registered; kernels of its ops load lazily
        self.current_family: str | None = None

    def register_op(self, opdef: OpDef) -> OpDef:
        if opdef.type in self._ops:
            raise RegistryError(
                f"op '{opdef.type}' is registered twice: by {self._owner[opdef.type]} and {self.current_plugin}"
            )
        self._ops[opdef.type] = opdef
        self._owner[opdef.type] = self.current_plugin
        if self.current_family is not None:
            self._family[opdef.type] = self.current_family
        maker = opdef.grad
        spec = getattr(maker, "grad_spec", None)
        if spec is not None:
            grad_type = spec.type or opdef.type + "_grad"
            if grad_type not in self._ops:
                fwd_slots = {s.name: s for s in opdef.inputs + opdef.outputs}
                gin = [_grad_slot(s, fwd_slots) for s in spec.inputs]
                gout = [_grad_slot(s, fwd_slots) for s in spec.outputs]
                self.register_op(
                    OpDef(
                        grad_type,
                        gin,
                        gout,
                        dict(opdef.attrs),
                        kernel_dtype=None,
                        doc=f"gradient of {opdef.type}",
                    )
                )
        return opdef

    def get(self, op_type: str) -> OpDef:
        try:
            return self._ops[op_type]
        except KeyError:
            raise RegistryError(
                f"unknown op type '{op_type}': no installed plugin defines it "
                f"(see `oar plugins` for what is installed)"
            ) from None

    def __contains__(self, op_type: str) -> bool:
        return op_type in self._ops

    def types(self) -> list:
        return sorted(self._ops)

    def owner(self, op_type: str) -> str:
        return self._owner.get(op_type, "?")

    def remove_owned_by(self, plugin: str) -> None:
        """Forget every op ``plugin`` registered (rolling back a plugin that failed)."""
        for op_type in [t for t, owner in self._owner.items() if owner == plugin]:
            del self._ops[op_type], self._owner[op_type]
            self._family.pop(op_type, None)

    def family(self, op_type: str) -> str | None:
        """The op family (module of ``oar.ops``) that defines ``op_type``; None for other plugins' ops."""
        return self._family.get(op_type)


def _grad_slot(name: str, fwd_slots: Mapping[str, Slot]) -> Slot:
    base = name[: -len(GRAD_SUFFIX)] if name.endswith(GRAD_SUFFIX) else name
    fs = fwd_slots.get(base)
    dup = fs.duplicable if fs else False
    return Slot(name, duplicable=dup, dispensable=True)


@attrs.define
class Device:
    """A device a kernel plugin provides.

    ``xp`` is its array module (numpy, cupy); ``available`` and ``count`` must be
    cheap (no GPU probing at import). ``from_host``/``to_host`` move arrays.
    """

    name: str
    available: Callable[[], bool]
    count: Callable[[], int]
    get_xp: Callable[[], Any]
    from_host: Callable[[Any, int], Any]
    to_host: Callable[[Any], Any]
    synchronize: Callable[[int], None] = attrs.field(default=lambda device_id=0: None)
    # why ``available()`` is false (no driver, library missing...), for error messages
    unavailable_reason: Callable[[], str | None] = attrs.field(default=lambda: None)
    plugin: str = "?"

    @property
    def xp(self):
        return self.get_xp()


class DeviceRegistry:
    """Device name -> :class:`Device`."""

    def __init__(self) -> None:
        self._devices: dict[str, Device] = {}
        self.current_plugin = "?"

    def register_device(self, device: Device) -> Device:
        if device.name in self._devices:
            raise RegistryError(f"device '{device.name}' is registered twice")
        device.plugin = self.current_plugin
        self._devices[device.name] = device
        return device

    def get(self, name: str) -> Device | None:
        return self._devices.get(name)

    def remove_owned_by(self, plugin: str) -> None:
        """Forget every device ``plugin`` registered (rolling back a plugin that failed)."""
        self._devices = {n: d for n, d in self._devices.items() if d.plugin != plugin}

    def names(self) -> list:
        return sorted(self._devices)

    def __iter__(self):
        return iter(self._devices.values())


class KernelRegistry:
    """(op type, device, dtype) -> kernel, highest priority first."""

    def __init__(self, ops: OpRegistry) -> None:
        self._ops = ops
        self._entries: dict[tuple, list] = {}
        self._cache: dict[tuple, KernelEntry | None] = {}
        self._lazy: dict[str, list] = {}  # op family -> [(load, plugin)] not run yet
        self._lock = threading.RLock()
        self.current_plugin = "?"

    def register_lazy(self, families: Iterable[str], load: Callable[[str], None]) -> None:
        """Defer registering kernels: ``load(family)`` runs (and calls :meth:`register_kernel`)
        the first time a kernel of an op of that family is looked up, or all are listed.

        Families are the module names of ``oar.ops`` (see :meth:`OpRegistry.family`).
        Keeps ``import oar`` from importing every kernel module.
        """
        for family in families:
            self._lazy.setdefault(family, []).append((load, self.current_plugin))

    def _load(self, family: str | None) -> None:
        with self._lock:
            pending = self._lazy.pop(family, None) if family is not None else None
            for load, plugin in pending or ():
                old, self.current_plugin = self.current_plugin, plugin
                try:
                    load(family)
                finally:
                    self.current_plugin = old

    def _load_all(self) -> None:
        for family in list(self._lazy):
            self._load(family)

    def register_kernel(
        self,
        op_type: str,
        device: str,
        dtypes: Sequence[str] | str | None,
        kernel: Callable,
        priority: int = 0,
        *,
        lod: bool = False,
        selected_rows: bool = False,
        wants_outputs: bool = False,
        inplace: bool = False,
        no_need_buffer: Sequence[str] = (),
        generic: bool | None = None,
        small: tuple | None = None,
    ) -> None:
        """Register ``kernel(inputs, attrs) -> {slot: array}`` for an op on a device.

        ``dtypes`` is a dtype name, a sequence of them, or ``None`` for any dtype.
        The keyword flags change how the kernel is called (see
        :class:`oar.kernel_entry.KernelEntry`); ``generic`` records that it was
        instantiated from array-generic code (``oar.kernel_family``).
        """
        if op_type not in self._ops:
            raise RegistryError(
                f"{self.current_plugin}: kernel for unknown op '{op_type}' on '{device}'; "
                f"register the op definition with oar_register_ops first"
            )
        dtypes = (dtypes,) if isinstance(dtypes, str) else dtypes
        for dt in dtypes if dtypes is not None else (None,):
            bucket = self._entries.setdefault((op_type, device, dt), [])
            for e in bucket:
                if e.priority == priority:
                    raise RegistryError(
                        f"kernel ({op_type}, {device}, {dt or 'any dtype'}) at priority {priority} "
                        f"is registered twice: by {e.plugin} and {self.current_plugin}; "
                        f"use a different priority to override"
                    )
            bucket.append(
                KernelEntry(
                    op_type,
                    device,
                    dt,
                    kernel,
                    priority,
                    self.current_plugin,
                    lod=lod,
                    selected_rows=selected_rows,
                    wants_outputs=wants_outputs,
                    inplace=inplace,
                    no_need_buffer=tuple(no_need_buffer),
                    generic=generic,
                    small=None if small is None else (str(small[0]), int(small[1])),
                )
            )
            bucket.sort(key=lambda e: -e.priority)
        self._cache.clear()

    def lookup(self, op_type: str, device: str, dtype: str | None) -> KernelEntry | None:
        key = (op_type, device, dtype)
        try:
            return self._cache[key]
        except KeyError:
            pass
        if self._lazy:
            self._load(self._ops.family(op_type))
        cands = list(self._entries.get(key, ())) + list(
            self._entries.get((op_type, device, None), ())
        )
        best = max(cands, key=lambda e: e.priority) if cands else None
        self._cache[key] = best
        return best

    def lookup_below(
        self, op_type: str, device: str, dtype: str | None, priority: int
    ) -> KernelEntry | None:
        """The best kernel below ``priority``: the one a higher-priority kernel overrides, for a
        kernel that hands the cases it does not cover back to it."""
        below = (e for e in self.candidates(op_type, device, dtype) if e.priority < priority)
        return next(below, None)

    def remove_owned_by(self, plugin: str) -> None:
        """Forget every kernel (and deferred family) ``plugin`` registered (a failed plugin)."""
        with self._lock:
            for key, bucket in list(self._entries.items()):
                kept = [e for e in bucket if e.plugin != plugin]
                if kept:
                    self._entries[key] = kept
                else:
                    del self._entries[key]
            for family, pending in list(self._lazy.items()):
                kept = [(load, owner) for load, owner in pending if owner != plugin]
                if kept:
                    self._lazy[family] = kept
                else:
                    del self._lazy[family]
            self._cache.clear()

    def devices_for(self, op_type: str) -> set:
        self._load(self._ops.family(op_type))
        return {k[1] for k in self._entries if k[0] == op_type}

    def dtypes_for(self, op_type: str, device: str) -> list:
        """The dtypes ``op_type`` has a kernel for on ``device`` (``None`` = any dtype)."""
        self._load(self._ops.family(op_type))
        return sorted(
            {k[2] for k in self._entries if k[0] == op_type and k[1] == device},
            key=lambda d: (d is not None, str(d)),
        )

    def candidates(self, op_type: str, device: str, dtype: str | None) -> list:
        """Every kernel that could serve (op, device, dtype), the winner first."""
        self._load(self._ops.family(op_type))
        cands = list(self._entries.get((op_type, device, dtype), ())) + list(
            self._entries.get((op_type, device, None), ()) if dtype is not None else ()
        )
        return sorted(cands, key=lambda e: -e.priority)

    def entries(self) -> list:
        """Every registered kernel (lazily registered families are loaded first)."""
        self._load_all()
        return [e for b in self._entries.values() for e in b]


class NamedRegistry:
    """``name -> object`` for readers, formats, transports and collective backends."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._items: dict[str, Any] = {}
        self._owner: dict[str, str] = {}
        self.current_plugin = "?"

    def register(self, name: str, obj: Any) -> Any:
        if name in self._items:
            raise RegistryError(
                f"{self.kind} '{name}' is registered twice: by {self._owner[name]} and {self.current_plugin}"
            )
        self._items[name] = obj
        self._owner[name] = self.current_plugin
        return obj

    def get(self, name: str) -> Any:
        try:
            return self._items[name]
        except KeyError:
            raise RegistryError(
                f"unknown {self.kind} '{name}'; registered: {sorted(self._items)}"
            ) from None

    def __contains__(self, name: str) -> bool:
        return name in self._items

    def remove_owned_by(self, plugin: str) -> None:
        """Forget every name ``plugin`` registered (rolling back a plugin that failed)."""
        for name in [n for n, owner in self._owner.items() if owner == plugin]:
            del self._items[name], self._owner[name]

    def names(self) -> list:
        return sorted(self._items)

    def items(self):
        return self._items.items()

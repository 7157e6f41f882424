"""A registered kernel and its calling convention, in one place.

A kernel is ``kernel(inputs, attrs) -> {slot: array}``; the opt-in flags of
``register_kernel`` (``lod``, ``selected_rows``, ``wants_outputs``,
``inplace``, ``no_need_buffer``) change how it is called. This module is the
only one that reads those flags: the static executor's generic loop, the code
its step generator emits and the eager tracer all call kernels through
:class:`KernelEntry` and :class:`KernelCall`, which turn the flags into
behaviour (what the inputs hold, which arguments the kernel gets, how its
results are read, which inputs it may overwrite, which it reads only for their
shape).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import attrs
import numpy as np

from oar.lod_tensor import LoDTensor, SelectedRows

EMPTY_VAR = "@EMPTY@"


@attrs.define(slots=True, eq=False)
class KernelEntry:
    """A registered kernel and how it wants to be called.

    ``lod``: receives :class:`oar.LoDTensor` objects for inputs that carry LoD
    (and may return LoDTensors). ``selected_rows``: receives
    :class:`oar.SelectedRows` values as they are instead of densified arrays.
    ``wants_outputs``: called as ``kernel(inputs, attrs, wanted)`` where
    ``wanted`` is the frozenset of output slots the program uses, so a grad
    kernel can skip gradients nobody reads (and may leave them out of its result).
    ``inplace``: also called with ``donated=frozenset(input slots)`` naming inputs
    whose arrays nothing else references after this op (the executor checks);
    the kernel may overwrite them, e.g. return ``np.maximum(x, 0, out=x)``.
    Callers that pass no ``donated`` (dygraph, tests) donate nothing.
    ``no_need_buffer``: input slots whose values the kernel never reads, only
    their shape and dtype (Fluid's NoNeedBufferVars, e.g. ``X`` and ``Y`` of
    ``elementwise_add_grad``). Such a read does not keep the array alive: the
    executor may pass a zero-strided read-only stand-in of the same shape.
    ``generic``: ``True`` when the kernel was instantiated from array-generic
    code for this device's array module (``oar.kernel_family``), ``False`` when
    such a module declared it numpy-only, ``None`` for a kernel registered
    directly for its device.
    ``small``: ``(slot, threshold)`` when the kernel hands every call whose ``slot`` input (a
    dense array) has fewer than ``threshold`` elements, unchanged, to the kernel it overrides
    (the best one below its priority), as compiled kernels do where a call's dispatch costs
    more than numpy's whole work. A plan then calls that kernel directly for such calls (one
    size test in the generated code instead of a call through this kernel).
    """

    op_type: str
    device: str
    dtype: str | None
    kernel: Callable
    priority: int = 0
    plugin: str = "?"
    lod: bool = False
    selected_rows: bool = False
    wants_outputs: bool = False
    inplace: bool = False
    no_need_buffer: tuple = ()
    generic: bool | None = None
    small: tuple | None = None
    #: callable as ``kernel(inputs, attrs)`` on plain arrays with every output in the result:
    #: the eager fast path calls it so; otherwise :meth:`call`
    direct: bool = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        self.direct = not self.wants_outputs

    @classmethod
    def for_chain(
        cls, op_type: str, device: str, kernel: Callable, fusion: Any, chain: list, inputs: dict
    ) -> KernelEntry:
        """The entry of ``fusion``'s kernel (an :class:`oar.fusion.Fusion`) replacing the ops
        of the kernels ``chain``, with input slots ``"<k>.<slot>"`` (``inputs``): a slot that op
        ``k``'s kernel reads only for its shape (``no_need_buffer``) stays so; an ``inplace``
        fusion's kernel takes ``donated=``."""
        nnb = tuple(
            f"{k}.{slot}"
            for k, entry in enumerate(chain)
            for slot in entry.no_need_buffer
            if f"{k}.{slot}" in inputs
        )
        return cls(
            op_type,
            device,
            None,
            kernel,
            plugin=fusion.plugin,
            no_need_buffer=nnb,
            inplace=fusion.inplace,
        )

    def call(self, inputs: dict, attrs: dict, wanted: frozenset) -> dict:
        """Run the kernel on plain values; ``wanted`` = the output slots the caller reads."""
        if self.wants_outputs:
            return self.kernel(inputs, attrs, wanted)
        return self.kernel(inputs, attrs)

    def call_eager(self, inputs: dict, attrs: dict, wanted: Any) -> dict:
        """Run the kernel on eager values: LoDTensors and SelectedRows adapted to what it
        accepts. ``wanted``: a frozenset of output slots, or ``{slot: variables}`` (the
        slots given variables are wanted)."""
        if not (self.lod and self.selected_rows):
            for slot, v in inputs.items():
                if v.__class__ is not _ndarray:
                    inputs[slot] = self.adapt(v)
        if not self.wants_outputs:
            return self.kernel(inputs, attrs)
        if wanted.__class__ is not frozenset:
            wanted = frozenset(s for s, vs in wanted.items() if vs)
        return self.kernel(inputs, attrs, wanted)

    def adapt(self, v: Any) -> Any:
        """A LoDTensor becomes its array unless the kernel takes LoD; SelectedRows are
        densified unless it takes them (lists adapted element-wise)."""
        if isinstance(v, list):
            return [self.adapt(x) for x in v]
        if isinstance(v, LoDTensor) and not self.lod:
            return v._array
        if isinstance(v, SelectedRows) and not self.selected_rows:
            return v.to_dense()
        return v

    def compile_call(
        self,
        attrs: dict,
        singles: tuple,
        dups: tuple,
        outs: tuple,
        sparse_inputs: tuple = (),
        below: KernelEntry | None = None,
    ) -> KernelCall:
        """The call of this kernel for one op of a plan: every name resolved.

        ``sparse_inputs`` names the single inputs declared as SelectedRows: a
        kernel without ``selected_rows`` gets them densified. ``below``: the kernel
        this one overrides, which a ``small`` kernel hands small calls to.
        """
        wanted = frozenset(s for s, n, _dup in outs)
        densify = () if self.selected_rows else tuple(sparse_inputs)
        small = ()
        if self.small is not None and below is not None and self.same_convention(below):
            slot, threshold = self.small
            var = dict(singles).get(slot)
            if var is not None and var not in sparse_inputs:
                small = (var, threshold, below.kernel)
        return KernelCall(self, self.kernel, singles, dups, attrs, outs, wanted, densify, small)

    def small_below(self, kernels: Any, dtype: str | None) -> KernelEntry | None:
        """For a ``small`` kernel, the kernel it overrides (``kernels``: the kernel registry,
        ``dtype``: the one that selected this kernel); else None."""
        if self.small is None:
            return None
        return kernels.lookup_below(self.op_type, self.device, dtype, self.priority)

    def same_convention(self, other: KernelEntry) -> bool:
        """Whether ``other`` is called exactly as this kernel is (the same flags)."""
        return (
            self.lod == other.lod
            and self.selected_rows == other.selected_rows
            and self.wants_outputs == other.wants_outputs
            and self.inplace == other.inplace
        )


_ndarray = np.ndarray


class KernelCall(NamedTuple):
    """One op's kernel call inside a compiled plan (built by :meth:`KernelEntry.compile_call`).

    ``singles``: ``((slot, var name), ...)`` for non-duplicable inputs present;
    ``dups``: ``((slot, (var names)), ...)``; ``outs``: ``((slot, var name or
    names, duplicable), ...)``; ``wanted``: the output slots the op names;
    ``densify``: input var names holding SelectedRows the kernel wants dense;
    ``small``: ``(var name, threshold, kernel below)`` for a ``small`` kernel (see
    :class:`KernelEntry`), else empty.
    """

    entry: KernelEntry
    fn: Callable
    singles: tuple
    dups: tuple
    attrs: dict
    outs: tuple
    wanted: frozenset
    densify: tuple
    small: tuple = ()

    @property
    def takes_lod(self) -> bool:
        """The kernel wants LoDTensors: the plan must track LoD while it runs."""
        return self.entry.lod

    @property
    def inlinable(self) -> bool:
        """Plain arrays in, one variable per output: the step generator may inline the call."""
        return not (self.entry.lod or self.densify or any(dup for _s, _n, dup in self.outs))

    def shape_only_names(self) -> set:
        """Names read only through ``no_need_buffer`` slots (never also for their data)."""
        nnb = self.entry.no_need_buffer
        if not nnb:
            return set()
        data = {n for s, n in self.singles if s not in nnb}
        data |= {n for _s, ns in self.dups for n in ns}
        return {n for s, n in self.singles if s in nnb and n not in data}

    def donation_candidates(self, dying: set, reads: list, writes: set) -> tuple:
        """Input slots an ``inplace`` kernel may be handed to overwrite: the variable dies at
        this op, is read once by it and not written by it."""
        if not self.entry.inplace or not dying:
            return ()
        return tuple(
            s for s, n in self.singles if n in dying and reads.count(n) == 1 and n not in writes
        )

    def run(self, env: dict, lods: dict | None = None) -> None:
        """The general path: read ``env``, call, store the outputs (``lods``: LoD by var name)."""
        inputs = {s: env[n] for s, n in self.singles}
        for s, ns in self.dups:
            inputs[s] = [env[n] for n in ns]
        entry = self.entry
        if self.densify:
            for s, n in self.singles:
                if n in self.densify and isinstance(inputs[s], SelectedRows):
                    inputs[s] = inputs[s].to_dense()
        if entry.lod and lods is not None:
            _wrap_lod(inputs, self.singles, self.dups, lods)
        res = (
            self.fn(inputs, self.attrs, self.wanted)
            if entry.wants_outputs
            else self.fn(inputs, self.attrs)
        )
        for s, n, dup in self.outs:
            if dup:
                for name, v in zip(n, res[s]):
                    if name != EMPTY_VAR:
                        env[name] = v
            elif n != EMPTY_VAR:
                v = res.get(s) if entry.wants_outputs else res[s]
                if v is not None:
                    env[n] = v
        if entry.lod and lods is not None:
            _unwrap_lod(env, self.outs, lods)

    # --- the same convention as source code, for the step generator ----------------------------
    def call_source(self, k: int, ns: dict, items: list, donated: str | None = None) -> str:
        """The call expression of op ``k`` (constants bound into ``ns``): ``items`` are the
        ``'slot': expr`` entries of its inputs dict, ``donated`` a local naming donated slots."""
        ns[f"_fn{k}"], ns[f"_attrs{k}"] = self.fn, self.attrs
        fn = f"_fn{k}"
        if self.small:  # small calls straight to the kernel below (a plain array's size)
            var, ns[f"_sn{k}"], ns[f"_sf{k}"] = self.small
            fn = f"(_sf{k} if env[{var!r}].size < _sn{k} else _fn{k})"
        args = "{" + ", ".join(items) + f"}}, _attrs{k}"
        if self.entry.wants_outputs:
            ns[f"_wanted{k}"] = self.wanted
            args += f", _wanted{k}"
        if donated is not None:
            args += f", donated={donated}"
        return f"{fn}({args})"

    def store_source(self, res: str = "res") -> list:
        """Statements storing the result dict ``res`` into ``env`` (outputs not duplicable)."""
        lines = []
        for s, n, _dup in self.outs:
            if n == EMPTY_VAR:
                continue
            get = f"{res}.get({s!r})" if self.entry.wants_outputs else f"{res}[{s!r}]"
            lines += [f"v = {get}", "if v is not None:", f"    env[{n!r}] = v"]
        return lines


def _wrap_lod(inputs: dict, singles: tuple, dups: tuple, lods: dict) -> None:
    for s, n in singles:
        lod = lods.get(n)
        if lod is not None and not isinstance(inputs[s], (LoDTensor, SelectedRows)):
            inputs[s] = LoDTensor(inputs[s], lod)
    for s, ns in dups:
        inputs[s] = [
            LoDTensor(v, lods[n]) if n in lods and not isinstance(v, LoDTensor) else v
            for v, n in zip(inputs[s], ns)
        ]


def _unwrap_lod(env: dict, outs: tuple, lods: dict) -> None:
    for _s, n, dup in outs:
        for name in n if dup else (n,):
            v = env.get(name)
            if isinstance(v, LoDTensor):
                if v._lod:
                    lods[name] = v._lod
                else:
                    lods.pop(name, None)
                env[name] = v._array


__all__ = ["KernelEntry", "KernelCall", "EMPTY_VAR"]

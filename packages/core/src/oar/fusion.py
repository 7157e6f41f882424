"""Fusing chains of ops in a static plan into one kernel call offered by a plugin.

A plugin implements ``oar_register_fusions(registry)`` and registers a
:class:`Fusion`: a chain of op types, each op feeding the next (``("elementwise_add",
"relu")``: an fc's bias add and its activation), on a device, and ``make(ops, block)``
that returns a fused kernel for that concrete chain, or None to decline (attrs or
shapes it does not handle). When a plan is compiled (:class:`oar.executor.plan.Plan`),
adjacent ops matching a chain whose intermediates nothing else needs are replaced by
one step calling the fused kernel.

The fused kernel's contract is the ordinary one with slot names ``"<k>.<slot>"``
(``k`` = the op's index in the chain): ``kernel(inputs, attrs) -> {slot: array}``,
``inputs`` holding the chain's inputs that come from outside it, ``attrs`` mapping
``"<k>"`` to op ``k``'s attrs; the result must hold every output of every op of the
chain. An intermediate (an output that the next op of the chain reads) is needed
afterwards at most for its shape (a later ``no_need_buffer`` read, such as
``elementwise_add_grad``'s): return ``oar.api.shape_stand_in(like)`` for it. An input
slot that op ``k``'s own kernel reads only for its shape (its ``no_need_buffer``, such as
``"1.X"`` of a chain ending in ``elementwise_add_grad``) is read so by the fused kernel
too: the plan may pass a zero-strided stand-in, freeing the array early.

An intermediate qualifies when it is not fed, fetched or persistable, no op outside
the chain reads its data, and only one op writes it. A fusion registered with
``keeps_intermediates=True`` returns every intermediate as a real array, so ops outside
the chain may read it (the fusion saves passes and calls, not memory): then only the
single writer is required.

A fusion registered with ``repeated=True`` names one op type and takes a run of two or
more adjacent ops of it that are independent of each other (no op reads or writes what
another writes): the optimizer updates of a model's parameters, one per parameter.
``make`` gets the whole run; slots are numbered per op as in a chain. Kernels that take
SelectedRows inputs (``selected_rows=True`` at registration) are fused only by a fusion
registered with ``selected_rows=True``: its kernel gets such inputs as they come.

A fusion registered with ``inplace=True`` is called as an ``inplace`` kernel is
(:class:`oar.kernel_entry.KernelEntry`): with ``donated=frozenset(slots)`` naming input
slots (``"<k>.<slot>"``) whose arrays die at this step and that nothing else references,
so it may write its result into one of them instead of a fresh array.

Blocks with sub-blocks (control flow) are never fused. ``OAR_DISABLE_FUSION=1`` turns
fusion off.

Dygraph mode asks the same fusions, with ``make(ops, None)`` (no block): a layer's bias
add + activation chain (:mod:`oar.dygraph.chain`) and chains of grad ops on the tape
(:mod:`oar.dygraph.tape_fusion`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

import attrs

ENV_DISABLE = "OAR_DISABLE_FUSION"


@attrs.define(frozen=True)
class Fusion:
    """A fused kernel offered for a chain of op types on a device."""

    name: str
    ops: tuple
    device: str
    #: ``make(ops, block) -> kernel | None``: the fused kernel for these ops, or None
    make: Callable[[list, Any], Callable | None]
    priority: int = 0
    plugin: str = "?"
    #: ``ops`` is one op type: a run of two or more independent ops of it (see the module doc)
    repeated: bool = False
    #: the kernel returns intermediates as real arrays: ops outside the chain may read them
    keeps_intermediates: bool = False
    #: the kernel takes SelectedRows inputs as they come (the ops' kernels accept them)
    selected_rows: bool = False
    #: the kernel takes ``donated=`` (input slots it may overwrite), as an inplace kernel does
    inplace: bool = False

    def __attrs_post_init__(self) -> None:
        if self.repeated:
            if len(self.ops) != 1:
                raise ValueError(
                    f"fusion {self.name!r}: a repeated fusion names one op type, given {self.ops}"
                )
        elif len(self.ops) < 2:
            raise ValueError(
                f"fusion {self.name!r}: a chain needs two ops or more, given {self.ops}"
            )


class FusionRegistry:
    """Fusions by device, highest priority first (the registry ``oar_register_fusions`` gets)."""

    def __init__(self) -> None:
        self._fusions: list[Fusion] = []
        self.current_plugin = "?"
        self._chains: dict = {}  # (device, op types) -> the chain fusion taking them, or None

    def register_fusion(
        self,
        name: str,
        ops: Sequence[str],
        device: str,
        make: Callable[[list, Any], Callable | None],
        priority: int = 0,
        *,
        repeated: bool = False,
        keeps_intermediates: bool = False,
        selected_rows: bool = False,
        inplace: bool = False,
    ) -> Fusion:
        from oar.errors import RegistryError

        for f in self._fusions:
            if f.name == name and f.device == device:
                raise RegistryError(
                    f"fusion {name!r} on {device!r} is registered twice: by {f.plugin} and "
                    f"{self.current_plugin}"
                )
        fusion = Fusion(
            name,
            tuple(ops),
            device,
            make,
            priority,
            self.current_plugin,
            repeated=repeated,
            keeps_intermediates=keeps_intermediates,
            selected_rows=selected_rows,
            inplace=inplace,
        )
        self._fusions.append(fusion)
        self._fusions.sort(key=lambda f: -f.priority)
        self._chains.clear()
        return fusion

    def for_all(self) -> list:
        return list(self._fusions)

    def for_device(self, device: str) -> list:
        return [f for f in self._fusions if f.device == device]

    def chain(self, device: str, types: tuple) -> Fusion | None:
        """The highest-priority chain (not ``repeated``) fusion for exactly these op types on
        ``device`` (cached: the eager tracer asks per traced chain)."""
        key = (device, types)
        try:
            return self._chains[key]
        except KeyError:
            pass
        found = next(
            (f for f in self._fusions if f.device == device and not f.repeated and f.ops == types),
            None,
        )
        self._chains[key] = found
        return found

    def remove_owned_by(self, plugin: str) -> None:
        self._fusions = [f for f in self._fusions if f.plugin != plugin]
        self._chains.clear()

    def names(self) -> list:
        return [f.name for f in self._fusions]


class FusedOp:
    """The stand-in of a fused chain of ops in a plan (what errors and liveness read)."""

    def __init__(self, fusion: Fusion, ops: list) -> None:
        self.type = f"fused[{fusion.name}]"
        self.fusion = fusion
        self.ops = ops
        self.inputs: dict = {}
        self.outputs: dict = {}
        inner: set = set()  # written by an earlier op of the chain (an op updating its own
        for k, op in enumerate(ops):  # input in place, like adam's Param, still reads it)
            for slot, names in op.inputs.items():
                if names and not all(n in inner for n in names):
                    self.inputs[f"{k}.{slot}"] = list(names)
            for slot, names in op.outputs.items():
                self.outputs[f"{k}.{slot}"] = list(names)
            inner.update(op.output_arg_names)
        self.attrs = {str(k): dict(op.attrs) for k, op in enumerate(ops)}
        self.callsite = ops[-1].callsite

    @property
    def input_arg_names(self) -> list:
        return [n for names in self.inputs.values() for n in names]

    @property
    def output_arg_names(self) -> list:
        return [n for names in self.outputs.values() for n in names]


def disabled() -> bool:
    return os.environ.get(ENV_DISABLE, "") not in ("", "0")


def _simple(call: Any, sparse_ok: bool = False) -> bool:
    """A step a fused kernel may replace: plain arrays in and out (SelectedRows when
    ``sparse_ok``), no duplicable slots."""
    if call.takes_lod or call.dups or call.densify:
        return False
    if call.entry.selected_rows and not sparse_ok:
        return False
    return all(not dup for _s, _n, dup in call.outs)


def _intermediates_free(
    chain: list, readers: dict, writers: dict, keep: set, shared: bool = False
) -> bool:
    """Whether each op's outputs read by the next op of the chain are needed by nothing else
    (beyond shape-only reads); with ``shared`` (real intermediates), only that one op
    writes them."""
    ops = [op for op, _ in chain]
    for k in range(len(chain) - 1):
        links = set(ops[k].output_arg_names) & set(ops[k + 1].input_arg_names)
        if not links:
            return False
        for n in links:
            if writers.get(n, 0) != 1:
                return False
            if shared:
                continue
            if n in keep or any(r is not ops[k + 1] for r in readers.get(n, ())):
                return False
    return True


def _repeated_run(pairs: list, i: int, fusion: Fusion) -> int:
    """How many ops from ``pairs[i]`` form a run for the repeated ``fusion`` (0: none)."""
    touched: set = set()  # names the run's ops so far write
    read: set = set()  # names they read
    j = i
    while j < len(pairs):
        op, step = pairs[j]
        if op.type != fusion.ops[0] or not _simple(step.call, fusion.selected_rows):
            break
        outs, ins = set(op.output_arg_names), set(op.input_arg_names)
        if outs & (touched | read) or ins & touched:
            break  # depends on (or feeds) an op of the run: not independent
        touched |= outs
        read |= ins
        j += 1
    return j - i if j - i >= 2 else 0


def _match(pairs: list, i: int, fusion: Fusion, readers: dict, writers: dict, keep: set) -> int:
    """The length of ``fusion``'s match at ``pairs[i]`` (0: none)."""
    if fusion.repeated:
        return _repeated_run(pairs, i, fusion)
    m = len(fusion.ops)
    chain = pairs[i : i + m]
    if len(chain) < m or tuple(op.type for op, _ in chain) != fusion.ops:
        return 0
    if not all(_simple(s.call, fusion.selected_rows) for _, s in chain):
        return 0
    if not _intermediates_free(chain, readers, writers, keep, fusion.keeps_intermediates):
        return 0
    return m


def fuse_steps(pairs: list, fusions: list, block: Any, keep: set, make_step: Callable) -> list:
    """``pairs`` of (op, compiled step) with matching chains replaced by fused steps.

    ``keep``: names that must stay real arrays (fed, fetched, persistable).
    ``make_step(fused_op, kernel)`` compiles the fused step.
    """
    if not fusions or disabled() or any("sub_block" in op.attrs for op, _ in pairs):
        return pairs
    readers: dict = {}  # name -> ops reading its data
    writers: dict = {}
    for op, step in pairs:
        shape_only = step.call.shape_only_names()
        for n in op.input_arg_names:
            if n not in shape_only:
                readers.setdefault(n, []).append(op)
        for n in op.output_arg_names:
            writers[n] = writers.get(n, 0) + 1
    out: list = []
    i = 0
    while i < len(pairs):
        fused = None
        for fusion in fusions:
            m = _match(pairs, i, fusion, readers, writers, keep)
            if not m:
                continue
            chain = pairs[i : i + m]
            ops = [op for op, _ in chain]
            kernel = fusion.make(ops, block)
            if kernel is not None:
                fop = FusedOp(fusion, ops)
                fused = (fop, make_step(fop, kernel, [s for _, s in chain]), m)
                break
        if fused is None:
            out.append(pairs[i])
            i += 1
        else:
            out.append(fused[:2])
            i += fused[2]
    return out

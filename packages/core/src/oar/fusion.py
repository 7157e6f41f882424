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
the chain reads its data, and only one op writes it. Blocks with sub-blocks (control
flow) are never fused. ``OAR_DISABLE_FUSION=1`` turns fusion off.
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

    def __attrs_post_init__(self) -> None:
        if len(self.ops) < 2:
            raise ValueError(
                f"fusion {self.name!r}: a chain needs two ops or more, given {self.ops}"
            )


class FusionRegistry:
    """Fusions by device, highest priority first (the registry ``oar_register_fusions`` gets)."""

    def __init__(self) -> None:
        self._fusions: list[Fusion] = []
        self.current_plugin = "?"

    def register_fusion(
        self,
        name: str,
        ops: Sequence[str],
        device: str,
        make: Callable[[list, Any], Callable | None],
        priority: int = 0,
    ) -> Fusion:
        from oar.errors import RegistryError

        for f in self._fusions:
            if f.name == name and f.device == device:
                raise RegistryError(
                    f"fusion {name!r} on {device!r} is registered twice: by {f.plugin} and "
                    f"{self.current_plugin}"
                )
        fusion = Fusion(name, tuple(ops), device, make, priority, self.current_plugin)
        self._fusions.append(fusion)
        self._fusions.sort(key=lambda f: -f.priority)
        return fusion

    def for_all(self) -> list:
        return list(self._fusions)

    def for_device(self, device: str) -> list:
        return [f for f in self._fusions if f.device == device]

    def remove_owned_by(self, plugin: str) -> None:
        self._fusions = [f for f in self._fusions if f.plugin != plugin]

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
        inner = {n for op in ops for n in op.output_arg_names}
        for k, op in enumerate(ops):
            for slot, names in op.inputs.items():
                if names and not all(n in inner for n in names):
                    self.inputs[f"{k}.{slot}"] = list(names)
            for slot, names in op.outputs.items():
                self.outputs[f"{k}.{slot}"] = list(names)
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


def _simple(call: Any) -> bool:
    """A step a fused kernel may replace: plain arrays in and out, no duplicable slots."""
    return not (call.takes_lod or call.dups or call.densify or call.entry.selected_rows) and all(
        not dup for _s, _n, dup in call.outs
    )


def _intermediates_free(chain: list, readers: dict, writers: dict, keep: set) -> bool:
    """Whether each op's outputs read by the next op of the chain are needed by nothing else
    (beyond shape-only reads)."""
    ops = [op for op, _ in chain]
    for k in range(len(chain) - 1):
        links = set(ops[k].output_arg_names) & set(ops[k + 1].input_arg_names)
        if not links:
            return False
        for n in links:
            if n in keep or writers.get(n, 0) != 1:
                return False
            if any(r is not ops[k + 1] for r in readers.get(n, ())):
                return False
    return True


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
            m = len(fusion.ops)
            chain = pairs[i : i + m]
            if len(chain) < m or tuple(op.type for op, _ in chain) != fusion.ops:
                continue
            if not all(_simple(s.call) for _, s in chain):
                continue
            if not _intermediates_free(chain, readers, writers, keep):
                continue
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

"""Inference passes: program rewrites that keep the outputs and make serving cheaper.

A pass is registered through the ``oar_register_inference_passes`` hook
(oar-deploy registers its own passes that way, like any third party) as an
:class:`InferencePass`. ``AnalysisConfig.switch_ir_optim(True)`` (the default)
runs the registered passes whose ``default`` is true, in ``order``; the
config's ``pass_builder()`` edits that list as in Fluid.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs

from oar_deploy.passes.graph import PassContext


@attrs.frozen
class InferencePass:
    """``apply(ctx) -> number of rewrites``; ``order`` decides when it runs among the defaults."""

    name: str
    apply: Callable[[PassContext], int]
    order: int = 100
    default: bool = True
    doc: str = ""


def builtin_passes() -> list:
    from oar_deploy.passes import basic, fuse

    def p(name, fn, order):
        return InferencePass(name, fn, order, True, (fn.__doc__ or "").strip().split("\n")[0])

    return [
        p("simplify_with_basic_ops_pass", basic.dropout_removal, 10),
        p("dead_op_elimination_pass", basic.dead_op_elimination, 20),
        p("constant_folding_pass", basic.constant_folding, 30),
        p("conv_bn_fuse_pass", fuse.batch_norm_fold, 40),
        p("fc_fuse_pass", fuse.fc_fuse, 50),
        p("conv_elementwise_add_act_fuse_pass", fuse.conv_bias_act_fuse, 60),
    ]


def registered() -> dict:
    """Pass name -> :class:`InferencePass`, from every plugin's ``oar_register_inference_passes``."""
    from oar.api import registries

    return dict(registries().inference_passes.items())


def default_pass_names() -> list:
    passes = registered()
    chosen = [p for p in passes.values() if getattr(p, "default", True)]
    return [p.name for p in sorted(chosen, key=lambda p: (getattr(p, "order", 100), p.name))]


def run_passes(program: Any, scope: Any, feeds: Sequence, fetches: Sequence, names: Sequence):
    """Apply the passes ``names`` (in that order) to ``program`` in place; returns ``{name: rewrites}``."""
    passes = registered()
    ctx = PassContext(program, scope, list(feeds), list(fetches))
    for name in names:
        if name not in passes:
            raise ValueError(
                f"inference pass '{name}' is not registered; registered: {sorted(passes)}"
            )
        ctx.stats[name] = int(passes[name].apply(ctx) or 0)
    return ctx.stats


class PassStrategy:
    """``config.pass_builder()``: the ordered pass list a predictor will run (Fluid's PaddlePassBuilder)."""

    def __init__(self, passes: Sequence[str]) -> None:
        self._passes = list(passes)

    def all_passes(self) -> list:
        return list(self._passes)

    def set_passes(self, passes: Sequence[str]) -> None:
        self._passes = list(passes)

    def append_pass(self, name: str) -> None:
        self._passes.append(name)

    def insert_pass(self, idx: int, name: str) -> None:
        self._passes.insert(idx, name)

    def delete_pass(self, name: str) -> None:
        self._passes = [p for p in self._passes if p != name]

    def turn_on_debug(self) -> None:
        pass

    def debug_string(self) -> str:
        return "\n".join(self._passes)

    def __repr__(self) -> str:
        return f"PassStrategy({self._passes})"

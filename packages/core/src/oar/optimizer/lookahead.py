"""LookaheadOptimizer (Zhang et al. 2019, Fluid 1.8's static version).

The inner optimizer updates the "fast" parameters every step; every ``k`` steps the slow
copies move ``alpha`` of the way towards them and the fast ones are reset to the slow
ones. As in Fluid, the slow copies start as the initial parameters (the startup program
copies them).
"""

from __future__ import annotations

from typing import Any

from oar.errors import ArgumentError, ArgumentTypeError
from oar.framework import unique_name
from oar.framework.program import program_guard

__all__ = ["LookaheadOptimizer"]


class LookaheadOptimizer:
    """``LookaheadOptimizer(inner_optimizer, alpha=0.5, k=5)``; ``minimize`` as any optimizer."""

    def __init__(self, inner_optimizer: Any, alpha: float = 0.5, k: int = 5) -> None:
        from oar.optimizer.base import Optimizer

        if not isinstance(inner_optimizer, Optimizer):
            raise ArgumentTypeError(
                "LookaheadOptimizer",
                f"inner_optimizer must be an optimizer, given {type(inner_optimizer).__name__}",
            )
        if (
            isinstance(alpha, bool)
            or not isinstance(alpha, (int, float))
            or not 0.0 <= alpha <= 1.0
        ):
            raise ArgumentError("LookaheadOptimizer", f"alpha must be in [0, 1], given {alpha!r}")
        if isinstance(k, bool) or not isinstance(k, int) or k <= 0:
            raise ArgumentError("LookaheadOptimizer", f"k must be a positive int, given {k!r}")
        self.inner_optimizer = inner_optimizer
        self.alpha = float(alpha)
        self.k = k
        self.type = "lookahead"

    def minimize(self, loss: Any, startup_program: Any = None) -> Any:
        from oar import layers
        from oar.framework.program import default_startup_program

        mini_out = self.inner_optimizer.minimize(loss, startup_program=startup_program)
        main = loss.block.program
        startup = startup_program or default_startup_program()
        params = [p for p in main.all_parameters() if p.trainable]
        with program_guard(main, startup):
            step = layers.create_global_var(
                [1], 0.0, "int32", persistable=True, name=unique_name.generate("lookahead_step")
            )
            layers.increment(step, 1.0, in_place=True)
            k = layers.fill_constant([1], "int32", self.k)
            zero = layers.fill_constant([1], "int32", 0)
            is_sync = layers.equal(layers.elementwise_mod(step, k), zero)
            for p in params:
                self._lookahead(p, startup, is_sync)
        return mini_out

    def _lookahead(self, p: Any, startup: Any, is_sync: Any) -> None:
        from oar import layers

        slow = layers.create_global_var(
            list(p.shape),
            0.0,
            p.dtype,
            persistable=True,
            name=unique_name.generate(p.name + "@SLOW"),
        )
        startup.global_block().append_op(
            "assign", {"X": [p.name]}, {"Out": [slow.name]}, {}, infer=False
        )
        sync = layers.cast(is_sync, p.dtype)
        tmp = layers.elementwise_add(
            layers.scale(p, self.alpha), layers.scale(slow, 1.0 - self.alpha)
        )

        def blend(mask, a, b):  # mask * a + (1 - mask) * b, mask a [1] tensor
            return layers.elementwise_add(
                b, layers.elementwise_mul(layers.elementwise_sub(a, b), mask, axis=0)
            )

        layers.assign(blend(sync, tmp, slow), slow)
        layers.assign(blend(sync, tmp, p), p)

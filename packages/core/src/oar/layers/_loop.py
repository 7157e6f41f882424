"""A counted ``While`` loop with carried variables and per-step output arrays, as the static
``rnn`` and ``dynamic_decode`` build it.

``StepLoop`` owns a step counter ``i`` (int64 [1], from 0) and the loop condition. Inside
``with loop.body():`` the user's step code is built once (one set of parameters, as in
Fluid); ``carry`` gives a loop variable (a copy of its initial value, so a user's variable is
never overwritten), ``update`` gives it its value for the next step, ``row`` reads row ``i``
of a time-major tensor and ``collect`` writes a step output into a tensor array that
``stacked`` turns into ``[steps, ...]`` after the loop. The loop stops once the condition set
by ``continue_while`` (built at the end of the body) is false, so the number of steps may
depend on the data.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from oar.layers._nest import flatten, map_structure


def _L():
    from oar import fluid

    return fluid.layers


class StepLoop:
    def __init__(self) -> None:
        L = _L()
        self.i = L.fill_constant([1], "int64", 0)
        self.i.stop_gradient = True
        self.program = self.i.block.program
        self.cond = None
        self.arrays: list = []
        self._updates: list = []

    def carry(self, init: Any) -> Any:
        """Loop variables (a nested structure) starting at copies of ``init``."""

        return map_structure(lambda x: _L().assign(x), init)

    def update(self, carried: Any, new: Any) -> None:
        """``carried`` takes ``new``'s value at the end of each step."""
        self._updates += list(zip(flatten(carried), flatten(new)))

    def row(self, x: Any) -> Any:
        """Row ``i`` of the time-major tensor ``x`` (its first dimension dropped)."""
        L = _L()
        return L.squeeze(L.gather(x, self.i), [0])

    def collect(self, outputs: Any) -> Any:
        """Write each leaf of ``outputs`` at index ``i`` of its own array; returns the arrays
        (in ``outputs``' structure)."""
        from oar.layers.control_flow import in_parent_block

        L = _L()

        def write(o: Any) -> Any:
            with in_parent_block(self.program):
                arr = L.create_array(o.dtype)
            L.array_write(o, self.i, array=arr)
            return arr

        return map_structure(write, outputs)

    @staticmethod
    def stacked(arrays: Any, steps: int = -1) -> Any:
        """The arrays' items stacked along a new first (time) dimension, of ``steps`` items
        when known when the program is built."""
        L = _L()

        def stack(a: Any) -> Any:
            out = L.tensor_array_to_tensor(a, axis=0, use_stack=True)[0]
            if steps >= 0 and out.shape:
                out.shape = (steps, *out.shape[1:])
            return out

        return map_structure(stack, arrays)

    @contextlib.contextmanager
    def body(self, first_cond: Any, cond_fn: Any) -> Iterator[None]:
        """Build the loop body; it runs while ``first_cond`` (before the first step) and then
        ``cond_fn(i)`` (after each step, with the counter already incremented) hold."""
        from oar.layers.control_flow import While

        L = _L()
        self.cond = first_cond
        loop = While(first_cond)
        with loop.block():
            yield
            for carried, new in self._updates:
                if new is not carried:
                    L.assign(new, carried)
            L.increment(self.i, in_place=True)
            L.assign(cond_fn(self.i), self.cond)


def step_count(x: Any) -> Any:
    """The first dimension of ``x`` as an int64 [1] tensor (a constant when known)."""
    L = _L()
    n = int(x.shape[0])
    if n >= 0:
        out = L.fill_constant([1], "int64", n)
    else:
        out = L.cast(L.slice(L.shape(x), axes=[0], starts=[0], ends=[1]), "int64")
    out.stop_gradient = True
    return out

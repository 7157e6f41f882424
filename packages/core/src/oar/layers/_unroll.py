"""Parameters of an unrolled (dygraph) loop body: created by the first step that builds
them, reused by the later steps.

In dygraph, ``rnn`` and ``dynamic_decode`` run the user's step code (cells, ``output_fn``,
``embedding_fn``) once per time step. Fluid builds that code once, as a While body, so a
layer inside it (``lambda x: fc(x, ...)``) owns one set of parameters. ``SharedParameters``
gives the unrolled loop the same meaning: within a step, the k-th parameter asked for by a
layer type (``fc``; a dygraph Layer's own scope) is the one the first step created for the
same layer type and k. Layers that keep their parameters (cells, dygraph Layers) ask only
once and are unaffected.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from oar.errors import ArgumentTypeError
from oar.layer_helper import LayerHelper


class SharedParameters:
    def __init__(self, owner: str) -> None:
        self.owner = owner
        self.recorded: dict = {}  # (layer type, k) -> parameter

    @contextlib.contextmanager
    def step(self, t: int) -> Iterator[None]:
        original = LayerHelper.create_parameter
        recorded, owner = self.recorded, self.owner
        seen: dict = {}

        def create_parameter(helper: Any, attr: Any, shape: Any, *args: Any, **kwargs: Any) -> Any:
            k = seen.get(helper.layer_type, 0)
            seen[helper.layer_type] = k + 1
            key = (helper.layer_type, k)
            if key not in recorded:
                recorded[key] = original(helper, attr, shape, *args, **kwargs)
                return recorded[key]
            p = recorded[key]
            if p is not None and [int(d) for d in p.shape] != [int(d) for d in shape]:
                raise ArgumentTypeError(
                    owner,
                    f"step {t} asks for a {helper.layer_type} parameter of shape {list(shape)} "
                    f"where an earlier step created {p.name} of shape {list(p.shape)}; the step "
                    f"function must build the same layers every step",
                )
            return p

        LayerHelper.create_parameter = create_parameter  # type: ignore[method-assign]
        try:
            yield
        finally:
            LayerHelper.create_parameter = original  # type: ignore[method-assign]

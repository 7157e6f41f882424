"""Weight normalisation for ``WeightNormParamAttr``: ``w = g * v / ||v||`` (static graphs).

``create_parameter`` with a ``WeightNormParamAttr`` makes two parameters, as Fluid:
``<name>_v`` (the direction, initialised by the attr's initializer) and ``<name>_g``
(the magnitude, shaped like ``v`` with 1 on every axis but ``dim``; all 1s when
``dim`` is None), initialised by the startup program to the norm of ``v`` so that
``w == v`` at first. The layer uses ``w``, computed in the main program; the
gradients reach ``g`` and ``v`` through those ops.
"""

from __future__ import annotations

from typing import Any


def _norm(v: Any, dim: int | None, rank: int) -> Any:
    """||v|| over every axis but ``dim``: shape [v.shape[dim]] (or [1] when dim is None)."""
    from oar import layers

    axes = [a for a in range(rank) if a != dim] if dim is not None else list(range(rank))
    squared = layers.reduce_sum(layers.square(v), dim=axes, keep_dim=False)
    return layers.sqrt(squared)


def weight_normalized(
    layer: str, attr: Any, shape: list, dtype: Any, initializer: Any, builder: Any
) -> Any:
    from oar import layers
    from oar.errors import ArgumentError
    from oar.framework.param_attr import ParamAttr
    from oar.framework.program import (
        default_main_program,
        default_startup_program,
        program_guard,
    )
    from oar.initializer import Constant

    dim = attr.dim
    rank = len(shape)
    if dim is not None:
        if not -rank <= dim < rank:
            raise ArgumentError(
                layer, f"WeightNormParamAttr: dim {dim} is out of range for a {rank}-D weight"
            )
        dim %= rank
    common = {
        "learning_rate": attr.learning_rate,
        "regularizer": attr.regularizer,
        "trainable": attr.trainable,
        "do_model_average": attr.do_model_average,
    }
    v = builder.create_parameter(
        layer, ParamAttr(name=f"{attr.name}_v", initializer=initializer, **common),
        shape, dtype, False, initializer,
    )  # fmt: skip
    g_shape = [shape[a] if a == dim else 1 for a in range(rank)]
    g = builder.create_parameter(
        layer, ParamAttr(name=f"{attr.name}_g", initializer=Constant(1.0), **common),
        g_shape, dtype, False, Constant(1.0),
    )  # fmt: skip
    main, startup = default_main_program(), default_startup_program()
    start_block = startup.global_block()
    if v.name in start_block.vars and g.name in start_block.vars:
        # the startup program sets g to ||v|| after v's initializer ran: w == v at first
        with program_guard(startup, startup):
            norm = _norm(start_block.var(v.name), dim, rank)
            layers.assign(layers.reshape(norm, g_shape), output=start_block.var(g.name))
    with program_guard(main, startup):
        direction = layers.elementwise_div(
            v, _norm(v, dim, rank), axis=dim if dim is not None else -1
        )
        scale = layers.reshape(g, [shape[dim]] if dim is not None else [1])
        return layers.elementwise_mul(direction, scale, axis=dim if dim is not None else -1)

"""GEO-SGD in the pserver rewrite (``config.geo_sgd_mode``, fleet's ``create_geo_strategy``).

The trainer program keeps its optimizer and ends with ``geo_sgd_communicate`` (see
``oar_dist.kernels.geo``); the trainer's startup program receives the pservers' values and
records them. Each pserver's update program for a parameter is ``sum(param, param.delta)``.
Parameters are not sliced, and distributed tables are refused.
"""

from __future__ import annotations

from typing import Any

from oar.api import Program


def delta_name(param: str) -> str:
    return param + ".delta"


def append_communicate(mode: Any, block: Any, init: bool) -> None:
    blocks = [b for b in mode.blocks]
    names = [b.param for b in blocks]
    block.append_op(
        "geo_sgd_communicate",
        {"X": names},
        {"Out": names},
        {
            "epmap": [b.endpoint for b in blocks],
            "varnames": names,
            "trainers": mode.trainers,
            "push_nums": int(mode.config.geo_sgd_need_push_nums),
            "trainer_id": mode.trainer_id,
            "init": init,
        },
    )


def update_program(mode: Any, b: Any) -> tuple:
    prog = Program()
    block = prog.global_block()
    src = mode.var_meta[b.param]
    for name, persist in ((b.param, True), (delta_name(b.param), False)):
        block.create_var(name=name, shape=list(src.shape), dtype=src.dtype, persistable=persist)
    block.append_op("sum", {"X": [b.param, delta_name(b.param)]}, {"Out": [b.param]}, {})
    return prog, [(b.param, b.param)]


def check(mode: Any) -> None:
    if mode.tables:
        raise NotImplementedError(
            f"DistributeTranspiler: GEO-SGD (geo_sgd_mode) with distributed lookup tables "
            f"{sorted(mode.tables)} is not supported; use the sync or async strategy"
        )
    if mode.config.geo_sgd_need_push_nums < 1:
        raise ValueError(
            f"GEO-SGD: update_frequency (geo_sgd_need_push_nums) must be >= 1, given "
            f"{mode.config.geo_sgd_need_push_nums}"
        )

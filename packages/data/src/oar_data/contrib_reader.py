"""``fluid.contrib.reader``: ``distributed_batch_reader`` for multi-trainer jobs."""

from __future__ import annotations

import os
from collections.abc import Callable


def distributed_batch_reader(batch_reader: Callable) -> Callable:
    """Give each trainer its own share of ``batch_reader``'s batches.

    Reads ``PADDLE_TRAINER_ID`` and ``PADDLE_TRAINERS_NUM`` (as Paddle does):
    consecutive batches are dealt out in groups of ``trainers_num``, trainer
    ``k`` keeping the ``k``-th of each group; an incomplete last group is
    dropped so every trainer runs the same number of steps.
    """
    trainer_id = int(os.environ.get("PADDLE_TRAINER_ID", "0"))
    trainers_num = int(os.environ.get("PADDLE_TRAINERS_NUM", "1"))
    if trainers_num < 1 or not 0 <= trainer_id < trainers_num:
        raise ValueError(
            f"distributed_batch_reader: PADDLE_TRAINER_ID={trainer_id} must be in "
            f"[0, PADDLE_TRAINERS_NUM={trainers_num})"
        )

    def reader():
        if trainers_num == 1:
            yield from batch_reader()
            return
        mine = None
        for i, data in enumerate(batch_reader()):
            if i % trainers_num == trainer_id:
                mine = data
            if i % trainers_num == trainers_num - 1:
                yield mine
                mine = None

    return reader


__all__ = ["distributed_batch_reader"]

"""Kernel work as independent pieces for the kernel thread pool (``oar.api.parallel_for``), so
that the pieces of several results (a convolution's two gradients) share one pass over it."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any, NamedTuple

import numpy as np
from oar.api import parallel_for

#: a sum over batch chunks runs in this many fixed runs (each in order, then the runs in
#: order), so that its value does not depend on the thread count
GRAD_PARTS = 4


class Job(NamedTuple):
    """Independent pieces of work (callables) and what makes the result once all have run."""

    pieces: list
    finish: Callable[[], Any]


def run(*jobs: Job) -> list:
    """The results of ``jobs``, whose pieces all share one pass over the kernel thread pool."""
    pieces = [p for job in jobs for p in job.pieces]
    parallel_for(lambda i: pieces[i](), len(pieces))
    return [job.finish() for job in jobs]


def summed_job(parts, term, shape, dtype, then) -> Job:
    """``then(total)``, ``total`` the sum over chunks ``(a, b)`` of ``parts`` of
    ``term(a, b, out)`` (which writes its chunk's term into ``out``), in :data:`GRAD_PARTS`
    fixed runs: each run in order, then the runs in order, whatever the thread count."""
    runs = [parts[i::GRAD_PARTS] for i in range(min(GRAD_PARTS, len(parts)))]
    sums = [np.zeros(shape, dtype) for _ in runs]

    def one_run(r: int) -> None:
        part = np.empty(shape, dtype)
        for a, b in runs[r]:
            term(a, b, part)
            sums[r] += part

    def finish():
        total = sums[0] if sums else np.zeros(shape, dtype)
        for more in sums[1:]:
            total += more
        return then(total)

    return Job([partial(one_run, r) for r in range(len(runs))], finish)

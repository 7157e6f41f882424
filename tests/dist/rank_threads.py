"""Run one function per rank of a communicator, each on its own thread (in-process collectives)."""

from __future__ import annotations

import threading


def run_ranks(members, fn, on_error=None, join_s: float = 20):
    """``fn(member)`` for every member on one thread each; results in member order.

    The first error is raised after every thread ended; ``on_error`` (a group's ``abort``)
    wakes the ranks still waiting in a collective for the one that failed.
    """
    results: list = [None] * len(members)
    errors: list = []

    def work(i):
        try:
            results[i] = fn(members[i])
        except Exception as exc:
            errors.append(exc)
            if on_error is not None:
                on_error()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(members))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(join_s)
    if errors:
        raise errors[0]
    return results

"""oar.cpu_pool: the kernel thread pool plugins reach as oar.api.parallel_for."""

import threading

import pytest
from oar import api


def test_pieces_run_on_several_threads_and_errors_come_back():
    ran_on = {}
    barrier = threading.Barrier(2, timeout=30)

    def piece(i):
        if i < 2:  # both threads must hold a piece at once: the pool really runs in parallel
            barrier.wait()
        ran_on[i] = threading.get_ident()

    api.parallel_for(piece, 6, threads=2)
    assert sorted(ran_on) == list(range(6)) and len(set(ran_on.values())) == 2

    def boom(i):
        if i == 3:
            raise KeyError("piece 3")

    with pytest.raises(KeyError, match="piece 3"):
        api.parallel_for(boom, 9, threads=2, blas=False)

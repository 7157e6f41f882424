"""oar.cpu_pool: the kernel thread pool (oar.api.parallel_for)."""

import threading

import pytest
from oar import cpu_pool


def test_parallel_for_covers_every_piece_and_raises():
    seen = []
    cpu_pool.parallel_for(seen.append, 50, threads=3)
    assert sorted(seen) == list(range(50))

    def boom(i):
        if i == 7:
            raise ValueError("piece 7")

    with pytest.raises(ValueError, match="piece 7"):
        cpu_pool.parallel_for(boom, 20, threads=2)


def test_parallel_threads_is_one_off_the_main_thread():
    got = []
    t = threading.Thread(target=lambda: got.append(cpu_pool.parallel_threads()))
    t.start()
    t.join(timeout=30)
    assert got == [1]

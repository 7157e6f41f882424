"""Reader decorators and oar.batch: exact output order and contents, errors, no leaked workers."""

import gc
import random

import numpy as np
import oar
import pytest

pytest.importorskip("oar_data")

R = oar.reader


def rng_reader(n, start=0):
    def reader():
        yield from range(start, start + n)

    return reader


def failing_reader(after):
    def reader():
        yield from range(after)
        raise KeyError("broken sample source")

    return reader


def test_map_readers_applies_func_in_step():
    r = R.map_readers(lambda a, b: a * 10 + b, rng_reader(4), rng_reader(3, 5))
    assert list(r()) == [5, 16, 27]


def test_chain_concatenates_in_order():
    assert list(R.chain(rng_reader(3), rng_reader(2, 10))()) == [0, 1, 2, 10, 11]


def test_shuffle_permutes_within_windows():
    random.seed(3)
    out = list(R.shuffle(rng_reader(10), 4)())
    assert sorted(out[:4]) == [0, 1, 2, 3]
    assert sorted(out[4:8]) == [4, 5, 6, 7]
    assert sorted(out[8:]) == [8, 9]
    assert out != list(range(10))
    with pytest.raises(ValueError, match="buf_size"):
        R.shuffle(rng_reader(3), 0)


def test_compose_flattens_tuples_like_the_gan_example():
    a = lambda: iter([(np.float32(1), 7), (np.float32(2), 8)])
    b = lambda: iter(["x", "y"])
    c = lambda: iter([True, False])
    out = list(R.compose(a, b, c)())
    assert out == [(1.0, 7, "x", True), (2.0, 8, "y", False)]


def test_compose_alignment():
    r = R.compose(rng_reader(3), rng_reader(2))
    with pytest.raises(R.ComposeNotAligned):
        list(r())
    assert list(R.compose(rng_reader(3), rng_reader(2), check_alignment=False)()) == [
        (0, 0),
        (1, 1),
    ]
    assert issubclass(oar.reader.ComposeNotAligned, ValueError)


def test_firstn_and_cache():
    assert list(R.firstn(rng_reader(10), 3)()) == [0, 1, 2]
    calls = []

    def counted():
        calls.append(1)
        yield from range(4)

    c = R.cache(counted)
    assert list(c()) == [0, 1, 2, 3] and list(c()) == [0, 1, 2, 3]
    assert len(calls) == 1


def test_buffered_keeps_order_and_stops(no_leaks):
    assert list(R.buffered(rng_reader(50), 4)()) == list(range(50))
    it = R.buffered(rng_reader(10_000), 2)()
    assert [next(it) for _ in range(3)] == [0, 1, 2]
    del it
    gc.collect()


def test_buffered_raises_the_readers_error(no_leaks):
    with pytest.raises(KeyError, match="broken sample source") as info:
        list(R.buffered(failing_reader(3), 2)())
    # the original frame is in the traceback
    assert any(tb.name == "reader" for tb in info.traceback)


def test_xmap_ordered_and_unordered(no_leaks):
    mapper = lambda x: x * x
    assert list(R.xmap_readers(mapper, rng_reader(40), 3, 5, order=True)()) == [
        i * i for i in range(40)
    ]
    out = list(R.xmap_readers(mapper, rng_reader(40), 3, 5)())
    assert sorted(out) == [i * i for i in range(40)]


def test_xmap_error_and_early_stop(no_leaks):
    def bad(x):
        if x == 5:
            raise ZeroDivisionError("mapper failed on 5")
        return x

    with pytest.raises(ZeroDivisionError, match="on 5"):
        list(R.xmap_readers(bad, rng_reader(20), 2, 4, order=True)())
    with pytest.raises(KeyError):
        list(R.xmap_readers(lambda x: x, failing_reader(3), 2, 2)())
    for i, _ in enumerate(R.xmap_readers(lambda x: x, rng_reader(10_000), 2, 4, True)()):
        if i == 3:
            break


@pytest.mark.parametrize("use_pipe", [True, False])
def test_multiprocess_reader_merges_all(use_pipe, no_leaks):
    r = R.multiprocess_reader(
        [rng_reader(20), rng_reader(5, 100), rng_reader(0)], use_pipe=use_pipe
    )
    out = list(r())
    assert sorted(out) == list(range(20)) + list(range(100, 105))
    # each reader's own order is kept
    assert [x for x in out if x < 100] == list(range(20))


@pytest.mark.parametrize("use_pipe", [True, False])
def test_multiprocess_reader_error_and_early_stop(use_pipe, no_leaks):
    with pytest.raises(RuntimeError, match="KeyError.*broken sample source"):
        list(R.multiprocess_reader([failing_reader(2), rng_reader(3)], use_pipe=use_pipe)())
    it = R.multiprocess_reader(
        [rng_reader(10**6), rng_reader(10**6)], use_pipe=use_pipe, queue_size=8
    )()
    next(it)
    it.close()


def test_batch_sizes_and_drop_last():
    assert list(oar.batch(rng_reader(7), 3)()) == [[0, 1, 2], [3, 4, 5], [6]]
    assert list(oar.batch(rng_reader(7), 3, drop_last=True)()) == [[0, 1, 2], [3, 4, 5]]
    for bad in (0, -2, 1.5, True):
        with pytest.raises(ValueError, match="batch_size"):
            oar.batch(rng_reader(3), bad)


def test_decorators_reject_a_reader_result():
    with pytest.raises(TypeError, match="not its result"):
        R.shuffle(iter(range(3)), 2)


def test_third_party_decorator_through_the_hook():
    from oar.hookspecs import hookimpl
    from oar.plugins import register

    def every_other(reader):
        return lambda: (x for i, x in enumerate(reader()) if i % 2 == 0)

    class ThirdParty:
        @hookimpl
        def oar_register_reader_decorators(self, registry):
            registry.register("every_other_test", every_other)

    register(ThirdParty(), name="third-party-reader-test")
    assert list(oar.reader.every_other_test(rng_reader(5))()) == [0, 2, 4]
    assert "every_other_test" in dir(oar.reader)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        oar.reader.nope  # noqa: B018

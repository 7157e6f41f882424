"""InMemoryDataset.global_shuffle across two trainer processes (mpiexec -n 2): the records of
both trainers are dealt between them through the dist plugin's communicator."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("oar_dist")
pytest.importorskip("oar_data")

from .mpi_helpers import HERE_DIR, run_mpi

N = 40


def test_global_shuffle_exchanges_records_between_two_trainers(tmp_path):
    run_mpi(HERE_DIR / "scripts" / "global_shuffle_rank.py", 2, str(tmp_path), str(N), timeout=120)
    ranks = [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in range(2)]
    everything = sorted(i for r in ranks for i in r["held"])
    assert everything == sorted([i for i in range(N)] + [1000 + i for i in range(N)])
    for r, got in enumerate(ranks):
        assert got["loaded"] == got["shuffled"] == 2 * N  # sizes summed over the trainers
        foreign = [i for i in got["held"] if i // 1000 != r]
        assert foreign and len(foreign) < len(got["held"]), f"trainer {r} kept or lost everything"


def test_global_shuffle_without_a_dist_fleet_is_refused_or_local(tmp_path):
    from oar import fluid

    path = tmp_path / "part"
    path.write_text("".join(f"1 {i}\n" for i in range(20)))
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        ids = fluid.data("ids", [None, 1], "int64")
    dataset = fluid.DatasetFactory().create_dataset("InMemoryDataset")
    dataset.set_use_var([ids])
    dataset.set_filelist([str(path)])
    dataset.load_into_memory()
    dataset.global_shuffle()
    assert sorted(int(r[0][0]) for r in dataset._memory) == list(range(20))

    class TwoWorkers:
        def worker_num(self):
            return 2

    with pytest.raises(NotImplementedError, match="oar-dist"):
        dataset.global_shuffle(TwoWorkers())

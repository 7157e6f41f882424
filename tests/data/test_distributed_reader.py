"""fluid.contrib.reader.distributed_batch_reader: batches dealt to trainers as Paddle does."""

import pytest
from oar import fluid

pytest.importorskip("oar_data")


def batches():
    yield from ([i] for i in range(7))


@pytest.mark.parametrize("trainer_id,expected", [(0, [[0], [3]]), (1, [[1], [4]]), (2, [[2], [5]])])
def test_three_trainers(monkeypatch, trainer_id, expected):
    monkeypatch.setenv("PADDLE_TRAINERS_NUM", "3")
    monkeypatch.setenv("PADDLE_TRAINER_ID", str(trainer_id))
    assert list(fluid.contrib.reader.distributed_batch_reader(batches)()) == expected


def test_single_trainer_gets_everything(monkeypatch):
    monkeypatch.delenv("PADDLE_TRAINERS_NUM", raising=False)
    monkeypatch.delenv("PADDLE_TRAINER_ID", raising=False)
    assert len(list(fluid.contrib.reader.distributed_batch_reader(batches)())) == 7


def test_bad_trainer_id(monkeypatch):
    monkeypatch.setenv("PADDLE_TRAINERS_NUM", "2")
    monkeypatch.setenv("PADDLE_TRAINER_ID", "2")
    with pytest.raises(ValueError, match="PADDLE_TRAINER_ID=2"):
        fluid.contrib.reader.distributed_batch_reader(batches)

"""Seed 004, 数据并行 (dygraph multi-GPU): the fragments run under launch with only imports changed.

The seed gives four fragments of ``train_multi_gpu`` (lines 50-70) and the
command ``python -m paddle.distributed.launch --selected_gpus=0,1,2,3 --log_dir
./mylog train_multi_gpu.py`` (73-75). Here the fragments, verbatim, are put
into a training script around the seed's own ``MNIST`` class (004, 104-133,
kept in ``test_seed_004_dygraph.DEFINE``) and started as ``python -m
oar.distributed.launch --nproc_per_node=2 --log_dir ./mylog train_multi_gpu.py``:
two CPU processes, ``CUDAPlace(dev_id)`` on the CPU fallback. Harness glue
(marked below) is the loop the seed leaves out, plus two bindings the fragments
need: ``true`` (the seed writes ``drop_last=true``) and ``mnist`` (the seed's
last fragment calls ``mnist.apply_collective_grads()`` on the model it names
``model``).
"""

from __future__ import annotations

import gzip
import os
import shutil
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("oar_dist")
pytest.importorskip("oar_io")

from .test_seed_004_dygraph import DEFINE, HARNESS, _write_data, port

ENV_FRAGMENT = """
  device_id = fluid.dygraph.parallel.Env().dev_id
  place = fluid.CUDAPlace(device_id)
"""

MODEL_FRAGMENT = """
  strategy = fluid.dygraph.parallel.prepare_context() ## 新增
  model = MNIST()
  model = fluid.dygraph.parallel.DataParallel(model, strategy)  ## 新增
"""

READER_FRAGMENT = """
  valid_loader = paddle.batch(paddle.dataset.mnist.test(), batch_size=16, drop_last=true)
  valid_loader = fluid.contrib.reader.distributed_batch_reader(valid_loader)
"""

LOSS_FRAGMENT = """
  avg_loss = model.scale_loss(avg_loss)  ## 新增
  avg_loss.backward()
  mnist.apply_collective_grads()         ## 新增
"""

N_TEST = 16 * 2 * 3  # three batches of 16 per rank

# harness: the made MNIST files have their own md5s; `true` as the seed writes it
MD5_HARNESS = """
import hashlib as _h, os as _os
import oar.dataset.mnist as _m
_d = _os.path.join(_os.environ['OAR_DATA_HOME'], 'mnist')
for _c, _f in (('TEST_IMAGE_MD5', 't10k-images-idx3-ubyte.gz'), ('TEST_LABEL_MD5', 't10k-labels-idx1-ubyte.gz')):
    setattr(_m, _c, _h.md5(open(_os.path.join(_d, _f), 'rb').read()).hexdigest())
true = True
"""


def _block(fragment: str, indent: str = "    ") -> str:
    return textwrap.indent(textwrap.dedent(fragment), indent)


def train_multi_gpu() -> str:
    """The seed's fragments in order, with the harness loop they leave out."""
    return (
        "\ndef train_multi_gpu():\n"
        + _block(ENV_FRAGMENT)
        + "    with fluid.dygraph.guard(place):\n"
        + _block(MODEL_FRAGMENT, "        ")
        + "        mnist = model  # harness: the seed's name for the model\n"
        + _block(READER_FRAGMENT, "        ")
        + "        # harness: the training loop the seed leaves out\n"
        + "        optimizer = fluid.optimizer.AdamOptimizer(learning_rate=0.001, "
        + "parameter_list=model.parameters())\n"
        + "        rank = fluid.dygraph.parallel.Env().local_rank\n"
        + "        for batch_id, data in enumerate(valid_loader()):\n"
        + "            image = fluid.dygraph.to_variable(np.array([x[0].reshape(1, 28, 28) for x in data], 'float32'))\n"
        + "            label = fluid.dygraph.to_variable(np.array([[x[1]] for x in data], 'int64'))\n"
        + "            predict, acc = model(image, label)\n"
        + "            avg_loss = fluid.layers.mean(fluid.layers.cross_entropy(predict, label))\n"
        + "            print('rank {} batch {} loss {}'.format(rank, batch_id, avg_loss.numpy()[0]))\n"
        + _block(LOSS_FRAGMENT, "            ")
        + "            optimizer.minimize(avg_loss)\n"
        + "            model.clear_gradients()\n"
        + "        np.savez('params.{}.npz'.format(rank), **{k: v.numpy() for k, v in model.state_dict().items()})\n"
        + "\ntrain_multi_gpu()\n"
    )


def _write_idx(d: Path, part: str, n: int, rng) -> None:
    images = rng.integers(0, 256, (n, 28, 28)).astype(np.uint8)
    labels = rng.integers(0, 10, n).astype(np.uint8)
    with gzip.open(d / f"{part}-images-idx3-ubyte.gz", "wb") as f:
        f.write(struct.pack(">IIII", 2051, n, 28, 28) + images.tobytes())
    with gzip.open(d / f"{part}-labels-idx1-ubyte.gz", "wb") as f:
        f.write(struct.pack(">II", 2049, n) + labels.tobytes())


def _mpiexec_or_skip() -> None:
    pytest.importorskip("mpi4py")
    try:
        from mpi4py import MPI  # noqa: F401
    except (ImportError, RuntimeError) as exc:
        pytest.skip(f"mpi4py has no MPI library: {exc}")
    if not (Path(sys.executable).parent / "mpiexec").exists() and not shutil.which("mpiexec"):
        pytest.skip("no mpiexec (pip install mpich)")


def test_seed_004_multi_gpu_fragments_train_on_two_processes(tmp_path):
    _mpiexec_or_skip()
    _write_data(tmp_path, n_train=10)  # the seed's ./work/mnist.json.gz (DEFINE loads it)
    home = tmp_path / "data_home"
    (home / "mnist").mkdir(parents=True)
    _write_idx(home / "mnist", "t10k", N_TEST, np.random.default_rng(0))
    script = HARNESS + MD5_HARNESS + port(DEFINE) + port(train_multi_gpu())
    (tmp_path / "train_multi_gpu.py").write_text(script)
    env = dict(os.environ, OAR_DATA_HOME=str(home), OAR_DATA_OFFLINE="1", PYTHONWARNINGS="ignore")
    # the seed's command, with --nproc_per_node=2 for the GPUs this machine lacks
    cmd = "python -m oar.distributed.launch --nproc_per_node=2 --log_dir ./mylog train_multi_gpu.py"
    proc = subprocess.run(
        [sys.executable, *cmd.split()[1:]],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    logs = [(tmp_path / "mylog" / f"workerlog.{r}").read_text() for r in (0, 1)]
    losses = [
        [float(ln.split()[-1]) for ln in log.splitlines() if ln.startswith(f"rank {r} batch")]
        for r, log in enumerate(logs)
    ]
    assert [len(v) for v in losses] == [3, 3]  # distributed_batch_reader: 6 batches, 3 each
    assert losses[0][0] != losses[1][0]  # each rank saw its own batch from the same start
    p0, p1 = (np.load(tmp_path / f"params.{r}.npz") for r in (0, 1))
    assert sorted(p0.files) == sorted(p1.files) and "fc.weight" in p0.files  # no wrapper prefix
    for key in p0.files:
        np.testing.assert_array_equal(p0[key], p1[key])

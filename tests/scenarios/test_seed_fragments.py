"""Two seed fragments that run on one machine, checked against what Fluid 1.8.5 does with them.

* Seed 000, 模型间共享参数 (lines 91-103): the text leaves ``input1`` and
  ``input2`` to the reader (``# harness`` lines define them) and calls
  ``fluid.layers.fc`` without ``size``. Fluid 1.8.5 raises
  ``TypeError: fc() missing 1 required positional argument: 'size'`` on it;
  oar must do the same, not build a layer of some guessed width. (Sharing
  weights by ``ParamAttr`` name itself is tested in test_faq_parameters.py.)
* Seed 001, 选择是否使用分布式embedding表进行训练 (lines 1544-1550): the
  distributed lookup table only means something under the parameter-server
  transpiler (no plugin yet), but the layer call builds and runs locally in
  Fluid 1.8.5 as a ``lookup_table`` op with ``is_distributed``/``is_sparse``
  set; so it must in oar. ``input``, ``dict_size`` and ``embedding_width``
  are harness lines.
* Seed 001, Batch Reader接口 (lines 571-581): ``custom_batch_reader`` is
  written for Python 2 (``xrange``); a ``# harness`` line binds ``xrange``
  to ``range`` (and imports ``numpy``, which the text leaves out). One batch
  it yields is checked for the layout the text describes (128 one-column
  tuples) and fed through ``fluid.DataFeeder`` to a 784-wide data layer.
"""

import subprocess
import sys

import pytest

PARAM_SHARING = """
import paddle.fluid as fluid  # harness
input1 = fluid.layers.data(name='input1', shape=[4], dtype='float32')  # harness
input2 = fluid.layers.data(name='input2', shape=[4], dtype='float32')  # harness
import paddle.fluid as fluid

fc1 = fluid.layers.fc(
    input=input1,
    param_attr=fluid.param_attr.ParamAttr(name='fc.w'),
    bias_attr=fluid.param_attr.ParamAttr(name='fc.b'))

fc2 = fluid.layers.fc(
    input=input2,
    param_attr=fluid.param_attr.ParamAttr(name='fc.w'),
    bias_attr=fluid.param_attr.ParamAttr(name='fc.b'))
"""

DISTRIBUTED_EMBEDDING = """
import paddle.fluid as fluid  # harness
import numpy as np  # harness
input = fluid.layers.data(name='input', shape=[1], dtype='int64')  # harness
dict_size, embedding_width = 10, 4  # harness
emb = fluid.layers.embedding(
    is_distributed=True,
    input=input,
    size=[dict_size, embedding_width],
    is_sparse=True)
exe = fluid.Executor(fluid.CPUPlace()); exe.run(fluid.default_startup_program())  # harness
out, = exe.run(feed={'input': np.array([[1], [3], [1]], 'int64')}, fetch_list=[emb])  # harness
w = np.array(fluid.global_scope().find_var('embedding_0.w_0').get_tensor())  # harness
op = fluid.default_main_program().global_block().ops[0]  # harness
print("OP", op.type, op.attr('is_distributed'), op.attr('is_sparse'), w.shape, out.shape)  # harness
print("ROWS", bool((out == w[[1, 3, 1]]).all()))  # harness
"""


CUSTOM_BATCH_READER = """
import numpy  # harness
xrange = range  # harness: the sample is Python 2 code
def custom_batch_reader():
    while True:
        batch = []
        for i in xrange(128):
            # 注意一定需要是tuple，所以是(data,)这样的写法
            batch.append((numpy.random.uniform(-1, 1, 28*28),)) 
        yield batch

mnist_random_image_batch_reader = custom_batch_reader
import paddle.fluid as fluid  # harness
batch = next(mnist_random_image_batch_reader())  # harness
image = fluid.layers.data(name='image', shape=[784], dtype='float32')  # harness
fed = fluid.DataFeeder(feed_list=[image], place=fluid.CPUPlace()).feed(batch)  # harness
arr = numpy.array(fed['image'])  # harness
print("BATCH", len(batch), all(isinstance(t, tuple) and len(t) == 1 for t in batch), arr.shape, arr.dtype,  # harness
      bool((numpy.abs(arr) <= 1).all()), bool(numpy.allclose(arr, numpy.stack([t[0] for t in batch]))))  # harness
"""  # noqa: W291 (the seed's trailing space)


def port(src: str) -> str:
    """The user's change: import lines only."""
    return src.replace("import paddle.fluid as fluid", "from oar import fluid")


def run(src: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", port(src)], capture_output=True, text=True, timeout=60)


def test_param_sharing_sample_without_size_is_a_type_error_as_in_fluid():
    r = run(PARAM_SHARING)
    assert r.returncode != 0
    last = r.stderr.strip().splitlines()
    assert any(line.startswith("TypeError: fc() missing 1 required positional argument: 'size'") for line in last)


def test_distributed_embedding_flag_builds_and_runs_locally():
    r = run(DISTRIBUTED_EMBEDDING)
    assert r.returncode == 0, r.stderr
    assert "OP lookup_table True True (10, 4) (3, 4)" in r.stdout
    assert "ROWS True" in r.stdout


def test_python2_custom_batch_reader_feeds_a_data_layer():
    pytest.importorskip("oar_data")  # fluid.DataFeeder is the data plugin's
    r = run(CUSTOM_BATCH_READER)
    assert r.returncode == 0, r.stderr
    assert "BATCH 128 True (128, 784) float32 True True" in r.stdout

"""Seed 001, 同步数据读取 (数据层配置, 传递训练数据给执行器, 进阶使用): the samples run with only import lines changed.

Sample text is verbatim; each script runs in a fresh interpreter. The seed's
snippets are fragments of one story (the network of 数据层配置 is what
传递训练数据给执行器 feeds), so a script may chain two of them; lines the text
leaves to the reader (``numpy`` never imported, ``create_lod_tensor`` used
unqualified, ``exe`` of the previous snippet) are added as ``# harness``
lines. A bare ``...`` line in the seed is valid Python (an Ellipsis statement)
and is kept. The two ``append_batch_size=False`` one-liners are indented by
four spaces in the seed (they sit inside a list item), so they are dedented:
whitespace only.

``fluid.ParallelExecutor()`` with a list of feeds (lines 971-985) is
rejected by Fluid 1.8.5 itself (``TypeError: __init__() missing 1 required
positional argument: 'use_cuda'``); the test checks oar rejects it the same way.
"""

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

DATA_LAYER_CONFIG = """
import paddle.fluid as fluid

image = fluid.layers.data(name="image", shape=[3, 224, 224])
label = fluid.layers.data(name="label", shape=[1], dtype="int64")

# use image/label as layer input
prediction = fluid.layers.fc(input=image, size=1000, act="softmax")
loss = fluid.layers.cross_entropy(input=prediction, label=label)
...
"""

FEED_EXECUTOR = """
import numpy  # harness: the seed's snippet uses numpy without importing it
exe = fluid.Executor(fluid.CPUPlace())
# init Program
exe.run(fluid.default_startup_program())
exe.run(feed={
   "image": numpy.random.random(size=(32, 3, 224, 224)).astype('float32'),
   "label": numpy.random.random(size=(32, 1)).astype('int64')
})
"""

PARALLEL_FEED_LIST = """
parallel_executor = fluid.ParallelExecutor()
parallel_executor.run(
  feed=[
     {
       "image": numpy.random.random(size=(32, 3, 224, 224)).astype('float32'),
       "label": numpy.random.random(size=(32, 1)).astype('int64')
     },
     {
       "image": numpy.random.random(size=(16, 3, 224, 224)).astype('float32'),
       "label": numpy.random.random(size=(16, 1)).astype('int64')
     },
  ]
)
"""

# harness: the same kind of batch again, now fetching the loss, and the weights to check it against
FEED_CHECK = """
numpy.random.seed(7)  # harness
img = numpy.random.random(size=(4, 3, 224, 224)).astype('float32')  # harness
lab = numpy.array([[3], [0], [999], [42]], dtype='int64')  # harness
out, = exe.run(feed={"image": img, "label": lab}, fetch_list=[loss])  # harness
w = numpy.array(fluid.global_scope().find_var('fc_0.w_0').get_tensor())  # harness
b = numpy.array(fluid.global_scope().find_var('fc_0.b_0').get_tensor())  # harness
logits = (img.reshape(4, -1).dot(w) + b).astype('float64')  # harness: a numpy softmax cross-entropy
logits -= logits.max(axis=1, keepdims=True)  # harness
expected = numpy.log(numpy.exp(logits).sum(axis=1)) - logits[numpy.arange(4), lab.ravel()]  # harness
print("W", w.shape, "OUT", out.shape, "LOSS", out.ravel().tolist(), "EXPECTED", expected.tolist())  # harness
"""

LOD_FEED = """
import paddle.fluid as fluid  # harness
import numpy  # harness
from paddle.fluid import create_lod_tensor  # harness: the seed calls it unqualified
exe = fluid.Executor(fluid.CPUPlace())  # harness: the previous snippet's executor
sentence = fluid.layers.data(name="sentence", dtype="int64", shape=[1], lod_level=1)

...

exe.run(feed={
  "sentence": create_lod_tensor(
    data=numpy.array([1, 3, 4, 5, 3, 6, 8], dtype='int64').reshape(-1, 1),
    recursive_seq_lens=[[4, 1, 2]],
    place=fluid.CPUPlace()
  )
})
t, = exe.run(feed={"sentence": create_lod_tensor(numpy.array([1, 3, 4, 5, 3, 6, 8], dtype='int64').reshape(-1, 1), [[4, 1, 2]], fluid.CPUPlace())}, fetch_list=[sentence], return_numpy=False)  # harness
print("LOD", t.recursive_sequence_lengths(), numpy.array(t).ravel().tolist(), sentence.lod_level)  # harness
"""

# the seed's text, indented as in the seed; dedented before running
FIXED_BATCH = """
    image = fluid.layers.data(name="image", shape=[32, 784], append_batch_size=False)
"""

FIXED_SEQUENCE = """
    sentence = fluid.layers.data(name="sentence",
                                 shape=[80, -1, 1],
                                 append_batch_size=False,
                                 dtype="int64")
"""

HARNESS_IMPORT = "import paddle.fluid as fluid  # harness\n"


def port(src: str) -> str:
    """The user's change: import lines only."""
    src = src.replace("import paddle.fluid as fluid", "from oar import fluid")
    return src.replace("from paddle.fluid import", "from oar.fluid import")


def run(src: str) -> str:
    r = subprocess.run([sys.executable, "-c", src], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.mark.slow
def test_data_layer_config_then_feed_numpy_to_the_executor():
    out = run(port(DATA_LAYER_CONFIG + FEED_EXECUTOR + FEED_CHECK))
    line = next(ln for ln in out.splitlines() if ln.startswith("W "))
    assert line.startswith("W (150528, 1000) OUT (4, 1) LOSS ")
    loss = json.loads(line.split(" LOSS ")[1].split(" EXPECTED ")[0])
    expected = json.loads(line.split(" EXPECTED ")[1])
    np.testing.assert_allclose(loss, expected, rtol=2e-4)


def test_lod_level_1_data_layer_takes_a_lod_tensor_feed():
    out = run(port(LOD_FEED))
    assert "LOD [[4, 1, 2]] [1, 3, 4, 5, 3, 6, 8] 1" in out


def test_append_batch_size_false_keeps_the_declared_shape():
    image = HARNESS_IMPORT + textwrap.dedent(FIXED_BATCH) + 'print("IMAGE", image.shape)  # harness\n'
    assert "IMAGE (32, 784)" in run(port(image))
    sentence = (HARNESS_IMPORT + textwrap.dedent(FIXED_SEQUENCE)
                + 'print("SENTENCE", sentence.shape, sentence.lod_level)  # harness\n')
    assert "SENTENCE (80, -1, 1) 0" in run(port(sentence))


def test_parallel_executor_without_use_cuda_is_a_type_error_as_in_fluid():
    src = port(DATA_LAYER_CONFIG + "import numpy  # harness\n" + PARALLEL_FEED_LIST)
    r = subprocess.run([sys.executable, "-c", src], capture_output=True, text=True, timeout=60)
    assert r.returncode != 0
    assert "missing 1 required positional argument: 'use_cuda'" in r.stderr.strip().splitlines()[-1]

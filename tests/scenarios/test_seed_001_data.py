"""Seed 001, 准备数据 and 异步数据读取: the samples run on oar with only the import lines changed.

Sample text is kept verbatim below. ``port`` swaps the import lines; each
script runs in a fresh interpreter. MNIST comes from tiny files in the real
idx format written by the test (no download): a harness preamble, not part
of any sample, points the dataset cache at them and sets their md5s. GPU
lines run with ``OAR_FALLBACK_DEVICE=cpu``.

Not run, because they are not Fluid 1.8 code: ``paddle.train(...)`` and
``paddle.layer.data`` (the pre-Fluid v2 API, which Fluid 1.8 does not have
either) and ``custom_batch_reader`` (uses Python 2's ``xrange``). Where the
seed writes "Here, we omitted the definition of loss of the model", the test
puts a two-line loss at that comment (marked below); nothing else changes.
"""

from __future__ import annotations

import gzip
import os
import re
import struct
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("oar_data")

DATA_LAYERS = """
import paddle.fluid as fluid

image = fluid.layers.data(name='image', dtype='float32', shape=[28, 28])
label = fluid.layers.data(name='label', dtype='int64', shape=[1])
"""

DATA_LAYERS_NO_BATCH = """
import paddle.fluid as fluid

image = fluid.layers.data(name='image', dtype='float32', shape=[28, 28], append_batch_size=False)
label = fluid.layers.data(name='label', dtype='int64', shape=[1], append_batch_size=False)
"""

READER_CREATORS = """
def reader_creator_random_image(width, height):
    def reader():
        while True:
            yield numpy.random.uniform(-1, 1, size=width*height)
    return reader

def reader_creator_random_image_and_label(width, height, label):
    def reader():
        while True:
            yield numpy.random.uniform(-1, 1, size=width*height), label
    return reader
"""

MNIST_BATCH = """
mnist_train = paddle.dataset.mnist.train()
mnist_train_batch_reader = paddle.batch(mnist_train, 128)
"""

BUFFERED = """
buffered_reader = paddle.reader.buffered(paddle.dataset.mnist.train(), 100)
"""

GAN_COMPOSE = """
def reader_creator_random_image(width, height):
    def reader():
        while True:
            yield numpy.random.uniform(-1, 1, size=width*height)
    return reader

def reader_creator_bool(t):
    def reader():
        while True:
            yield t
    return reader

true_reader = reader_creator_bool(True)
false_reader = reader_creator_bool(False)

reader = paddle.reader.compose(paddle.dataset.mnist.train(), reader_creator_random_image(20, 20),
                true_reader, false_reader)
"""

SHUFFLE = """
reader = paddle.reader.shuffle(paddle.dataset.mnist.train(), 512)
"""

CREATE_PYREADER = """
import paddle.fluid as fluid

image = fluid.layers.data(name='image', dtype='float32', shape=[784])
label = fluid.layers.data(name='label', dtype='int64', shape=[1])

ITERABLE = True

py_reader = fluid.io.PyReader(feed_list=[image, label], capacity=64, 
			use_double_buffer=True, iterable=ITERABLE)
"""  # noqa: W291 (the seed's trailing space and tab)

TRAIN_TEST_PAIR = """
import paddle
import paddle.fluid as fluid
import paddle.dataset.mnist as mnist

def network():
    image = fluid.layers.data(name='image', dtype='float32', shape=[784])
    label = fluid.layers.data(name='label', dtype='int64', shape=[1])
    reader = fluid.io.PyReader(feed_list=[image, label], capacity=64)

    # Here, we omitted the definition of loss of the model
    return loss , reader

# Create main program and startup program for training
train_prog = fluid.Program()
train_startup = fluid.Program()

with fluid.program_guard(train_prog, train_startup):
    # Use fluid.unique_name.guard() to share parameters with test network
    with fluid.unique_name.guard():
        train_loss, train_reader = network()
        adam = fluid.optimizer.Adam(learning_rate=0.01)
        adam.minimize(train_loss)

# Create main program and startup program for testing
test_prog = fluid.Program()
test_startup = fluid.Program()
with fluid.program_guard(test_prog, test_startup):
    # Use fluid.unique_name.guard() to share parameters with train network
    with fluid.unique_name.guard():
        test_loss, test_reader = network()
"""

FAKE_READERS = """
import paddle.fluid as fluid
import numpy as np

# sample级reader
def fake_sample_reader():
    for _ in range(100):
        sample_image = np.random.random(size=(784, )).astype('float32')
        sample_label = np.random.random_integers(size=(1, ), low=0, high=9).astype('int64')
        yield sample_image, sample_label

# batch级reader
def fake_batch_reader():
    batch_size = 32
    for _ in range(100):
        batch_image = np.random.random(size=(batch_size, 784)).astype('float32')
        batch_label = np.random.random_integers(size=(batch_size, 1), low=0, high=9).astype('int64')
        yield batch_image, batch_label

image1 = fluid.layers.data(name='image1', dtype='float32', shape=[784])
label1 = fluid.layers.data(name='label1', dtype='int64', shape=[1])

image2 = fluid.layers.data(name='image2', dtype='float32', shape=[784])
label2 = fluid.layers.data(name='label2', dtype='int64', shape=[1])

image3 = fluid.layers.data(name='image3', dtype='float32', shape=[784])
label3 = fluid.layers.data(name='label3', dtype='int64', shape=[1])
"""

DECORATE_FORMS = """
import paddle
import paddle.fluid as fluid

ITERABLE = True
USE_CUDA = True
USE_DATA_PARALLEL = True

if ITERABLE:
    # 若PyReader可迭代，则必须设置places参数
    if USE_DATA_PARALLEL:
        # 若进行多GPU卡训练，则取所有的CUDAPlace
        # 若进行多CPU核训练，则取多个CPUPlace，本例中取了8个CPUPlace
        places = fluid.cuda_places() if USE_CUDA else fluid.cpu_places(8)
    else:
        # 若进行单GPU卡训练，则取单个CUDAPlace，本例中0代表0号GPU卡
        # 若进行单CPU核训练，则取单个CPUPlace，本例中1代表1个CPUPlace
        places = fluid.cuda_places(0) if USE_CUDA else fluid.cpu_places(1)
else:
    # 若PyReader不可迭代，则不需要设置places参数
    places = None

# 使用sample级的reader作为PyReader的数据源
py_reader1 = fluid.io.PyReader(feed_list=[image1, label1], capacity=10, iterable=ITERABLE)
py_reader1.decorate_sample_generator(fake_sample_reader, batch_size=32, places=places)

# 使用sample级的reader + paddle.batch设置PyReader的数据源
py_reader2 = fluid.io.PyReader(feed_list=[image2, label2], capacity=10, iterable=ITERABLE)
sample_list_reader = paddle.batch(fake_sample_reader, batch_size=32)
sample_list_reader = paddle.reader.shuffle(sample_list_reader, buf_size=64) # 还可以进行适当的shuffle
py_reader2.decorate_sample_list_generator(sample_list_reader, places=places)

# 使用batch级的reader作为PyReader的数据源
py_reader3 = fluid.io.PyReader(feed_list=[image3, label3], capacity=10, iterable=ITERABLE)
py_reader3.decorate_batch_generator(fake_batch_reader, places=places)
"""

TRAIN_STEP1 = """
import paddle
import paddle.fluid as fluid
import paddle.dataset.mnist as mnist
import six

ITERABLE = True

def network():
    # 创建数据层对象
    image = fluid.layers.data(name='image', dtype='float32', shape=[784])
    label = fluid.layers.data(name='label', dtype='int64', shape=[1])

    # 创建PyReader对象
    reader = fluid.io.PyReader(feed_list=[image, label], capacity=64, iterable=ITERABLE)

    # Here, we omitted the definition of loss of the model
    return loss , reader

# 创建训练的main_program和startup_program
train_prog = fluid.Program()
train_startup = fluid.Program()

# 定义训练网络
with fluid.program_guard(train_prog, train_startup):
    # fluid.unique_name.guard() to share parameters with test network
    with fluid.unique_name.guard():
        train_loss, train_reader = network()
        adam = fluid.optimizer.Adam(learning_rate=0.01)
        adam.minimize(train_loss)

# 创建预测的main_program和startup_program
test_prog = fluid.Program()
test_startup = fluid.Program()

# 定义预测网络
with fluid.program_guard(test_prog, test_startup):
    # Use fluid.unique_name.guard() to share parameters with train network
    with fluid.unique_name.guard():
        test_loss, test_reader = network()

place = fluid.CUDAPlace(0)
exe = fluid.Executor(place)

# 运行startup_program进行初始化
exe.run(train_startup)
exe.run(test_startup)

# Compile programs
train_prog = fluid.CompiledProgram(train_prog).with_data_parallel(loss_name=train_loss.name)
test_prog = fluid.CompiledProgram(test_prog).with_data_parallel(share_vars_from=train_prog)

# 设置PyReader的数据源
places = fluid.cuda_places() if ITERABLE else None

train_reader.decorate_sample_list_generator(
    paddle.reader.shuffle(paddle.batch(mnist.train(), 512), buf_size=1024), places=places)

test_reader.decorate_sample_list_generator(paddle.batch(mnist.test(), 512), places=places)
"""

RUN_ITERABLE = """
def run_iterable(program, exe, loss, py_reader):
    for data in py_reader():
        loss_value = exe.run(program=program, feed=data, fetch_list=[loss])
        print('loss is {}'.format(loss_value))

for epoch_id in six.moves.range(10):
    run_iterable(train_prog, exe, train_loss, train_reader)
    run_iterable(test_prog, exe, test_loss, test_reader)
"""

RUN_NON_ITERABLE = """
def run_non_iterable(program, exe, loss, py_reader):
    py_reader.start()
    try:
        while True:
            loss_value = exe.run(program=program, fetch_list=[loss])
            print('loss is {}'.format(loss_value))
    except fluid.core.EOFException:
        print('End of epoch')
        py_reader.reset()

for epoch_id in six.moves.range(10):
    run_non_iterable(train_prog, exe, train_loss, train_reader)
    run_non_iterable(test_prog, exe, test_loss, test_reader)

"""

OMITTED_LOSS = "    # Here, we omitted the definition of loss of the model\n"
# test-supplied (the seed omits it): a softmax classifier's mean cross-entropy
LOSS = ("    loss = fluid.layers.mean(fluid.layers.cross_entropy(\n"
        "        input=fluid.layers.fc(input=image, size=10, act='softmax'), label=label))\n")

N_TRAIN, N_TEST = 1100, 600  # -> 3 train batches of 512 (last 76), 2 test batches (last 88)


def port(src: str) -> str:
    """The only change a user makes: the import lines."""
    return (src.replace("import paddle.fluid as fluid", "from oar import fluid")
            .replace("import paddle.dataset.mnist as mnist", "import oar.dataset.mnist as mnist")
            .replace("import paddle\n", "import oar as paddle\n"))


def with_loss(src: str) -> str:
    assert OMITTED_LOSS in src
    return src.replace(OMITTED_LOSS, OMITTED_LOSS + LOSS)


def _write_idx(d, part, n, rng):
    images = rng.integers(0, 256, (n, 28, 28)).astype(np.uint8)
    labels = rng.integers(0, 10, n).astype(np.uint8)
    with gzip.open(d / f"{part}-images-idx3-ubyte.gz", "wb") as f:
        f.write(struct.pack(">IIII", 2051, n, 28, 28) + images.tobytes())
    with gzip.open(d / f"{part}-labels-idx1-ubyte.gz", "wb") as f:
        f.write(struct.pack(">II", 2049, n) + labels.tobytes())


@pytest.fixture(scope="module")
def mnist_home(tmp_path_factory):
    home = tmp_path_factory.mktemp("oar_data_home")
    d = home / "mnist"
    d.mkdir()
    rng = np.random.default_rng(0)
    _write_idx(d, "train", N_TRAIN, rng)
    _write_idx(d, "t10k", N_TEST, rng)
    return home


# harness, not a sample: the made files have their own md5s
HARNESS = """
import hashlib as _h, os as _os
import oar.dataset.mnist as _m
_d = _os.path.join(_os.environ['OAR_DATA_HOME'], 'mnist')
for _c, _f in (('TRAIN_IMAGE_MD5', 'train-images-idx3-ubyte.gz'), ('TRAIN_LABEL_MD5', 'train-labels-idx1-ubyte.gz'),
               ('TEST_IMAGE_MD5', 't10k-images-idx3-ubyte.gz'), ('TEST_LABEL_MD5', 't10k-labels-idx1-ubyte.gz')):
    setattr(_m, _c, _h.md5(open(_os.path.join(_d, _f), 'rb').read()).hexdigest())
"""


def run_script(src: str, home=None) -> str:
    env = dict(os.environ, OAR_FALLBACK_DEVICE="cpu", OAR_DATA_OFFLINE="1")
    if home is not None:
        env["OAR_DATA_HOME"] = str(home)
        src = HARNESS + src
    r = subprocess.run([sys.executable, "-W", "ignore::DeprecationWarning", "-c", src], capture_output=True,
                       text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout


def test_data_layer_shapes():
    show = "print(image.shape, label.shape)\n"
    assert run_script(port(DATA_LAYERS) + show).splitlines() == ["(-1, 28, 28) (-1, 1)"]
    assert run_script(port(DATA_LAYERS_NO_BATCH) + show).splitlines() == ["(28, 28) (1,)"]


def test_reader_decorator_samples(mnist_home):
    src = port("import paddle\nimport numpy\n" + READER_CREATORS + MNIST_BATCH + BUFFERED + GAN_COMPOSE + SHUFFLE)
    check = """
img = next(iter(reader_creator_random_image(20, 30)()))
pair = next(iter(reader_creator_random_image_and_label(2, 3, 7)()))
print(img.shape, pair[0].shape, pair[1])
print([len(b) for b in mnist_train_batch_reader()])
print(sum(1 for _ in buffered_reader()))
first = next(iter(paddle.batch(compose_reader, 128)()))
print(len(first), len(first[0]), first[0][0].shape, first[0][2].shape, first[0][3], first[0][4])
try:
    sum(1 for _ in compose_reader())
except paddle.reader.ComposeNotAligned:
    print('not aligned')
labels = [l for _, l in reader()]
print(len(labels), sorted(labels) == sorted(l for _, l in paddle.dataset.mnist.train()()))
"""
    # the GAN sample's reader is kept under another name before SHUFFLE rebinds `reader`
    src = src.replace(SHUFFLE.strip(), "compose_reader = reader\n" + SHUFFLE.strip())
    lines = run_script(src + check, mnist_home).splitlines()
    assert lines[0] == "(600,) (6,) 7"
    assert lines[1] == str([128] * 8 + [N_TRAIN - 8 * 128])
    assert lines[2] == str(N_TRAIN)
    assert lines[3] == "128 5 (784,) (400,) True False"
    assert lines[4] == "not aligned"
    assert lines[5] == f"{N_TRAIN} True"


def test_create_pyreader_and_train_test_pair():
    out = run_script(port(CREATE_PYREADER) + "print(py_reader.iterable)\n"
                     + port(with_loss(TRAIN_TEST_PAIR))
                     + "print(sorted(p.name for p in train_prog.all_parameters()) == "
                       "sorted(p.name for p in test_prog.all_parameters()))\n")
    assert out.splitlines() == ["True", "True"]


@pytest.mark.parametrize("iterable", [True, False])
def test_decorate_forms(iterable):
    src = port(FAKE_READERS) + port(DECORATE_FORMS)
    if not iterable:
        src = src.replace("ITERABLE = True", "ITERABLE = False")
    if iterable:
        count = """
for i, r in enumerate((py_reader1, py_reader2, py_reader3)):
    name = 'image%d' % (i + 1)
    print(sorted(d[0][name].shape[0] for d in r()).count(32), [len(d) for d in r()][:1])
"""
    else:
        # the three readers live in one program (as in the seed), so each run reads from all
        # of them and the shortest epoch (py_reader1: 3 batches) ends it
        count = """
exe = fluid.Executor(fluid.CPUPlace())
readers = (py_reader1, py_reader2, py_reader3)
for epoch in range(2):
    for r in readers:
        r.start()
    n = 0
    try:
        while True:
            out = exe.run(fluid.default_main_program(), fetch_list=[image1, image2, image3])
            n += 1
    except fluid.core.EOFException:
        for r in readers:
            r.reset()
    print(n, [o.shape[0] for o in out])
"""
    lines = run_script(src + count).splitlines()
    if iterable:  # one CUDAPlace (cpu fallback): one dict per step
        assert lines == ["3 [1]", "3 [1]", "100 [1]"]
    else:
        assert len(lines) == 2  # two epochs
        for line in lines:
            steps, sizes = line.split(" ", 1)
            sizes = [int(v) for v in sizes.strip("[]").split(",")]
            # py_reader2 shuffles whole batches, so its short batch (4) may come within the 3 runs
            assert steps == "3" and sizes[0] == sizes[2] == 32 and sizes[1] in (32, 4)


@pytest.mark.parametrize("iterable", [True, False])
def test_train_and_test_with_pyreader(iterable, mnist_home):
    pytest.importorskip("six")  # the seed's sample imports it
    step1 = port(with_loss(TRAIN_STEP1))
    if not iterable:
        step1 = step1.replace("ITERABLE = True", "ITERABLE = False")
    out = run_script(step1 + (RUN_ITERABLE if iterable else RUN_NON_ITERABLE), mnist_home)
    lines = out.splitlines()
    # Fluid prints `loss is [array([2.3], dtype=float32)]`
    losses = [float(re.search(r"array\(\[([^\]]+)\]", line).group(1)) for line in lines
              if line.startswith("loss is")]
    # 10 epochs of 3 train + 2 test batches
    assert len(losses) == 10 * 5
    assert all(np.isfinite(losses))
    if not iterable:
        assert lines.count("End of epoch") == 20

"""Seed 001 (配置简单的网络, 单机训练, 训练过程中评测模型): the samples run with only import lines changed.

Sample text is verbatim; the only additions are import lines (the seed's own
snippets use ``compiler`` and ``os`` without importing them) and, where a
snippet is a fragment, a harness line that defines what it leaves to the
reader (marked ``# harness``). GPU lines (``CUDAPlace(0)``, ``use_cuda=True``)
run with ``OAR_FALLBACK_DEVICE=cpu``, oar's documented CPU fallback.
Two snippets are pseudo-code in the seed itself (``open_files(..., ...)`` and
``test_exec.run(fetch_list=[acc], ...)``): the first is not Python, the
second is run with its ``...`` filled in by a feed.
"""

from __future__ import annotations

import os
import subprocess
import sys

ENV = {**os.environ, "OAR_FALLBACK_DEVICE": "cpu"}

CONFIGURE_NETWORK = """
import paddle.fluid as fluid
import numpy as np
x = fluid.layers.data(name='x', shape=[13], dtype='float32')
y = fluid.layers.data(name='y', shape=[1], dtype='float32')
y_predict = fluid.layers.fc(input=x, size=1, act=None)
cost = fluid.layers.square_error_cost(input=y_predict, label=y)
avg_cost = fluid.layers.mean(cost)
sgd_optimizer = fluid.optimizer.SGD(learning_rate=0.001)
sgd_optimizer.minimize(avg_cost)  # harness: the seed stops at creating the optimizer
exe = fluid.Executor(fluid.CPUPlace())  # harness
exe.run(fluid.default_startup_program())  # harness
rng = np.random.RandomState(0)  # harness: a 13-feature linear task
w = rng.uniform(-1, 1, (13, 1)).astype('float32')  # harness
losses = []  # harness
for _ in range(1500):  # harness
    xb = rng.uniform(-1, 1, (32, 13)).astype('float32')  # harness
    losses.append(float(exe.run(feed={'x': xb, 'y': xb.dot(w)}, fetch_list=[avg_cost])[0][0]))  # harness
print("FIRST", losses[0], "LAST", losses[-1])  # harness
"""

PREPARE = """
import paddle.fluid as fluid

image = fluid.layers.data(name="image", shape=[784])
label = fluid.layers.data(name="label", shape=[1])
hidden = fluid.layers.fc(input=image, size=100, act='relu')
prediction = fluid.layers.fc(input=hidden, size=10, act='softmax')
loss = fluid.layers.cross_entropy(input=prediction, label=label)
loss = fluid.layers.mean(loss)

sgd = fluid.optimizer.SGD(learning_rate=0.001)
sgd.minimize(loss)

# Here the fluid.default_startup_program() and fluid.default_main_program()
# has been constructed.

exe = fluid.Executor(fluid.CUDAPlace(0))
exe.run(program=fluid.default_startup_program())
print("PARAMS", sorted(p.name for p in fluid.default_main_program().all_parameters()))  # harness
print("INIT", fluid.global_scope().find_var('fc_0.w_0').get_tensor().shape())  # harness
"""

SINGLE_AND_MULTI = """
import paddle.fluid as fluid
import numpy

train_program = fluid.Program()
startup_program = fluid.Program()
with fluid.program_guard(train_program, startup_program):
    data = fluid.layers.data(name='X', shape=[1], dtype='float32')
    hidden = fluid.layers.fc(input=data, size=10)
    loss = fluid.layers.mean(hidden)
    sgd = fluid.optimizer.SGD(learning_rate=0.001)
    sgd.minimize(loss)

use_cuda = True
place = fluid.CUDAPlace(0) if use_cuda else fluid.CPUPlace()
exe = fluid.Executor(place)

# Run the startup program once and only once.
# Not need to optimize/compile the startup program.
startup_program.random_seed=1
exe.run(startup_program)

# Run the main program directly without compile.
x = numpy.random.random(size=(10, 1)).astype('float32')
loss_data, = exe.run(train_program,
                     feed={"X": x},
                     fetch_list=[loss.name])

# Or use CompiledProgram:
compiled_prog = compiler.CompiledProgram(train_program)
loss_data, = exe.run(compiled_prog,
             feed={"X": x},
             fetch_list=[loss.name])
print("SINGLE", float(loss_data[0]))  # harness

# NOTE: If you use CPU to run the program, you need
# to specify the CPU_NUM, otherwise, fluid will use
# all the number of the logic cores as the CPU_NUM,
# in that case, the batch size of the input should be
# greater than CPU_NUM, if not, the process will be
# failed by an exception.
if not use_cuda:
    os.environ['CPU_NUM'] = str(2)

compiled_prog = compiler.CompiledProgram(
    train_program).with_data_parallel(
    loss_name=loss.name)
loss_data, = exe.run(compiled_prog,
                     feed={"X": x},
                     fetch_list=[loss.name])
print("MULTI", float(loss_data[0]))  # harness
"""

CLONE_FOR_TEST = """
import paddle.fluid as fluid

img = fluid.layers.data(name="image", shape=[784])
prediction = fluid.layers.fc(
  input=fluid.layers.fc(input=img, size=100, act='relu'),
  size=10,
  act='softmax'
)
label = fluid.layers.data(name="label", shape=[1], dtype="int64")
loss = fluid.layers.mean(fluid.layers.cross_entropy(input=prediction, label=label))
acc = fluid.layers.accuracy(input=prediction, label=label)

test_program = fluid.default_main_program().clone(for_test=True)

adam = fluid.optimizer.Adam(learning_rate=0.001)
adam.minimize(loss)

import numpy as np  # harness
exe = fluid.Executor(fluid.CPUPlace())  # harness
exe.run(fluid.default_startup_program())  # harness
test_data_batch = {'image': np.random.rand(8, 784).astype('float32'),  # harness
                   'label': np.random.randint(0, 10, (8, 1)).astype('int64')}  # harness
before = np.array(fluid.global_scope().find_var('fc_0.w_0').get_tensor()).copy()  # harness
exe = fluid.Executor(fluid.CPUPlace())
test_acc = exe.run(program=test_program, feed=test_data_batch, fetch_list=[acc])
print('Test accuracy is ', test_acc)
after = np.array(fluid.global_scope().find_var('fc_0.w_0').get_tensor())  # harness
print("UNCHANGED", bool((before == after).all()), "TEST_OPS", len(test_program.global_block().ops),  # harness
      "MAIN_OPS", len(fluid.default_main_program().global_block().ops))  # harness

train_exec = fluid.ParallelExecutor(use_cuda=True, loss_name=loss.name)

test_exec = fluid.ParallelExecutor(use_cuda=True, share_vars_from=train_exec,
                                   main_program=test_program)
test_acc = test_exec.run(fetch_list=[acc], feed=test_data_batch)  # the seed's `...` is the feed
print("PE_ACC", float(test_acc[0][0]))  # harness
"""


def port(src: str, extra_imports: str = "") -> str:
    """The user's change: import lines only."""
    src = src.replace("import paddle.fluid as fluid", "from oar import fluid" + extra_imports)
    return src.replace("import paddle\n", "import oar as paddle\n")


def run(src: str) -> str:
    r = subprocess.run([sys.executable, "-c", src], capture_output=True, text=True, timeout=120, env=ENV)
    assert r.returncode == 0, r.stderr
    return r.stdout


def _field(out: str, key: str) -> list:
    line = next(line for line in out.splitlines() if line.startswith(key))
    return line.split()


def test_configure_a_simple_network_learns_a_linear_task():
    out = run(port(CONFIGURE_NETWORK))
    _, first, _, last = _field(out, "FIRST")
    assert float(last) < 0.7 * float(first)  # lr 0.001 is slow; it still clearly learns


def test_prepare_and_initialise_parameters_on_the_fallback_device():
    out = run(port(PREPARE))
    assert "PARAMS ['fc_0.b_0', 'fc_0.w_0', 'fc_1.b_0', 'fc_1.w_0']" in out
    assert "INIT [784, 100]" in out


def test_single_and_multi_device_training_samples():
    out = run(port(SINGLE_AND_MULTI, "\nfrom oar.fluid import compiler\nimport os"))
    single = float(_field(out, "SINGLE")[1])
    multi = float(_field(out, "MULTI")[1])
    assert single == single and multi == multi  # finite numbers came back
    assert multi < single  # the second SGD step moved the mean output down


def test_clone_for_test_and_parallel_executor_samples():
    out = run(port(CLONE_FOR_TEST))
    fields = _field(out, "UNCHANGED")
    assert fields[1] == "True"  # running the test program leaves the parameters alone
    assert int(fields[3]) < int(fields[5])  # the test program has no backward/optimizer ops
    assert "Test accuracy is " in out
    assert 0.0 <= float(_field(out, "PE_ACC")[1]) <= 1.0

"""Seed 001, 模型/变量的保存、载入与增量训练 and ``exe.close()``: the samples run with only import lines changed.

Each sample runs verbatim in its own fresh interpreter, all in one working
directory, in the guide's order: save_params, load_params, save_persistables,
load_persistables (and one training step), the multi-machine trainer-0 save,
and closing an executor. The samples leave the model to the reader, so a
``# harness`` preamble builds the same small model in every script (a 3x2
parameter ``w`` and loss ``sum(w**2)`` under SGD(0.1): no feed is needed, as
the seed's ``exe.run(main_prog)`` has none), and ``# harness`` lines print
``w`` where the check needs it. Every check is computed: a load gives back
exactly the saved values, and one step from loaded values gives
``w * (1 - 2 * 0.1)``.
"""

import os
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("oar_io")

MODEL = """
import paddle.fluid as fluid  # harness
import numpy as np  # harness
fluid.default_startup_program().random_seed = SEED  # harness
w = fluid.layers.create_parameter(shape=[3, 2], dtype='float32', name='w')  # harness
loss = fluid.layers.reduce_sum(fluid.layers.square(w))  # harness
fluid.optimizer.SGD(learning_rate=0.1).minimize(loss)  # harness
def show(tag): print(tag, np.array(fluid.global_scope().find_var('w').get_tensor()).ravel().tolist())  # harness
"""

INIT = """
_e = fluid.Executor(fluid.CPUPlace())  # harness
_e.run(fluid.default_startup_program())  # harness
"""

SAVE_PARAMS = """
import paddle.fluid as fluid

exe = fluid.Executor(fluid.CPUPlace())
param_path = "./my_paddle_model"
prog = fluid.default_main_program()
fluid.io.save_params(executor=exe, dirname=param_path, main_program=None)
"""

LOAD_PARAMS = """
import paddle.fluid as fluid

exe = fluid.Executor(fluid.CPUPlace())
param_path = "./my_paddle_model"
prog = fluid.default_main_program()
fluid.io.load_params(executor=exe, dirname=param_path,
                     main_program=prog)
"""

SAVE_PERSISTABLES = """
import paddle.fluid as fluid

exe = fluid.Executor(fluid.CPUPlace())
path = "./models"
prog = fluid.default_main_program()
fluid.io.save_persistables(exe, path, prog)
"""

LOAD_PERSISTABLES = """
import paddle.fluid as fluid

exe = fluid.Executor(fluid.CPUPlace())
path = "./models"
startup_prog = fluid.default_startup_program()
exe.run(startup_prog)
fluid.io.load_persistables(exe, path, startup_prog)
main_prog = fluid.default_main_program()
exe.run(main_prog)
"""

TRAINER0_SAVE = """
import paddle.fluid as fluid

exe = fluid.Executor(fluid.CPUPlace())
path = "./models"
trainer_id = 0
if trainer_id == 0:
    prog = fluid.default_main_program()
    fluid.io.save_persistables(exe, path, prog)
"""

CLOSE = """
import paddle.fluid as fluid  # harness
exe = fluid.Executor(fluid.CPUPlace())
# training process ...
exe.close() # notify PServer to destory the resource
try:  # harness: a closed executor refuses to run, as in Fluid 1.8
    exe.run(fluid.default_startup_program())  # harness
except RuntimeError as e:  # harness
    print("CLOSED", e)  # harness
"""


def port(src: str) -> str:
    """The user's change: import lines only."""
    return src.replace("import paddle.fluid as fluid", "from oar import fluid")


def run(src: str, cwd) -> dict:
    r = subprocess.run([sys.executable, "-c", port(src)], capture_output=True, text=True, timeout=60, cwd=cwd)
    assert r.returncode == 0, r.stderr
    out = {}
    for line in r.stdout.splitlines():
        tag, _, rest = line.partition(" ")
        out[tag] = rest
    return out


def values(text: str) -> np.ndarray:
    return np.array([float(v) for v in text.strip("[]").split(",")], "float32")


def model(seed: int) -> str:
    return MODEL.replace("SEED", str(seed))


def test_save_load_and_incremental_training_samples(tmp_path):
    saved = run(model(1) + INIT + 'show("W")\n' + SAVE_PARAMS, tmp_path)
    assert sorted(os.listdir(tmp_path / "my_paddle_model")) == [".oar-manifest.json", "w"]  # + oar-io's checkpoint manifest

    loaded = run(model(2) + INIT + 'show("BEFORE")\n' + LOAD_PARAMS + 'show("W")\n', tmp_path)
    assert not np.array_equal(values(loaded["BEFORE"]), values(saved["W"]))  # another seed: other values
    np.testing.assert_array_equal(values(loaded["W"]), values(saved["W"]))

    trained = run(model(3) + INIT + "_e.run(fluid.default_main_program())  # harness\n" + 'show("W")\n'
                  + SAVE_PERSISTABLES, tmp_path)
    assert "w" in os.listdir(tmp_path / "models")

    resumed = run(model(4) + LOAD_PERSISTABLES + 'show("W")\n', tmp_path)
    np.testing.assert_allclose(values(resumed["W"]), values(trained["W"]) * (1 - 2 * 0.1), rtol=1e-6)

    (tmp_path / "models" / "w").unlink()
    again = run(model(5) + INIT + 'show("W")\n' + TRAINER0_SAVE, tmp_path)
    assert "w" in os.listdir(tmp_path / "models")
    reloaded = run(model(6) + INIT + LOAD_PARAMS.replace("./my_paddle_model", "./models") + 'show("W")\n', tmp_path)
    np.testing.assert_array_equal(values(reloaded["W"]), values(again["W"]))


def test_closed_executor_sample(tmp_path):
    out = run(CLOSE, tmp_path)
    assert "CLOSED" in out and "closed" in out["CLOSED"]

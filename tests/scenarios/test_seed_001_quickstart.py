"""Seed 001 (快速使用 and 运行线性回归模型): the samples run on oar with only the import lines changed.

The sample text is kept verbatim below (comments included); ``port`` swaps the
import lines, and each script runs in a fresh interpreter so the default
programs and the global scope start empty, as for a user running it.
The save/load of the inference model (the tail of the regression sample)
belongs to the io plugin and is not part of this file.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

IMPORT = "import paddle.fluid as fluid\n"

QUICKSTART_ONES = """
# 定义数组维度及数据类型，可以修改shape参数定义任意大小的数组
data = fluid.layers.ones(shape=[5], dtype='int64')
# 在CPU上执行运算
place = fluid.CPUPlace()
# 创建执行器
exe = fluid.Executor(place)
# 执行计算
ones_result = exe.run(fluid.default_main_program(),
                        # 获取数据data
                        fetch_list=[data],
                        return_numpy=True)
# 输出结果
print(ones_result[0])
"""

QUICKSTART_ADD = """
# 调用 elementwise_op 将生成的一维数组按位相加
add = fluid.layers.elementwise_add(data,data)
# 定义运算场所
place = fluid.CPUPlace()
exe = fluid.Executor(place)
# 执行计算
add_result = exe.run(fluid.default_main_program(),
                 fetch_list=[add],
                 return_numpy=True)
# 输出结果
print (add_result[0]) 
"""  # noqa: W291 (the seed's trailing space)

QUICKSTART_CAST = """
# 将一维整型数组，转换成float64类型
cast = fluid.layers.cast(x=data, dtype='float64')
# 定义运算场所执行计算
place = fluid.CPUPlace()
exe = fluid.Executor(place)
cast_result = exe.run(fluid.default_main_program(),
                 fetch_list=[cast],
                 return_numpy=True)
# 输出结果
print(cast_result[0])
"""

# The regression sample up to (not including) `#存储训练结果` and fluid.io.save_inference_model.
LINEAR_REGRESSION = """
#加载库
import paddle.fluid as fluid
import numpy as np
#生成数据
np.random.seed(0)
outputs = np.random.randint(5, size=(10, 4))
res = []
for i in range(10):
        # 假设方程式为 y=4a+6b+7c+2d
        y = 4*outputs[i][0]+6*outputs[i][1]+7*outputs[i][2]+2*outputs[i][3]
        res.append([y])
# 定义数据
train_data=np.array(outputs).astype('float32')
y_true = np.array(res).astype('float32')

#定义网络
x = fluid.layers.data(name="x",shape=[4],dtype='float32')
y = fluid.layers.data(name="y",shape=[1],dtype='float32')
y_predict = fluid.layers.fc(input=x,size=1,act=None)
#定义损失函数
cost = fluid.layers.square_error_cost(input=y_predict,label=y)
avg_cost = fluid.layers.mean(cost)
#定义优化方法
sgd_optimizer = fluid.optimizer.SGD(learning_rate=0.05)
sgd_optimizer.minimize(avg_cost)
#参数初始化
cpu = fluid.CPUPlace()
exe = fluid.Executor(cpu)
exe.run(fluid.default_startup_program())
##开始训练，迭代500次
for i in range(500):
        outs = exe.run(
                feed={'x':train_data,'y':y_true},
                fetch_list=[y_predict.name,avg_cost.name])
        if i%50==0:
                print ('iter={:.0f},cost={}'.format(i,outs[1][0]))
"""

# Test harness (not seed text): predict the seed's test sample with the trained parameters.
PREDICT = """
import json as _json
_test = np.array([[[9],[5],[2],[10]]]).astype('float32')
_prog = fluid.default_main_program().clone(for_test=True)
_pred = exe.run(_prog, feed={'x': _test, 'y': np.zeros((1, 1), 'float32')}, fetch_list=[y_predict])[0]
print("RESULT " + _json.dumps({"pred": _pred.tolist()}))
"""


def port(src: str) -> str:
    """The only change a user makes: the import lines."""
    return src.replace("import paddle.fluid as fluid", "from oar import fluid").replace(
        "import paddle\n", "import oar as paddle\n")


def run_script(src: str) -> str:
    r = subprocess.run([sys.executable, "-c", src], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_quickstart_samples_print_the_seed_outputs():
    script = port(IMPORT + textwrap.dedent(QUICKSTART_ONES) + QUICKSTART_ADD + QUICKSTART_CAST)
    assert "paddle" not in script.replace("飞桨", "")
    lines = run_script(script).splitlines()
    assert lines == ["[1 1 1 1 1]", "[2 2 2 2 2]", "[1. 1. 1. 1. 1.]"]


def test_linear_regression_trains_and_predicts():
    out = run_script(port(LINEAR_REGRESSION) + PREDICT)
    costs = [float(line.split("cost=")[1]) for line in out.splitlines() if line.startswith("iter=")]
    iters = [line.split(",")[0] for line in out.splitlines() if line.startswith("iter=")]
    assert iters == [f"iter={i}" for i in range(0, 500, 50)]
    assert costs[0] > 10 * costs[-1]  # the loss falls
    assert all(b <= a * 1.01 for a, b in zip(costs, costs[1:]))
    assert costs[-1] < 0.1
    result = json.loads(next(line for line in out.splitlines() if line.startswith("RESULT "))[7:])
    # 9a+5b+2c+10d with y=4a+6b+7c+2d -> 4*9+6*5+7*2+2*10 = 100
    assert abs(result["pred"][0][0] - 100.0) < 2.0


def test_example_fit_a_line_runs(tmp_path):
    """``examples/fit_a_line.py``, the README's first command (it saves ./result: run it in tmp_path)."""
    from pathlib import Path

    import pytest

    pytest.importorskip("oar_io")
    example = Path(__file__).resolve().parents[2] / "examples" / "fit_a_line.py"
    out = subprocess.run([sys.executable, str(example)], capture_output=True, text=True, timeout=120,
                         cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    last = out.stdout.strip().splitlines()[-1]
    assert last.startswith("9a+5b+2c+10d=[")
    assert abs(float(last.split("[")[1].rstrip("]")) - 100.0) < 2.0
    assert (tmp_path / "result").is_dir()  # the inference model the example saved and reloaded

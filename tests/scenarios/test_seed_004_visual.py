"""Seed 004, 加入正则化项 and 可视化分析 (Matplotlib, VisualDL): the samples run with only import lines changed.

The samples continue the guide's MNIST story: they use ``MNIST``,
``train_loader`` and ``place`` from 模型加载及恢复训练, so each script is the
seed's definition sample (as in test_seed_004_dygraph.py, on the same small
``./work/mnist.json.gz``) followed by the sample, verbatim, in a fresh
interpreter. ``# harness`` lines define what the text leaves to the reader:
``place`` (the training sample's ``fluid.CPUPlace()``), and for the one-line
regulariser sample the model and one step around it. ``matplotlib`` and
``visualdl`` are imported by the samples; where they are not installed the
harness puts a stand-in module in ``sys.modules`` (matplotlib is imported but
never used; the VisualDL stand-in records ``add_scalar`` calls so the test
can check what oar handed to it).
"""

# the seed's code is kept as the seed writes it
# ruff: noqa: W291, W293

import importlib.util
import json
import os
import pathlib

import numpy as np
import pytest

pytest.importorskip("oar_io")

_spec = importlib.util.spec_from_file_location(
    "seed_004_dygraph_scenario", pathlib.Path(__file__).with_name("test_seed_004_dygraph.py"))
seed004 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(seed004)

PLACE = "place = fluid.CPUPlace()  # harness: the training sample's place (use_gpu = False)\n"

STUBS = """
import importlib.util, sys, types, json  # harness
if importlib.util.find_spec("matplotlib") is None:  # harness: imported by the sample, never used
    _mpl = types.ModuleType("matplotlib"); _mpl.pyplot = types.ModuleType("matplotlib.pyplot")  # harness
    sys.modules["matplotlib"] = _mpl; sys.modules["matplotlib.pyplot"] = _mpl.pyplot  # harness
if importlib.util.find_spec("visualdl") is None:  # harness: a recording stand-in for VisualDL's LogWriter
    class LogWriter:  # harness
        records = []  # harness
        def __init__(self, logdir): self.logdir = logdir  # harness
        def add_scalar(self, tag, step, value): LogWriter.records.append((tag, step, float(value[0])))  # harness
    sys.modules["visualdl"] = types.ModuleType("visualdl"); sys.modules["visualdl"].LogWriter = LogWriter  # harness
"""

REGULARIZER = """
with fluid.dygraph.guard(place):  # harness
    model = MNIST()  # harness
    optimizer = fluid.optimizer.AdamOptimizer(learning_rate=0.01, regularization=fluid.regularizer.L2Decay(regularization_coeff=0.1),parameter_list=model.parameters())
    image_data, label_data = next(train_loader())  # harness
    predict, acc = model(fluid.dygraph.to_variable(image_data), fluid.dygraph.to_variable(label_data))  # harness
    avg_loss = fluid.layers.mean(fluid.layers.cross_entropy(predict, fluid.dygraph.to_variable(label_data)))  # harness
    avg_loss.backward()  # harness
    w0 = model.fc.weight.numpy().copy(); g = model.fc.weight.gradient().copy()  # harness
    optimizer.minimize(avg_loss)  # harness
    np.savez('RESULT', w0=w0, g=g, w1=model.fc.weight.numpy())  # harness
"""

MATPLOTLIB = """
#引入matplotlib库
import matplotlib.pyplot as plt

with fluid.dygraph.guard(place):
    model = MNIST()
    model.train() 
    
    optimizer = fluid.optimizer.SGDOptimizer(learning_rate=0.01, parameter_list=model.parameters())
    
    EPOCH_NUM = 10
    iter=0
    iters=[]
    losses=[]
    for epoch_id in range(EPOCH_NUM):
        for batch_id, data in enumerate(train_loader()):
            #准备数据，变得更加简洁
            image_data, label_data = data
            image = fluid.dygraph.to_variable(image_data)
            label = fluid.dygraph.to_variable(label_data)
            
            #前向计算的过程，同时拿到模型输出值和分类准确率
            predict, acc = model(image, label)

            #计算损失，取一个批次样本损失的平均值
            loss = fluid.layers.cross_entropy(predict, label)
            avg_loss = fluid.layers.mean(loss)
            
            #每训练了100批次的数据，打印下当前Loss的情况
            if batch_id % 100 == 0:
                print("epoch: {}, batch: {}, loss is: {}, acc is {}".format(epoch_id, batch_id, avg_loss.numpy(), acc.numpy()))
                iters.append(iter)
                losses.append(avg_loss.numpy())
                iter = iter + 100

            #后向传播，更新参数的过程
            avg_loss.backward()
            optimizer.minimize(avg_loss)
            model.clear_gradients()

    #保存模型参数
    fluid.save_dygraph(model.state_dict(), 'mnist')
print("ITERS", json.dumps(iters, separators=(",", ":")))  # harness
"""

VISUALDL = """
from visualdl import LogWriter
log_writer = LogWriter("./log")
with fluid.dygraph.guard():
    model = MNIST()
    model.train() 
    
    optimizer = fluid.optimizer.SGDOptimizer(learning_rate=0.01, parameter_list=model.parameters())
    
    EPOCH_NUM = 10
    iter = 0
    for epoch_id in range(EPOCH_NUM):
        for batch_id, data in enumerate(train_loader()):
            #准备数据，变得更加简洁
            image_data, label_data = data
            image = fluid.dygraph.to_variable(image_data)
            label = fluid.dygraph.to_variable(label_data)
            
            #前向计算的过程，同时拿到模型输出值和分类准确率
            predict, avg_acc = model(image, label)

            #计算损失，取一个批次样本损失的平均值
            loss = fluid.layers.cross_entropy(predict, label)
            avg_loss = fluid.layers.mean(loss)
            
            #每训练了100批次的数据，打印下当前Loss的情况
            if batch_id % 100 == 0:
                print("epoch: {}, batch: {}, loss is: {}, acc is {}".format(epoch_id, batch_id, avg_loss.numpy(), avg_acc.numpy()))
                log_writer.add_scalar(tag = 'acc', step = iter, value = avg_acc.numpy())
                log_writer.add_scalar(tag = 'loss', step = iter, value = avg_loss.numpy())
                iter = iter + 100

            #后向传播，更新参数的过程
            avg_loss.backward()
            optimizer.minimize(avg_loss)
            model.clear_gradients()

    #保存模型参数
    fluid.save_dygraph(model.state_dict(), 'mnist')
if hasattr(LogWriter, "records"): print("RECORDS", json.dumps(LogWriter.records))  # harness
"""


def script(sample: str) -> str:
    return STUBS + seed004.port(seed004.DEFINE) + PLACE + seed004.port(sample)


def printed_losses(out: str) -> list:
    return [float(ln.split("loss is: [")[1].split("]")[0]) for ln in out.splitlines() if ln.startswith("epoch: ")]


def test_l2decay_adam_sample_adds_the_decay_to_the_gradient(tmp_path):
    seed004._write_data(tmp_path)
    seed004.run_script(script(REGULARIZER), tmp_path)
    r = np.load(tmp_path / "RESULT.npz")
    w0, g = r["w0"].astype("float64"), r["g"].astype("float64")

    def adam_step(grad):  # Adam's first step (beta1 0.9, beta2 0.999, eps 1e-8)
        m, v = 0.1 * grad, 0.001 * grad ** 2
        lr_t = 0.01 * np.sqrt(1 - 0.999) / (1 - 0.9)
        return w0 - lr_t * m / (np.sqrt(v) + 1e-8)

    with_decay, without = adam_step(g + 0.1 * w0), adam_step(g)
    assert np.abs(with_decay - without).max() > 1e-3  # the check can tell the two apart
    np.testing.assert_allclose(r["w1"], with_decay, atol=1e-5)


@pytest.mark.slow
def test_matplotlib_sample_trains_and_saves(tmp_path):
    seed004._write_data(tmp_path)
    out = seed004.run_script(script(MATPLOTLIB), tmp_path)
    losses = printed_losses(out)
    assert len(losses) == 10  # one batch of 100 per epoch: batch 0 is printed every epoch
    tail = next(ln for ln in out.splitlines() if ln.startswith("ITERS"))
    assert json.loads(tail.split()[1]) == list(range(0, 1000, 100))
    assert losses[-1] < losses[0]
    assert os.path.exists(tmp_path / "mnist.pdparams")


@pytest.mark.slow
def test_visualdl_sample_logs_the_printed_values(tmp_path):
    seed004._write_data(tmp_path)
    out = seed004.run_script(script(VISUALDL), tmp_path)
    losses = printed_losses(out)
    assert len(losses) == 10 and losses[-1] < losses[0]
    assert os.path.exists(tmp_path / "mnist.pdparams")
    line = next((ln for ln in out.splitlines() if ln.startswith("RECORDS")), None)
    if line is None:
        pytest.skip("the real visualdl is installed; its log format is its own")
    records = json.loads(line.split(" ", 1)[1])
    assert [(t, s) for t, s, _ in records] == [(t, s) for s in range(0, 1000, 100) for t in ("acc", "loss")]
    np.testing.assert_allclose([v for t, _, v in records if t == "loss"], losses, rtol=1e-5)
    assert all(0.0 <= v <= 1.0 for t, _, v in records if t == "acc")

"""Seed 004, 模型加载及恢复训练 (dygraph): the samples run on oar with only the import lines changed.

Sample text is kept verbatim below; ``port`` swaps the import lines and each
script runs in a fresh interpreter, in a temporary directory holding a small
``./work/mnist.json.gz`` in the seed's layout (learnable synthetic digits, so
no download). A harness preamble, not part of the samples, fixes the data
order (``random.shuffle`` becomes a no-op, as the resume check needs: "with
the data order fixed") and stands in an empty ``PIL`` module, which the
sample imports but never uses. The check is the seed's own: the resumed
run's printed losses equal the uninterrupted run's, epoch by epoch.
"""

# the seed's code is kept as the seed writes it
# ruff: noqa: W291, W293

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("oar_io")

DEFINE = '''
import os
import random
import paddle
import paddle.fluid as fluid
from paddle.fluid.dygraph.nn import Conv2D, Pool2D, Linear
import numpy as np
from PIL import Image

import gzip
import json

# 定义数据集读取器
def load_data(mode='train'):

    # 数据文件
    datafile = './work/mnist.json.gz'
    print('loading mnist dataset from {} ......'.format(datafile))
    data = json.load(gzip.open(datafile))
    train_set, val_set, eval_set = data

    # 数据集相关参数，图片高度IMG_ROWS, 图片宽度IMG_COLS
    IMG_ROWS = 28
    IMG_COLS = 28

    if mode == 'train':
        imgs = train_set[0]
        labels = train_set[1]
    elif mode == 'valid':
        imgs = val_set[0]
        labels = val_set[1]
    elif mode == 'eval':
        imgs = eval_set[0]
        labels = eval_set[1]

    imgs_length = len(imgs)

    assert len(imgs) == len(labels), \\
          "length of train_imgs({}) should be the same as train_labels({})".format(
                  len(imgs), len(labels))
                  
    index_list = list(range(imgs_length))

    # 读入数据时用到的batchsize
    BATCHSIZE = 100

    # 定义数据生成器
    def data_generator():
        if mode == 'train':
            random.shuffle(index_list)
        imgs_list = []
        labels_list = []
        for i in index_list:
            img = np.reshape(imgs[i], [1, IMG_ROWS, IMG_COLS]).astype('float32')
            label = np.reshape(labels[i], [1]).astype('int64')
            imgs_list.append(img) 
            labels_list.append(label)
            if len(imgs_list) == BATCHSIZE:
                yield np.array(imgs_list), np.array(labels_list)
                imgs_list = []
                labels_list = []

        # 如果剩余数据的数目小于BATCHSIZE，
        # 则剩余数据一起构成一个大小为len(imgs_list)的mini-batch
        if len(imgs_list) > 0:
            yield np.array(imgs_list), np.array(labels_list)

    return data_generator

#调用加载数据的函数
train_loader = load_data('train')

# 定义模型结构
class MNIST(fluid.dygraph.Layer):
     def __init__(self):
         super(MNIST, self).__init__()
         # 定义一个卷积层，使用relu激活函数
         self.conv1 = Conv2D(num_channels=1, num_filters=20, filter_size=5, stride=1, padding=2, act='relu')
         # 定义一个池化层，池化核为2，步长为2，使用最大池化方式
         self.pool1 = Pool2D(pool_size=2, pool_stride=2, pool_type='max')
         # 定义一个卷积层，使用relu激活函数
         self.conv2 = Conv2D(num_channels=20, num_filters=20, filter_size=5, stride=1, padding=2, act='relu')
         # 定义一个池化层，池化核为2，步长为2，使用最大池化方式
         self.pool2 = Pool2D(pool_size=2, pool_stride=2, pool_type='max')
         # 定义一个全连接层，输出节点数为10 
         self.fc = Linear(input_dim=980, output_dim=10, act='softmax')
    # 定义网络的前向计算过程
     def forward(self, inputs, label):
         x = self.conv1(inputs)
         x = self.pool1(x)
         x = self.conv2(x)
         x = self.pool2(x)
         x = fluid.layers.reshape(x, [x.shape[0], 980])
         x = self.fc(x)
         if label is not None:
             acc = fluid.layers.accuracy(input=x, label=label)
             return x, acc
         else:
             return x
'''

TRAIN = '''
#在使用GPU机器时，可以将use_gpu变量设置成True
use_gpu = False
place = fluid.CUDAPlace(0) if use_gpu else fluid.CPUPlace()

with fluid.dygraph.guard(place):
    model = MNIST()
    model.train() 
    
    EPOCH_NUM = 5
    BATCH_SIZE = 100
    # 定义学习率，并加载优化器参数到模型中
    total_steps = (int(60000//BATCH_SIZE) + 1) * EPOCH_NUM
    lr = fluid.dygraph.PolynomialDecay(0.01, total_steps, 0.001)
    
    # 使用Adam优化器
    optimizer = fluid.optimizer.AdamOptimizer(learning_rate=lr, parameter_list=model.parameters())
    
    for epoch_id in range(EPOCH_NUM):
        for batch_id, data in enumerate(train_loader()):
            #准备数据，变得更加简洁
            image_data, label_data = data
            image = fluid.dygraph.to_variable(image_data)
            label = fluid.dygraph.to_variable(label_data)
            
            #前向计算的过程，同时拿到模型输出值和分类准确率
            predict, acc = model(image, label)
            avg_acc = fluid.layers.mean(acc)
            
            #计算损失，取一个批次样本损失的平均值
            loss = fluid.layers.cross_entropy(predict, label)
            avg_loss = fluid.layers.mean(loss)
            
            #每训练了200批次的数据，打印下当前Loss的情况
            if batch_id % 200 == 0:
                print("epoch: {}, batch: {}, loss is: {}, acc is {}".format(epoch_id, batch_id, avg_loss.numpy(),avg_acc.numpy()))
            
            #后向传播，更新参数的过程
            avg_loss.backward()
            optimizer.minimize(avg_loss)
            model.clear_gradients()
            
        # 保存模型参数和优化器的参数
        fluid.save_dygraph(model.state_dict(), './checkpoint/mnist_epoch{}'.format(epoch_id))
        fluid.save_dygraph(optimizer.state_dict(), './checkpoint/mnist_epoch{}'.format(epoch_id))
'''

RESUME = '''
params_path = "./checkpoint/mnist_epoch0"        
#在使用GPU机器时，可以将use_gpu变量设置成True
use_gpu = False
place = fluid.CUDAPlace(0) if use_gpu else fluid.CPUPlace()

with fluid.dygraph.guard(place):
    # 加载模型参数到模型中
    params_dict, opt_dict = fluid.load_dygraph(params_path)
    model = MNIST()
    model.load_dict(params_dict)
    
    EPOCH_NUM = 5
    BATCH_SIZE = 100
    # 定义学习率，并加载优化器参数到模型中
    total_steps = (int(60000//BATCH_SIZE) + 1) * EPOCH_NUM
    lr = fluid.dygraph.PolynomialDecay(0.01, total_steps, 0.001)
    
    # 使用Adam优化器
    optimizer = fluid.optimizer.AdamOptimizer(learning_rate=lr, parameter_list=model.parameters())
    optimizer.set_dict(opt_dict)

    for epoch_id in range(1, EPOCH_NUM):
        for batch_id, data in enumerate(train_loader()):
            #准备数据，变得更加简洁
            image_data, label_data = data
            image = fluid.dygraph.to_variable(image_data)
            label = fluid.dygraph.to_variable(label_data)
            
            #前向计算的过程，同时拿到模型输出值和分类准确率
            predict, acc = model(image, label)
            avg_acc = fluid.layers.mean(acc)
            
            #计算损失，取一个批次样本损失的平均值
            loss = fluid.layers.cross_entropy(predict, label)
            avg_loss = fluid.layers.mean(loss)
            
            #每训练了200批次的数据，打印下当前Loss的情况
            if batch_id % 200 == 0:
                print("epoch: {}, batch: {}, loss is: {}, acc is {}".format(epoch_id, batch_id, avg_loss.numpy(),avg_acc.numpy()))
            
            #后向传播，更新参数的过程
            avg_loss.backward()
            optimizer.minimize(avg_loss)
            model.clear_gradients()
'''

HARNESS = """
import importlib.util, random, sys, types
random.shuffle = lambda x, random=None: None  # harness: fixed data order
if importlib.util.find_spec("PIL") is None:  # harness: imported, unused (a real Pillow is left alone: matplotlib needs it)
    sys.modules["PIL"] = types.ModuleType("PIL"); sys.modules["PIL"].Image = None  # harness
"""


def port(src: str) -> str:
    """The only change a user makes: the import lines."""
    return (src.replace("import paddle.fluid as fluid", "from oar import fluid")
            .replace("from paddle.fluid.dygraph.nn import", "from oar.fluid.dygraph.nn import")
            .replace("import paddle\n", "import oar as paddle\n"))


def _write_data(d, n_train=100):
    rng = np.random.default_rng(0)

    def part(n):
        labels = rng.integers(0, 10, n)
        imgs = rng.normal(0, 0.3, (n, 28, 28))
        for i, c in enumerate(labels):
            r, col = divmod(int(c), 4)
            imgs[i, r * 7 + 2:r * 7 + 9, col * 7:col * 7 + 7] += 1.0
        return [np.round(imgs.reshape(n, 784), 4).tolist(), labels.tolist()]

    os.makedirs(d / "work")
    with gzip.open(d / "work" / "mnist.json.gz", "wt") as f:
        json.dump([part(n_train), part(20), part(20)], f)


def run_script(src: str, cwd) -> str:
    env = dict(os.environ, OAR_FALLBACK_DEVICE="cpu")
    r = subprocess.run([sys.executable, "-W", "ignore::DeprecationWarning", "-c", HARNESS + src], capture_output=True,
                       text=True, timeout=300, env=env, cwd=cwd)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout


@pytest.mark.slow
def test_seed_004_train_checkpoint_and_resume(tmp_path):
    _write_data(tmp_path)
    full = run_script(port(DEFINE) + port(TRAIN), tmp_path)
    assert sorted(os.listdir(tmp_path / "checkpoint"))[:2] == ["mnist_epoch0.pdopt", "mnist_epoch0.pdparams"]
    resumed = run_script(port(DEFINE) + port(RESUME), tmp_path)
    full_lines = [ln for ln in full.splitlines() if ln.startswith("epoch: ")]
    resumed_lines = [ln for ln in resumed.splitlines() if ln.startswith("epoch: ")]
    assert len(full_lines) == 5 and len(resumed_lines) == 4
    assert resumed_lines == full_lines[1:]  # the seed's check: the same losses as without the interruption
    first = float(full_lines[0].split("loss is: [")[1].split("]")[0])
    last = float(full_lines[-1].split("loss is: [")[1].split("]")[0])
    assert last < first

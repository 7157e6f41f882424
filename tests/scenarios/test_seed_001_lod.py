"""Seed 001 (LoD-Tensor): creating a LoDTensor, LoDTensor -> Tensor and Tensor -> LoDTensor.

The three samples run verbatim with only the import line changed, each in a
fresh interpreter; the checks compare their printed output with what the
guide says (2 levels, 15 base elements, the offsets [0, 1, 4], the data).
"""

from __future__ import annotations

import subprocess
import sys

CREATE = """
#创建lod-tensor
import paddle.fluid as fluid
import numpy as np

a = fluid.create_lod_tensor(np.array([[1],[1],[1],
                                  [1],[1],
                                  [1],[1],[1],[1],
                                  [1],
                                  [1],[1],
                                  [1],[1],[1]]).astype('int64') ,
                          [[3,1,2] , [3,2,4,1,2,3]],
                          fluid.CPUPlace())

#查看lod-tensor嵌套层数
print (len(a.recursive_sequence_lengths()))
# output：2

#查看最基础元素个数
print (sum(a.recursive_sequence_lengths()[-1]))
# output:15 (3+2+4+1+2+3=15)
"""

TO_TENSOR = """
import paddle.fluid as fluid
import numpy as np

# 创建一个 LoD-Tensor
a = fluid.create_lod_tensor(np.array([[1.1], [2.2],[3.3],[4.4]]).astype('float32'), 
					[[1,3]], fluid.CPUPlace())

def LodTensor_to_Tensor(lod_tensor):
  # 获取 LoD-Tensor 的 lod 信息
  lod = lod_tensor.lod()
  # 转换成 array
  array = np.array(lod_tensor)
  new_array = []
  # 依照原LoD-Tensor的层级信息，转换成Tensor
  for i in range(len(lod[0]) - 1):
      new_array.append(array[lod[0][i]:lod[0][i + 1]])
  return new_array

new_array = LodTensor_to_Tensor(a)

# 输出结果
print(new_array)
"""  # noqa: W291 (the seed's trailing space)

TO_LOD = """
import paddle.fluid as fluid
import numpy as np

def to_lodtensor(data, place):
  # 存储Tensor的长度作为LoD信息
  seq_lens = [len(seq) for seq in data]
  cur_len = 0
  lod = [cur_len]
  for l in seq_lens:
      cur_len += l
      lod.append(cur_len)
  # 对待转换的 Tensor 降维
  flattened_data = np.concatenate(data, axis=0).astype("int64")
  flattened_data = flattened_data.reshape([len(flattened_data), 1])
  # 为 Tensor 数据添加lod信息
  res = fluid.LoDTensor()
  res.set(flattened_data, place)
  res.set_lod([lod])
  return res

# new_array 为上段代码中转换的Tensor
lod_tensor = to_lodtensor(new_array,fluid.CPUPlace())

# 输出 LoD 信息
print("The LoD of the result: {}.".format(lod_tensor.lod()))

# 检验与原Tensor数据是否一致
print("The array : {}.".format(np.array(lod_tensor)))
"""


def port(src: str) -> str:
    return src.replace("import paddle.fluid as fluid", "from oar import fluid")


def run(src: str) -> str:
    r = subprocess.run([sys.executable, "-c", src], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_create_lod_tensor_prints_levels_and_base_count():
    assert run(port(CREATE)).split() == ["2", "15"]


def test_lod_tensor_to_tensor_splits_by_offsets():
    out = run(port(TO_TENSOR))
    assert "array([[1.1]], dtype=float32)" in out
    assert "array([[2.2],\n       [3.3],\n       [4.4]], dtype=float32)" in out


def test_tensor_to_lod_tensor_round_trip():
    # the third sample continues the second one (it uses its `new_array`)
    out = run(port(TO_TENSOR) + port(TO_LOD))
    assert "The LoD of the result: [[0, 1, 4]]." in out
    assert "The array : [[1]\n [2]\n [3]\n [4]]." in out

"""Train a small CNN in the real Fluid 1.8.5 for three steps and save it as an inference model.

Covers conv2d, batch_norm, pool2d, dropout, img_conv_group, resize_bilinear,
lrn, adaptive_pool2d, conv2d_transpose, layer_norm and fc. Regenerate with the
oracle: ``$FLUID18_PYTHON tests/scenarios/data/make_fluid18_cnn_model.py``.
"""

import os

import numpy as np
import paddle.fluid as fluid

HERE = os.path.dirname(os.path.abspath(__file__))
main, st = fluid.Program(), fluid.Program()
main.random_seed = st.random_seed = 5
with fluid.program_guard(main, st):
    img = fluid.data("img", [None, 3, 16, 16])
    c = fluid.layers.conv2d(img, 8, 3, padding=1, act=None)
    b = fluid.layers.batch_norm(c, act="relu")
    p = fluid.layers.pool2d(b, 2, "max", 2)
    d = fluid.layers.dropout(p, 0.3)
    g = fluid.nets.img_conv_group(d, [6, 6], 2, conv_act="relu", conv_with_batchnorm=True, pool_stride=2, pool_type="avg")
    r = fluid.layers.resize_bilinear(g, out_shape=[5, 5])
    lr = fluid.layers.lrn(r, n=3)
    a = fluid.layers.adaptive_pool2d(lr, 2, "avg")
    t = fluid.layers.conv2d_transpose(a, 4, filter_size=3, stride=2)
    ln = fluid.layers.layer_norm(t)
    out = fluid.layers.fc(ln, 10, act="softmax")
exe = fluid.Executor(fluid.CPUPlace())
x = np.random.RandomState(1).rand(2, 3, 16, 16).astype("float32")
# a few training steps so BN moving stats are non-trivial
with fluid.program_guard(main, st):
    loss = fluid.layers.mean(out)
    test = main.clone(for_test=True)
    fluid.optimizer.SGD(0.01).minimize(loss)
exe.run(st)
for _ in range(3):
    exe.run(main, feed={"img": x})
fluid.io.save_inference_model(os.path.join(HERE, "fluid18_cnn_model"), ["img"], [test.global_block().var(out.name)], exe, main_program=test, params_filename="params")
res = exe.run(test, feed={"img": x}, fetch_list=[out.name])[0]
np.savez(os.path.join(HERE, "fluid18_cnn_io.npz"), x=x, out=res)


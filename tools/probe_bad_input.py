"""Probe every public layer with plausible-but-wrong inputs; report how each fails.

Run: .venv/bin/python tools/probe_bad_input.py [-v] [--dygraph]
Per case: raised at build time? exception type; does the message name the
layer/op, the argument, expected & given values, and this file's line?
If the build passes and a feed is given, the program is run and run-time errors
are classified the same way.
"""

from __future__ import annotations

import sys
import traceback

import numpy as np
from oar import fluid

L = fluid.layers
F32 = "float32"


def d(name, shape, dtype=F32, lod_level=0):
    return fluid.data(name, shape, dtype=dtype, lod_level=lod_level)


CASES = []  # (id, layer, arg-keyword, build fn, feed or None)


def case(cid, layer, arg, feed=None):
    def deco(fn):
        CASES.append((cid, layer, arg, fn, feed))
        return fn

    return deco


def x(shape=(2, 3), dtype=F32, name="x"):
    return d(name, list(shape), dtype)


A = np.ones((2, 3), "float32")
# ---- activation
for act in [
    "relu",
    "sigmoid",
    "tanh",
    "exp",
    "sqrt",
    "log",
    "softmax",
    "softsign",
    "gelu",
    "floor",
]:
    case(f"{act}-numpy", act, "x")(lambda act=act: getattr(L, act)(A))
    case(f"{act}-int", act, "x")(lambda act=act: getattr(L, act)(x(dtype="int64")))
case("softmax-axis", "softmax", "axis")(lambda: L.softmax(x(), axis=5))
case("leaky_relu-numpy", "leaky_relu", "x")(lambda: L.leaky_relu(A))
case("pow-factor-str", "pow", "factor")(lambda: L.pow(x(), factor="a"))
case("log_softmax-axis", "log_softmax", "axis")(lambda: L.log_softmax(x(), axis=3))
case("prelu-mode", "prelu", "mode")(lambda: L.prelu(x((2, 3, 4, 4)), mode="pixel"))
case("prelu-channel-rank1", "prelu", "x")(lambda: L.prelu(x((3,)), mode="channel"))
case("maxout-groups", "maxout", "groups")(lambda: L.maxout(x((2, 6, 4, 4)), groups=4))
case("maxout-rank", "maxout", "x")(lambda: L.maxout(x((2, 6)), groups=2))
case("maxout-axis", "maxout", "axis")(lambda: L.maxout(x((2, 6, 4, 4)), groups=2, axis=2))
# ---- clip
case("clip-min>max", "clip", "min")(lambda: L.clip(x(), min=2.0, max=1.0))
case("clip-int", "clip", "x")(lambda: L.clip(x(dtype="int64"), 0.0, 1.0))
case("clip_by_norm-neg", "clip_by_norm", "max_norm")(lambda: L.clip_by_norm(x(), max_norm=-1.0))
case("l2_normalize-axis", "l2_normalize", "axis")(lambda: L.l2_normalize(x(), axis=4))
case("clip-numpy", "clip", "x")(lambda: L.clip(A, 0.0, 1.0))
# ---- compare
case("less_than-shape", "less_than", "y")(lambda: L.less_than(x(), x((4, 5), name="y")))
case("less_than-dtype", "less_than", "y")(lambda: L.less_than(x(), x(dtype="int64", name="y")))
case("less_than-numpy", "less_than", "x")(lambda: L.less_than(A, x()))
case("logical_and-float", "logical_and", "x")(lambda: L.logical_and(x(), x(name="y")))
case("logical_not-float", "logical_not", "x")(lambda: L.logical_not(x()))
case("equal-shape", "equal", "y")(lambda: L.equal(x(), x((3, 2), name="y")))
# ---- conv
case("conv2d-rank3", "conv2d", "input")(lambda: L.conv2d(x((2, 3, 8)), 4, 3))
case("conv2d-neg-filters", "conv2d", "num_filters")(lambda: L.conv2d(x((2, 3, 8, 8)), -4, 3))
case("conv2d-big-filter", "conv2d", "filter_size")(lambda: L.conv2d(x((2, 3, 8, 8)), 4, 11))
case("conv2d-groups", "conv2d", "groups")(lambda: L.conv2d(x((2, 3, 8, 8)), 4, 3, groups=2))
case("conv2d-layout", "conv2d", "data_format")(
    lambda: L.conv2d(x((2, 3, 8, 8)), 4, 3, data_format="NWHC")
)
case("conv2d-int", "conv2d", "input")(lambda: L.conv2d(x((2, 3, 8, 8), dtype="int64"), 4, 3))
case("conv2d-numpy", "conv2d", "input")(lambda: L.conv2d(np.ones((2, 3, 8, 8), "float32"), 4, 3))
case("conv2d-stride0", "conv2d", "stride")(lambda: L.conv2d(x((2, 3, 8, 8)), 4, 3, stride=0))
case("conv2d-padstr", "conv2d", "padding")(lambda: L.conv2d(x((2, 3, 8, 8)), 4, 3, padding="FULL"))
case("conv2d-act", "conv2d", "act")(lambda: L.conv2d(x((2, 3, 8, 8)), 4, 3, act="relu7"))
case("conv2d_t-rank", "conv2d_transpose", "input")(
    lambda: L.conv2d_transpose(x((2, 3, 8)), 4, filter_size=3)
)
case("conv2d_t-nosize", "conv2d_transpose", "filter_size")(
    lambda: L.conv2d_transpose(x((2, 3, 8, 8)), 4)
)
case("conv2d_t-outsize", "conv2d_transpose", "output_size")(
    lambda: L.conv2d_transpose(x((2, 3, 8, 8)), 4, output_size=[40, 40], filter_size=3)
)
case("conv2d_t-groups", "conv2d_transpose", "groups")(
    lambda: L.conv2d_transpose(x((2, 3, 8, 8)), 4, filter_size=3, groups=2)
)
# ---- dropout
case("dropout-prob", "dropout", "dropout_prob")(lambda: L.dropout(x(), 1.5))
case("dropout-impl", "dropout", "dropout_implementation")(
    lambda: L.dropout(x(), 0.5, dropout_implementation="up")
)
case("dropout-numpy", "dropout", "x")(lambda: L.dropout(A, 0.5))
# ---- embedding
case("embedding-float-ids", "embedding", "input")(lambda: L.embedding(x((4, 1)), size=[10, 3]))
case("embedding-size1", "embedding", "size")(lambda: L.embedding(x((4, 1), "int64"), size=10))
case("embedding-neg", "embedding", "size")(lambda: L.embedding(x((4, 1), "int64"), size=[-10, 3]))
case("embedding-pad", "embedding", "padding_idx")(
    lambda: L.embedding(x((4, 1), "int64"), size=[10, 3], padding_idx=20)
)
case("embedding-oob-run", "embedding", "input", {"x": np.array([[1], [12]], "int64")})(
    lambda: L.embedding(x((2, 1), "int64"), size=[10, 3])
)
case("one_hot-float", "one_hot", "input")(lambda: L.one_hot(x((4, 1)), 5))
case("one_hot-depth", "one_hot", "depth")(lambda: L.one_hot(x((4, 1), "int64"), -5))
case("one_hot-oob-run", "one_hot", "input", {"x": np.array([[1], [7]], "int64")})(
    lambda: L.one_hot(x((2, 1), "int64"), 5)
)
# ---- fc
case("fc-size0", "fc", "size")(lambda: L.fc(x(), 0))
case("fc-nfd", "fc", "num_flatten_dims")(lambda: L.fc(x(), 4, num_flatten_dims=2))
case("fc-int", "fc", "input")(lambda: L.fc(x(dtype="int64"), 4))
case("fc-numpy", "fc", "input")(lambda: L.fc(A, 4))
case("fc-act", "fc", "act")(lambda: L.fc(x(), 4, act="relux"))
# ---- indexing
case("slice-axes-starts", "slice", "starts")(
    lambda: L.slice(x(), axes=[0, 1], starts=[0], ends=[1, 2])
)
case("slice-axis-oob", "slice", "axes")(lambda: L.slice(x(), axes=[3], starts=[0], ends=[1]))
case("strided_slice-stride0", "strided_slice", "strides")(
    lambda: L.strided_slice(x(), axes=[0], starts=[0], ends=[1], strides=[0])
)
case("gather-float-idx", "gather", "index")(lambda: L.gather(x(), x((2,), name="i")))
case("gather-idx-rank", "gather", "index")(lambda: L.gather(x(), x((2, 2), "int64", name="i")))
case("gather-oob-run", "gather", "index", {"x": A, "i": np.array([0, 5], "int64")})(
    lambda: L.gather(x(), x((2,), "int64", name="i"))
)
case("gather_nd-float", "gather_nd", "index")(lambda: L.gather_nd(x(), x((2, 1), name="i")))
case("gather_nd-deep", "gather_nd", "index")(lambda: L.gather_nd(x(), x((2, 3), "int64", name="i")))
case("scatter-shape", "scatter", "updates")(
    lambda: L.scatter(x(), x((2,), "int64", name="i"), x((2, 5), name="u"))
)
case("scatter-float-idx", "scatter", "index")(
    lambda: L.scatter(x(), x((2,), name="i"), x((2, 3), name="u"))
)
case("pad-len", "pad", "paddings")(lambda: L.pad(x(), paddings=[1, 1]))
case("pad-neg", "pad", "paddings")(lambda: L.pad(x(), paddings=[-1, 1, 0, 0]))
case("pad2d-rank", "pad2d", "input")(lambda: L.pad2d(x(), paddings=[1, 1, 1, 1]))
case("pad2d-mode", "pad2d", "mode")(
    lambda: L.pad2d(x((1, 1, 3, 3)), paddings=[1, 1, 1, 1], mode="wrap")
)
case("pad2d-len", "pad2d", "paddings")(lambda: L.pad2d(x((1, 1, 3, 3)), paddings=[1, 1]))
case("pad2d-layout", "pad2d", "data_format")(
    lambda: L.pad2d(x((1, 1, 3, 3)), paddings=[1, 1, 1, 1], data_format="NWC")
)
# ---- loss
case("cross_entropy-label-float", "cross_entropy", "label")(
    lambda: L.cross_entropy(x((4, 5)), x((4, 1), name="l"))
)
case("cross_entropy-label-rows", "cross_entropy", "label")(
    lambda: L.cross_entropy(x((4, 5)), x((3, 1), "int64", name="l"))
)
case("cross_entropy-soft-shape", "cross_entropy", "label")(
    lambda: L.cross_entropy(x((4, 5)), x((4, 4), name="l"), soft_label=True)
)
case(
    "cross_entropy-oob-run",
    "cross_entropy",
    "label",
    {"x": np.full((2, 5), 0.2, "float32"), "l": np.array([[1], [9]], "int64")},
)(lambda: L.cross_entropy(x((2, 5)), x((2, 1), "int64", name="l")))
case("square_error_cost-shape", "square_error_cost", "label")(
    lambda: L.square_error_cost(x((4, 1)), x((4, 2), name="l"))
)
case("swce-label-float", "softmax_with_cross_entropy", "label")(
    lambda: L.softmax_with_cross_entropy(x((4, 5)), x((4, 1), name="l"))
)
case("swce-rows", "softmax_with_cross_entropy", "label")(
    lambda: L.softmax_with_cross_entropy(x((4, 5)), x((3, 1), "int64", name="l"))
)
case("swce-axis", "softmax_with_cross_entropy", "axis")(
    lambda: L.softmax_with_cross_entropy(x((4, 5)), x((4, 1), "int64", name="l"), axis=3)
)
case("sce-shape", "sigmoid_cross_entropy_with_logits", "label")(
    lambda: L.sigmoid_cross_entropy_with_logits(x((4, 5)), x((4, 4), name="l"))
)
case("log_loss-shape", "log_loss", "label")(lambda: L.log_loss(x((4, 1)), x((4, 2), name="l")))
case("huber-shape", "huber_loss", "label")(
    lambda: L.huber_loss(x((4, 1)), x((4, 2), name="l"), 1.0)
)
case("smooth_l1-shape", "smooth_l1", "y")(lambda: L.smooth_l1(x((4, 3)), x((4, 2), name="l")))
case("bpr-label-float", "bpr_loss", "label")(lambda: L.bpr_loss(x((4, 5)), x((4, 1), name="l")))
case("mse-shape", "mse_loss", "label")(lambda: L.mse_loss(x((4, 3)), x((4, 2), name="l")))
case("kldiv-reduction", "kldiv_loss", "reduction")(
    lambda: L.kldiv_loss(x((4, 3)), x((4, 3), name="l"), reduction="avg")
)
case("kldiv-shape", "kldiv_loss", "target")(lambda: L.kldiv_loss(x((4, 3)), x((4, 2), name="l")))
case("margin_rank-shape", "margin_rank_loss", "left")(
    lambda: L.margin_rank_loss(x((4, 1), name="l"), x((4, 2), name="a"), x((4, 1), name="b"))
)
case("rank_loss-shape", "rank_loss", "left")(
    lambda: L.rank_loss(x((4, 1), name="l"), x((4, 2), name="a"), x((4, 1), name="b"))
)
case("dice-rank", "dice_loss", "label")(
    lambda: L.dice_loss(x((4, 3)), x((4, 2), "int64", name="l"))
)
case("npair-shape", "npair_loss", "positive")(
    lambda: L.npair_loss(x((4, 3), name="a"), x((4, 5), name="p"), x((4,), name="l"))
)
case("focal-label-float", "sigmoid_focal_loss", "label")(
    lambda: L.sigmoid_focal_loss(x((4, 3)), x((4, 1), name="l"), x((1,), "int32", name="f"))
)
case("tssl-shape", "teacher_student_sigmoid_loss", "label")(
    lambda: L.teacher_student_sigmoid_loss(x((4, 1)), x((4, 2), name="l"))
)
# ---- manip
case("concat-dims", "concat", "input")(lambda: L.concat([x((2, 3)), x((4, 5), name="y")], axis=0))
case("concat-rank", "concat", "input")(
    lambda: L.concat([x((2, 3)), x((2, 3, 1), name="y")], axis=0)
)
case("concat-dtype", "concat", "input")(
    lambda: L.concat([x((2, 3)), x((2, 3), "int64", name="y")], axis=0)
)
case("concat-axis", "concat", "axis")(lambda: L.concat([x((2, 3)), x((2, 3), name="y")], axis=5))
case("concat-numpy", "concat", "input")(lambda: L.concat([A, x((2, 3))], axis=0))
case("split-sections-sum", "split", "num_or_sections")(lambda: L.split(x((4, 6)), [2, 3], dim=1))
case("split-dim", "split", "dim")(lambda: L.split(x((4, 6)), 2, dim=3))
case("stack-shapes", "stack", "x")(lambda: L.stack([x((2, 3)), x((3, 2), name="y")]))
case("stack-axis", "stack", "axis")(lambda: L.stack([x((2, 3)), x((2, 3), name="y")], axis=4))
case("unstack-axis", "unstack", "axis")(lambda: L.unstack(x(), axis=3))
case("transpose-perm-dup", "transpose", "perm")(lambda: L.transpose(x(), perm=[0, 0]))
case("transpose-perm-len", "transpose", "perm")(lambda: L.transpose(x(), perm=[1, 0, 2]))
case("transpose-perm-oob", "transpose", "perm")(lambda: L.transpose(x(), perm=[0, 2]))
case("squeeze-non1", "squeeze", "axes")(lambda: L.squeeze(x(), axes=[1]))
case("squeeze-oob", "squeeze", "axes")(lambda: L.squeeze(x(), axes=[5]))
case("unsqueeze-oob", "unsqueeze", "axes")(lambda: L.unsqueeze(x(), axes=[7]))
case("flatten-axis", "flatten", "axis")(lambda: L.flatten(x(), axis=5))
case("expand-len", "expand", "expand_times")(lambda: L.expand(x(), [2]))
case("expand-neg", "expand", "expand_times")(lambda: L.expand(x(), [2, -1]))
case("expand_as-rank", "expand_as", "target_tensor")(
    lambda: L.expand_as(x(), x((2, 3, 4), name="t"))
)
case("expand_as-nondiv", "expand_as", "target_tensor")(
    lambda: L.expand_as(x(), x((4, 4), name="t"))
)
# ---- math
for op in [
    "elementwise_add",
    "elementwise_sub",
    "elementwise_mul",
    "elementwise_div",
    "elementwise_max",
]:
    case(f"{op}-shape", op, "y")(lambda op=op: getattr(L, op)(x((2, 3)), x((4, 5), name="y")))
case("elementwise_add-axis", "elementwise_add", "axis")(
    lambda: L.elementwise_add(x((2, 3, 4)), x((3,), name="y"), axis=2)
)
case("elementwise_add-dtype", "elementwise_add", "y")(
    lambda: L.elementwise_add(x((2, 3)), x((2, 3), "int64", name="y"))
)
case("elementwise_add-numpy", "elementwise_add", "y")(lambda: L.elementwise_add(x((2, 3)), A))
case("elementwise_mod-float", "elementwise_mod", "x")(lambda: L.elementwise_mod(x(), x(name="y")))
case("mul-inner", "mul", "y")(lambda: L.mul(x((2, 3)), x((4, 5), name="y")))
case("mul-ncd", "mul", "x_num_col_dims")(
    lambda: L.mul(x((2, 3)), x((3, 5), name="y"), x_num_col_dims=3)
)
case("matmul-inner", "matmul", "y")(lambda: L.matmul(x((2, 3)), x((4, 5), name="y")))
case("matmul-batch", "matmul", "y")(lambda: L.matmul(x((2, 2, 3)), x((3, 3, 5), name="y")))
case("matmul-dtype", "matmul", "y")(lambda: L.matmul(x((2, 3)), x((3, 5), "float64", name="y")))
case("matmul-numpy", "matmul", "x")(lambda: L.matmul(A, x((3, 5), name="y")))
case("mean-int", "mean", "x")(lambda: L.mean(x(dtype="int64")))
case("mean-numpy", "mean", "x")(lambda: L.mean(A))
case("scale-str", "scale", "scale")(lambda: L.scale(x(), scale="2"))
case("scale-numpy", "scale", "x")(lambda: L.scale(A, 2.0))
# ---- metric
case("accuracy-label-float", "accuracy", "label")(
    lambda: L.accuracy(x((4, 5)), x((4, 1), name="l"))
)
case("accuracy-rows", "accuracy", "label")(
    lambda: L.accuracy(x((4, 5)), x((3, 1), "int64", name="l"))
)
case("accuracy-k", "accuracy", "k")(
    lambda: L.accuracy(x((4, 5)), x((4, 1), "int64", name="l"), k=9)
)
case("topk-k", "topk", "k")(lambda: L.topk(x((4, 5)), k=9))
case("topk-neg", "topk", "k")(lambda: L.topk(x((4, 5)), k=-1))
# ---- norm
case("batch_norm-layout", "batch_norm", "data_layout")(
    lambda: L.batch_norm(x((2, 3, 4, 4)), data_layout="NWHC")
)
case("batch_norm-rank1", "batch_norm", "input")(lambda: L.batch_norm(x((3,))))
case("batch_norm-int", "batch_norm", "input")(lambda: L.batch_norm(x((2, 3, 4, 4), "int64")))
case("batch_norm-act", "batch_norm", "act")(lambda: L.batch_norm(x((2, 3, 4, 4)), act="reluu"))
case("layer_norm-axis", "layer_norm", "begin_norm_axis")(
    lambda: L.layer_norm(x((2, 3)), begin_norm_axis=3)
)
case("layer_norm-int", "layer_norm", "input")(lambda: L.layer_norm(x((2, 3), "int64")))
case("lrn-rank", "lrn", "input")(lambda: L.lrn(x((2, 3))))
case("lrn-n", "lrn", "n")(lambda: L.lrn(x((2, 3, 4, 4)), n=-1))
case("lrn-layout", "lrn", "data_format")(lambda: L.lrn(x((2, 3, 4, 4)), data_format="NWC"))
# ---- pooling
case("pool2d-type", "pool2d", "pool_type")(lambda: L.pool2d(x((2, 3, 8, 8)), 2, pool_type="min"))
case("pool2d-rank", "pool2d", "input")(lambda: L.pool2d(x((2, 3, 8)), 2))
case("pool2d-size", "pool2d", "pool_size")(lambda: L.pool2d(x((2, 3, 8, 8)), -2))
case("pool2d-big", "pool2d", "pool_size")(lambda: L.pool2d(x((2, 3, 8, 8)), 11))
case("pool2d-stride0", "pool2d", "pool_stride")(lambda: L.pool2d(x((2, 3, 8, 8)), 2, pool_stride=0))
case("pool2d-layout", "pool2d", "data_format")(
    lambda: L.pool2d(x((2, 3, 8, 8)), 2, data_format="NWHC")
)
case("pool2d-int", "pool2d", "input")(lambda: L.pool2d(x((2, 3, 8, 8), "int64"), 2))
case("adaptive_pool2d-type", "adaptive_pool2d", "pool_type")(
    lambda: L.adaptive_pool2d(x((2, 3, 8, 8)), 2, pool_type="min")
)
case("adaptive_pool2d-rank", "adaptive_pool2d", "input")(lambda: L.adaptive_pool2d(x((2, 3)), 2))
case("adaptive_pool2d-size", "adaptive_pool2d", "pool_size")(
    lambda: L.adaptive_pool2d(x((2, 3, 8, 8)), -2)
)
# ---- ranges
case("range-step0", "range", "step")(lambda: L.range(0, 10, 0, "float32"))
case("linspace-num", "linspace", "num")(lambda: L.linspace(0, 1, -3, "float32"))
case("uniform-min>max", "uniform_random", "min")(
    lambda: L.uniform_random([2, 3], min=1.0, max=-1.0)
)
case("uniform-neg-shape", "uniform_random", "shape")(lambda: L.uniform_random([2, -3]))
case("gaussian-shape-str", "gaussian_random", "shape")(lambda: L.gaussian_random("23"))
case("increment-numpy", "increment", "x")(lambda: L.increment(A))
case("sampling_id-rank", "sampling_id", "x")(lambda: L.sampling_id(x((2, 3, 4))))
case("shape-numpy", "shape", "input")(lambda: L.shape(A))
case("ubsl-idx", "uniform_random_batch_size_like", "input_dim_idx")(
    lambda: L.uniform_random_batch_size_like(x(), [1, 3], input_dim_idx=4)
)
# ---- rearrange
case("pixel_shuffle-div", "pixel_shuffle", "upscale_factor")(
    lambda: L.pixel_shuffle(x((2, 3, 4, 4)), 2)
)
case("pixel_shuffle-rank", "pixel_shuffle", "x")(lambda: L.pixel_shuffle(x((2, 4)), 2))
case("shuffle_channel-div", "shuffle_channel", "group")(
    lambda: L.shuffle_channel(x((2, 3, 4, 4)), 2)
)
case("crop_tensor-big", "crop_tensor", "shape")(lambda: L.crop_tensor(x((2, 3)), shape=[4, 3]))
case("crop_tensor-rank", "crop_tensor", "shape")(lambda: L.crop_tensor(x((2, 3)), shape=[2]))
case("pad_constant_like-big", "pad_constant_like", "y")(
    lambda: L.pad_constant_like(x((2, 3)), x((4, 5), name="y"))
)
case("tril-rank", "tril", "x")(lambda: L.tril(x((3,))))
case("scatter_nd_add-shape", "scatter_nd_add", "updates")(
    lambda: L.scatter_nd_add(x((4, 3)), x((2, 1), "int64", name="i"), x((2, 5), name="u"))
)
case("scatter_nd-float-idx", "scatter_nd", "index")(
    lambda: L.scatter_nd(x((2, 1), name="i"), x((2, 3), name="u"), [4, 3])
)
case("randint-low>high", "randint", "low")(lambda: L.randint(5, 2, shape=[2]))
case("logsumexp-dim", "logsumexp", "dim")(lambda: L.logsumexp(x(), dim=[4]))
# ---- reduce
for op in ["reduce_sum", "reduce_mean", "reduce_max"]:
    case(f"{op}-dim", op, "dim")(lambda op=op: getattr(L, op)(x(), dim=3))
    case(f"{op}-numpy", op, "input")(lambda op=op: getattr(L, op)(A))
case("reduce_all-float", "reduce_all", "input")(lambda: L.reduce_all(x()))
# ---- resize
case("resize_bilinear-rank", "resize_bilinear", "input")(
    lambda: L.resize_bilinear(x((2, 3)), out_shape=[4, 4])
)
case("resize_bilinear-neg", "resize_bilinear", "out_shape")(
    lambda: L.resize_bilinear(x((1, 1, 3, 3)), out_shape=[-4, 4])
)
case("resize_bilinear-len", "resize_bilinear", "out_shape")(
    lambda: L.resize_bilinear(x((1, 1, 3, 3)), out_shape=[4])
)
case("image_resize-method", "image_resize", "resample")(
    lambda: L.image_resize(x((1, 1, 3, 3)), out_shape=[4, 4], resample="CUBIC")
)
case("resize_nearest-none", "resize_nearest", "out_shape")(
    lambda: L.resize_nearest(x((1, 1, 3, 3)))
)
case("resize_nearest-layout", "resize_nearest", "data_format")(
    lambda: L.resize_nearest(x((1, 1, 3, 3)), out_shape=[4, 4], data_format="NWHC")
)
# ---- search
case("argmax-axis", "argmax", "axis")(lambda: L.argmax(x(), axis=4))
case("argsort-axis", "argsort", "axis")(lambda: L.argsort(x(), axis=4))
case("where-float", "where", "condition")(lambda: L.where(x()))
case("cumsum-axis", "cumsum", "axis")(lambda: L.cumsum(x(), axis=4))
case("argmax-numpy", "argmax", "x")(lambda: L.argmax(A))
# ---- shape
case("reshape-numel", "reshape", "shape")(lambda: L.reshape(x((2, 3)), [4, 2]))
case("reshape-two-neg", "reshape", "shape")(lambda: L.reshape(x((2, 3)), [-1, -1]))
case("reshape-zero-oob", "reshape", "shape")(lambda: L.reshape(x((2, 3)), [1, 1, 0]))
case("reshape-numpy", "reshape", "x")(lambda: L.reshape(A, [3, 2]))
case("reshape-neg2", "reshape", "shape")(lambda: L.reshape(x((2, 3)), [-2, 3]))
# ---- tensor
case("fill_constant-dtype", "fill_constant", "dtype")(lambda: L.fill_constant([2], "floaty", 1.0))
case("fill_constant-neg", "fill_constant", "shape")(
    lambda: L.fill_constant([2, -2], "float32", 1.0)
)
case("fcbsl-idx", "fill_constant_batch_size_like", "input_dim_idx")(
    lambda: L.fill_constant_batch_size_like(x(), [1, 3], "float32", 0.0, input_dim_idx=5)
)
case("cast-dtype", "cast", "dtype")(lambda: L.cast(x(), "floaty"))
case("cast-numpy", "cast", "x")(lambda: L.cast(A, "int64"))
case("assign-list", "assign", "input")(lambda: L.assign([[1, 2], [3]]))
case("assign-shape", "assign", "output")(lambda: L.assign(x(), output=x((4, 5), name="o")))
case("sums-shape", "sums", "input")(lambda: L.sums([x((2, 3)), x((4, 5), name="y")]))
case("sums-dtype", "sums", "input")(lambda: L.sums([x((2, 3)), x((2, 3), "int64", name="y")]))
case("create_parameter-neg", "create_parameter", "shape")(
    lambda: L.create_parameter([2, -3], "float32")
)
case("create_global_var-dtype", "create_global_var", "dtype")(
    lambda: L.create_global_var([2], 1.0, "floaty")
)
case("zeros_like-numpy", "zeros_like", "x")(lambda: L.zeros_like(A))
case("ones-dtype", "ones", "dtype")(lambda: L.ones([2], "floaty"))
# ---- tensor_misc
case("cos_sim-shape", "cos_sim", "Y")(lambda: L.cos_sim(x((4, 3)), x((4, 5), name="y")))
case("label_smooth-eps", "label_smooth", "epsilon")(lambda: L.label_smooth(x((4, 3)), epsilon=2.0))
case("label_smooth-prior", "label_smooth", "prior_dist")(
    lambda: L.label_smooth(x((4, 3)), prior_dist=x((1, 5), name="p"))
)
case("reverse-axis", "reverse", "axis")(lambda: L.reverse(x(), axis=4))
case("roll-len", "roll", "shifts")(lambda: L.roll(x(), shifts=[1, 2], dims=[0]))
case("roll-dims", "roll", "dims")(lambda: L.roll(x(), shifts=1, dims=5))
case("multiplex-shape", "multiplex", "inputs")(
    lambda: L.multiplex([x((4, 3)), x((4, 5), name="y")], x((4, 1), "int32", name="i"))
)
case("multiplex-idx-float", "multiplex", "index")(
    lambda: L.multiplex([x((4, 3)), x((4, 3), name="y")], x((4, 1), name="i"))
)
case("eye-neg", "eye", "num_rows")(lambda: L.eye(-2))
case("diag-rank", "diag", "diagonal")(lambda: L.diag(x((2, 3))))
case("unique-rank", "unique", "x")(lambda: L.unique(x((2, 3))))
case("unique-dtype", "unique", "dtype")(lambda: L.unique(x((3,)), dtype="float32"))
case("sum-shape", "sum", "x")(lambda: L.sum([x((2, 3)), x((4, 5), name="y")]))
case("shard_index-float", "shard_index", "input")(lambda: L.shard_index(x((4, 1)), 20, 2, 0))
case("shard_index-id", "shard_index", "shard_id")(
    lambda: L.shard_index(x((4, 1), "int64"), 20, 2, 5)
)
# ---- nets
N = fluid.nets
case("simple_img_conv_pool-rank", "simple_img_conv_pool", "input")(
    lambda: N.simple_img_conv_pool(x((2, 3, 8)), 4, 3, 2, 2)
)
case("simple_img_conv_pool-pool_type", "simple_img_conv_pool", "pool_type")(
    lambda: N.simple_img_conv_pool(x((2, 3, 8, 8)), 4, 3, 2, 2, pool_type="min")
)
case("img_conv_group-len", "img_conv_group", "conv_num_filter")(
    lambda: N.img_conv_group(
        x((2, 3, 8, 8)), conv_num_filter=[4, 4], pool_size=2, conv_padding=[1, 1, 1]
    )
)
case("img_conv_group-pool_type", "img_conv_group", "pool_type")(
    lambda: N.img_conv_group(x((2, 3, 8, 8)), conv_num_filter=[4], pool_size=2, pool_type="min")
)
case("glu-odd", "glu", "input")(lambda: N.glu(x((2, 3)), dim=-1))
case("glu-dim", "glu", "dim")(lambda: N.glu(x((2, 4)), dim=4))
case("sdpa-shape", "scaled_dot_product_attention", "keys")(
    lambda: N.scaled_dot_product_attention(
        x((2, 3, 4), name="q"), x((2, 3, 5), name="k"), x((2, 3, 5), name="v")
    )
)
case("sdpa-heads", "scaled_dot_product_attention", "num_heads")(
    lambda: N.scaled_dot_product_attention(
        x((2, 3, 4), name="q"), x((2, 3, 4), name="k"), x((2, 3, 4), name="v"), num_heads=3
    )
)
case("sdpa-rank", "scaled_dot_product_attention", "queries")(
    lambda: N.scaled_dot_product_attention(
        x((2, 4), name="q"), x((2, 4), name="k"), x((2, 4), name="v")
    )
)


# ---- round 2: shapes only known at run time (-1 dims), argument types
def f(*s):
    return np.ones(s, "float32")


def i64(*s):
    return np.zeros(s, "int64")


# run-time mismatches behind -1 dims
case("rt-add", "elementwise_add", "y", {"x": f(4, 3), "y": f(2, 3)})(
    lambda: L.elementwise_add(x((-1, 3)), x((-1, 3), name="y"))
)
case("rt-add-silent", "elementwise_add", "y", {"x": f(4, 3), "y": f(1, 3)})(
    lambda: L.elementwise_add(x((-1, 3)), x((-1, 3), name="y"))
)
case("rt-matmul", "matmul", "y", {"x": f(2, 3), "y": f(4, 5)})(
    lambda: L.matmul(x((-1, -1)), x((-1, -1), name="y"))
)
case("rt-mul", "mul", "y", {"x": f(2, 3), "y": f(4, 5)})(
    lambda: L.mul(x((-1, 3)), x((-1, 5), name="y"))
)
case("rt-concat", "concat", "input", {"x": f(2, 3), "y": f(2, 4)})(
    lambda: L.concat([x((-1, -1)), x((-1, -1), name="y")], axis=0)
)
case("rt-ce", "cross_entropy", "label", {"x": f(4, 5), "l": i64(3, 1)})(
    lambda: L.cross_entropy(x((-1, 5)), x((-1, 1), "int64", name="l"))
)
case("rt-swce", "softmax_with_cross_entropy", "label", {"x": f(4, 5), "l": i64(3, 1)})(
    lambda: L.softmax_with_cross_entropy(x((-1, 5)), x((-1, 1), "int64", name="l"))
)
case("rt-acc", "accuracy", "label", {"x": f(4, 5), "l": i64(3, 1)})(
    lambda: L.accuracy(x((-1, 5)), x((-1, 1), "int64", name="l"))
)
case("rt-sec", "square_error_cost", "label", {"x": f(4, 1), "l": f(3, 1)})(
    lambda: L.square_error_cost(x((-1, 1)), x((-1, 1), name="l"))
)
case("rt-stack", "stack", "x", {"x": f(4, 3), "y": f(3, 3)})(
    lambda: L.stack([x((-1, 3)), x((-1, 3), name="y")])
)
case("rt-sums", "sums", "input", {"x": f(4, 3), "y": f(3, 3)})(
    lambda: L.sums([x((-1, 3)), x((-1, 3), name="y")])
)
case("rt-cos_sim", "cos_sim", "Y", {"x": f(4, 3), "y": f(3, 3)})(
    lambda: L.cos_sim(x((-1, 3)), x((-1, 3), name="y"))
)
case("rt-reshape", "reshape", "shape", {"x": f(5, 3)})(lambda: L.reshape(x((-1, 3)), [-1, 2]))
case("rt-scatter", "scatter", "updates", {"x": f(4, 3), "i": i64(2), "u": f(3, 3)})(
    lambda: L.scatter(x((-1, 3)), x((-1,), "int64", name="i"), x((-1, 3), name="u"))
)
case("rt-gather-oob-neg", "gather", "index", {"x": f(4, 3), "i": np.array([-7], "int64")})(
    lambda: L.gather(x((-1, 3)), x((-1,), "int64", name="i"))
)
case("rt-lookup-neg", "embedding", "input", {"x": np.array([[-3]], "int64")})(
    lambda: L.embedding(x((-1, 1), "int64"), size=[10, 3])
)
case("rt-split", "split", "num_or_sections", {"x": f(4, 5)})(lambda: L.split(x((-1, -1)), 2, dim=1))
case("rt-fc-feed", "fc", "input", {"x": f(4, 5)})(lambda: L.fc(x((-1, 3)), 2))
case("rt-conv-ch", "conv2d", "input", {"x": f(1, 2, 8, 8)})(
    lambda: (
        L.conv2d(x((-1, -1, 8, 8)), 4, 3, groups=1) if False else L.conv2d(x((-1, 3, -1, -1)), 4, 3)
    )
)
case("rt-conv-small", "conv2d", "input", {"x": f(1, 3, 2, 2)})(
    lambda: L.conv2d(x((-1, 3, -1, -1)), 4, 3)
)
case("rt-pool-small", "pool2d", "input", {"x": f(1, 3, 1, 1)})(
    lambda: L.pool2d(x((-1, 3, -1, -1)), 3)
)
case("rt-bn-ch", "batch_norm", "input", {"x": f(2, 3, 2, 2)})(
    lambda: L.batch_norm(x((-1, 3, -1, -1)))
)
case("rt-mean-fine", "mean", "x", {"x": f(2, 3)})(lambda: L.mean(x((-1, 3))))
case("rt-expand_as", "expand_as", "target_tensor", {"x": f(2, 3), "t": f(3, 3)})(
    lambda: L.expand_as(x((-1, 3)), x((-1, 3), name="t"))
)
case("rt-where-cond", "elementwise_mul", "y", {"x": f(2, 3), "y": f(2, 1, 3)})(
    lambda: L.elementwise_mul(x((-1, 3)), x((-1, -1, 3), name="y"))
)
case("rt-topk", "topk", "k", {"x": f(2, 3)})(lambda: L.topk(x((-1, -1)), k=5))
case("rt-one_hot", "one_hot", "input", {"x": np.array([[1], [2]], "int64")})(
    lambda: L.one_hot(x((-1, 1), "int64"), 2)
)
case("rt-label_smooth", "label_smooth", "prior_dist", {"x": f(2, 3), "p": f(1, 4)})(
    lambda: L.label_smooth(x((-1, 3)), prior_dist=x((1, -1), name="p"))
)
case(
    "rt-multiplex",
    "multiplex",
    "index",
    {"x": f(2, 3), "y": f(2, 3), "i": np.array([[0], [5]], "int32")},
)(lambda: L.multiplex([x((-1, 3)), x((-1, 3), name="y")], x((-1, 1), "int32", name="i")))
# build-time arg types
case("fc-size-float", "fc", "size")(lambda: L.fc(x(), 4.0))
case("conv2d-nf-float", "conv2d", "num_filters")(lambda: L.conv2d(x((2, 3, 8, 8)), 4.0, 3))
case("conv2d-fs-float", "conv2d", "filter_size")(lambda: L.conv2d(x((2, 3, 8, 8)), 4, 2.5))
case("reshape-float", "reshape", "shape")(lambda: L.reshape(x(), [3.0, 2]))
case("reshape-str", "reshape", "shape")(lambda: L.reshape(x(), "32"))
case("softmax-axis-str", "softmax", "axis")(lambda: L.softmax(x(), axis="1"))
case("reduce-dim-str", "reduce_sum", "dim")(lambda: L.reduce_sum(x(), dim="1"))
case("transpose-perm-int", "transpose", "perm")(lambda: L.transpose(x(), perm=1))
case("concat-none", "concat", "input")(lambda: L.concat([x(), None]))
case("elementwise_add-none", "elementwise_add", "y")(lambda: L.elementwise_add(x(), None))
case("fc-none", "fc", "input")(lambda: L.fc(None, 3))
case("data-shape-str", "data", "shape")(lambda: fluid.data("z", "23"))
case("data-dtype", "data", "dtype")(lambda: fluid.data("z", [2, 3], "floaty"))
case("data-neg", "data", "shape")(lambda: fluid.data("z", [2, -5]))
case("embedding-size-float", "embedding", "size")(
    lambda: L.embedding(x((4, 1), "int64"), size=[10.5, 3])
)
case("one_hot-depth-float", "one_hot", "depth")(lambda: L.one_hot(x((4, 1), "int64"), 2.5))
case("topk-k-float", "topk", "k")(lambda: L.topk(x(), 1.5))
case("dropout-prob-str", "dropout", "dropout_prob")(lambda: L.dropout(x(), "0.5"))
case("pool2d-size-list3", "pool2d", "pool_size")(lambda: L.pool2d(x((2, 3, 8, 8)), [2, 2, 2]))
case("conv2d-pad-list3", "conv2d", "padding")(
    lambda: L.conv2d(x((2, 3, 8, 8)), 4, 3, padding=[1, 1, 1])
)
case("conv2d-stride-neg", "conv2d", "stride")(lambda: L.conv2d(x((2, 3, 8, 8)), 4, 3, stride=-1))
case("pool2d-pad-neg", "pool2d", "pool_padding")(
    lambda: L.pool2d(x((2, 3, 8, 8)), 2, pool_padding=-1)
)
case("split-sections-neg", "split", "num_or_sections")(
    lambda: L.split(x((4, 6)), [-1, -1, 2], dim=1)
)
case("split-sections-zero", "split", "num_or_sections")(lambda: L.split(x((4, 6)), [0, 6], dim=1))
case("expand-zero", "expand", "expand_times")(lambda: L.expand(x(), [0, 1]))
case("slice-ends-len", "slice", "ends")(lambda: L.slice(x(), axes=[0], starts=[0], ends=[1, 2]))
case("unsqueeze-dup", "unsqueeze", "axes")(lambda: L.unsqueeze(x(), axes=[0, 0]))
case("squeeze-axes-str", "squeeze", "axes")(lambda: L.squeeze(x(), axes="0"))
case("flatten-neg", "flatten", "axis")(lambda: L.flatten(x(), axis=-1))
case("pad-value-str", "pad", "pad_value")(lambda: L.pad(x(), [1, 1, 1, 1], pad_value="a"))
case("clip-str", "clip", "min")(lambda: L.clip(x(), "a", 1.0))
case("leaky_relu-alpha-str", "leaky_relu", "alpha")(lambda: L.leaky_relu(x(), alpha="a"))
case("scale-bias-str", "scale", "bias")(lambda: L.scale(x(), bias="a"))
case("uniform-dtype", "uniform_random", "dtype")(lambda: L.uniform_random([2, 3], dtype="int64"))
case("gaussian-dtype", "gaussian_random", "dtype")(lambda: L.gaussian_random([2, 3], dtype="int64"))
case("range-dtype", "range", "dtype")(lambda: L.range(0, 10, 1, "floaty"))
case("linspace-dtype", "linspace", "dtype")(lambda: L.linspace(0, 1, 3, "int64"))
case("argsort-desc", "argsort", "descending")(lambda: L.argsort(x(), descending="yes"))
case("image_resize-scale-neg", "image_resize", "scale")(
    lambda: L.image_resize(x((1, 1, 3, 3)), scale=-2.0)
)
case("pixel_shuffle-zero", "pixel_shuffle", "upscale_factor")(
    lambda: L.pixel_shuffle(x((2, 4, 4, 4)), 0)
)
case("lrn-k-str", "lrn", "k")(lambda: L.lrn(x((2, 3, 4, 4)), k="a"))
case("layer_norm-neg-axis", "layer_norm", "begin_norm_axis")(
    lambda: L.layer_norm(x(), begin_norm_axis=-1)
)
case("batch_norm-momentum", "batch_norm", "momentum")(
    lambda: L.batch_norm(x((2, 3, 4, 4)), momentum="a")
)
case("cumsum-axis-str", "cumsum", "axis")(lambda: L.cumsum(x(), axis="0"))
case("diag-numpy-2d", "diag", "diagonal")(lambda: L.diag(np.ones((2, 2), "float32")))
case("eye-float", "eye", "num_rows")(lambda: L.eye(2.5))
case("roll-str", "roll", "shifts")(lambda: L.roll(x(), shifts="1"))
case("increment-int-value", "increment", "value")(lambda: L.increment(x((1,)), value="a"))
case("create_parameter-str", "create_parameter", "shape")(
    lambda: L.create_parameter("23", "float32")
)
case("fill_constant-shape-str", "fill_constant", "shape")(
    lambda: L.fill_constant("23", "float32", 1.0)
)
case("fill_constant-value-str", "fill_constant", "value")(
    lambda: L.fill_constant([2], "float32", "a")
)
case("rt-matmul2", "matmul", "y", {"x": f(2, 3), "y": f(4, 5)})(
    lambda: L.matmul(x((-1, -1)), x((-1, -1), name="y"))
)
case("rt-matmul-b", "matmul", "y", {"x": f(2, 2, 3), "y": f(3, 3, 5)})(
    lambda: L.matmul(x((-1, -1, -1)), x((-1, -1, -1), name="y"))
)
case("rt-mul2", "mul", "y", {"x": f(2, 3), "y": f(4, 5)})(
    lambda: L.mul(x((-1, -1)), x((-1, 5), name="y"))
)
case("rt-concat2", "concat", "input", {"x": f(2, 3), "y": f(2, 4)})(
    lambda: L.concat([x((-1, -1)), x((-1, -1), name="y")], axis=0)
)
case("rt-stack2", "stack", "x", {"x": f(4, 3), "y": f(3, 3)})(
    lambda: L.stack([x((-1, 3)), x((-1, 3), name="y")])
)
case("rt-sums2", "sums", "input", {"x": f(4, 3), "y": f(3, 3)})(
    lambda: L.sums([x((-1, 3)), x((-1, 3), name="y")])
)
case("rt-sums-silent", "sums", "input", {"x": f(4, 3), "y": f(1, 3)})(
    lambda: L.sums([x((-1, 3)), x((-1, 3), name="y")])
)


# ---- round 4: the remaining public names
for act in [
    "abs",
    "brelu",
    "ceil",
    "cos",
    "elu",
    "hard_shrink",
    "hard_sigmoid",
    "hard_swish",
    "logsigmoid",
    "reciprocal",
    "relu6",
    "round",
    "rsqrt",
    "selu",
    "sign",
    "sin",
    "soft_relu",
    "softplus",
    "softshrink",
    "square",
    "stanh",
    "swish",
    "tanh_shrink",
    "thresholded_relu",
]:
    case(f"{act}-numpy", act, "x")(lambda act=act: getattr(L, act)(A))
    case(f"{act}-int", act, "x")(lambda act=act: getattr(L, act)(x(dtype="int64")))
for op in ["greater_equal", "greater_than", "less_equal", "not_equal"]:
    case(f"{op}-shape", op, "y")(lambda op=op: getattr(L, op)(x(), x((4, 5), name="y")))
    case(f"{op}-numpy", op, "y")(lambda op=op: getattr(L, op)(x(), A))
for op in ["logical_or", "logical_xor"]:
    case(f"{op}-float", op, "x")(lambda op=op: getattr(L, op)(x(), x(name="y")))
for op in ["elementwise_min", "elementwise_pow", "elementwise_floordiv"]:
    case(f"{op}-shape", op, "y")(lambda op=op: getattr(L, op)(x((2, 3)), x((4, 5), name="y")))
case("elementwise_floordiv-float", "elementwise_floordiv", "x")(
    lambda: L.elementwise_floordiv(x(), x(name="y"))
)
case("argmin-axis", "argmin", "axis")(lambda: L.argmin(x(), axis=4))
for op in ["reduce_min", "reduce_prod"]:
    case(f"{op}-dim", op, "dim")(lambda op=op: getattr(L, op)(x(), dim=3))
case("reduce_any-float", "reduce_any", "input")(lambda: L.reduce_any(x()))
case("triu-rank", "triu", "x")(lambda: L.triu(x((3,))))
case("unique_with_counts-rank", "unique_with_counts", "x")(lambda: L.unique_with_counts(x((2, 3))))
case("zeros-dtype", "zeros", "dtype")(lambda: L.zeros([2], "floaty"))
case("zeros-shape", "zeros", "shape")(lambda: L.zeros([2, -3], "float32"))
case("ones_like-numpy", "ones_like", "x")(lambda: L.ones_like(A))
case("size-numpy", "size", "input")(lambda: L.size(A))
case("rank-numpy", "rank", "input")(lambda: L.rank(A))
case("has_inf-numpy", "has_inf", "x")(lambda: L.has_inf(A))
case("has_nan-numpy", "has_nan", "x")(lambda: L.has_nan(A))
case("isfinite-numpy", "isfinite", "x")(lambda: L.isfinite(A))
case("gbsl-idx", "gaussian_random_batch_size_like", "input_dim_idx")(
    lambda: L.gaussian_random_batch_size_like(x(), [1, 3], input_dim_idx=4)
)
case("create_tensor-dtype", "create_tensor", "dtype")(lambda: L.create_tensor("floaty"))
case("Print-numpy", "Print", "input")(lambda: L.Print(A))
case("merge_selected_rows-numpy", "merge_selected_rows", "x")(lambda: L.merge_selected_rows(A))
case("get_tensor_from_selected_rows-numpy", "get_tensor_from_selected_rows", "x")(
    lambda: L.get_tensor_from_selected_rows(A)
)
case("exponential_decay-lr-str", "exponential_decay", "learning_rate")(
    lambda: L.exponential_decay("a", 10, 0.5)
)
case("exponential_decay-steps0", "exponential_decay", "decay_steps")(
    lambda: L.exponential_decay(0.1, 0, 0.5)
)
case("natural_exp_decay-steps0", "natural_exp_decay", "decay_steps")(
    lambda: L.natural_exp_decay(0.1, 0, 0.5)
)
case("inverse_time_decay-steps0", "inverse_time_decay", "decay_steps")(
    lambda: L.inverse_time_decay(0.1, 0, 0.5)
)
case("polynomial_decay-steps0", "polynomial_decay", "decay_steps")(
    lambda: L.polynomial_decay(0.1, 0)
)
case("piecewise_decay-len", "piecewise_decay", "values")(
    lambda: L.piecewise_decay([10, 20], [0.1, 0.01])
)
case("piecewise_decay-order", "piecewise_decay", "boundaries")(
    lambda: L.piecewise_decay([20, 10], [0.1, 0.01, 0.001])
)
case("cosine_decay-epochs0", "cosine_decay", "epochs")(lambda: L.cosine_decay(0.1, 10, 0))
case("noam_decay-warmup0", "noam_decay", "warmup_steps")(lambda: L.noam_decay(512, 0))
case("linear_lr_warmup-str", "linear_lr_warmup", "warmup_steps")(
    lambda: L.linear_lr_warmup(0.1, "a", 0.0, 0.1)
)
case("autoincreased_step_counter-step-str", "autoincreased_step_counter", "step")(
    lambda: L.autoincreased_step_counter(step="a")
)


# ---- vision, metrics and losses (cases in probe_bad_input_vision.py)
from probe_bad_input_vision import register as _register_vision  # noqa: E402

_register_vision(case, x, d, L)


# ---- detection
# fmt: off
def _F():
    return d("feat", [1, 8, 4, 4])


def _I():
    return d("img", [1, 3, 32, 32])


case("prior_box-max<min", "prior_box", "max_sizes")(lambda: L.prior_box(_F(), _I(), [8.0], [4.0]))
case("box_coder-var3", "box_coder", "prior_box_var")(lambda: L.box_coder(d("p", [3, 4]), [0.1] * 3, d("t", [2, 4])))
case("iou_similarity-5", "iou_similarity", "x")(lambda: L.iou_similarity(d("a", [3, 5]), d("b", [2, 4])))
case("yolo_box-channels", "yolo_box", "x")(lambda: L.yolo_box(_F(), d("s", [1, 2], "int32"), [10, 13], 4, 0.1, 32))
case("multiclass_nms-boxes", "multiclass_nms", "bboxes")(lambda: L.multiclass_nms(d("b", [2, 9, 4]), d("s", [2, 3, 10]), 0.1, 5, 5))
case("roi_align-rois5", "roi_align", "rois")(lambda: L.roi_align(_F(), d("r", [-1, 5], lod_level=1), 2, 2))
case("psroi_pool-channels", "psroi_pool", "input")(lambda: L.psroi_pool(_F(), d("r", [-1, 4], lod_level=1), 3, 1.0, 2, 2))
case("yolov3_loss-mask", "yolov3_loss", "anchor_mask")(lambda: L.yolov3_loss(d("x", [2, 14, 4, 4]), d("g", [2, 5, 4]), d("l", [2, 5], "int32"), [10, 13, 16, 30], [1, 3], 2, 0.5, 32))
case("target_assign-int64", "target_assign", "matched_indices")(lambda: L.target_assign(d("x", [-1, 4, 2], lod_level=1), d("m", [2, 4], "int64")))
case("generate_proposals-deltas", "generate_proposals", "bbox_deltas")(lambda: L.generate_proposals(d("s", [1, 3, 4, 4]), d("dl", [1, 10, 4, 4]), d("i", [1, 3]), d("a", [4, 4, 3, 4]), d("v", [4, 4, 3, 4])))
case("affine_channel-scale", "affine_channel", "scale")(lambda: L.affine_channel(_F(), d("s", [3]), d("b", [3])))
# fmt: on


# ---- dygraph
def dy(fn):
    def run():
        with fluid.dygraph.guard():
            return fn()

    return run


DN = fluid.dygraph
tv = lambda a: DN.to_variable(np.asarray(a))  # noqa: E731
case("dy-Linear-dim", "Linear", "input")(
    dy(lambda: DN.Linear(4, 2)(tv(np.ones((3, 5), "float32"))))
)
case("dy-Linear-neg", "Linear", "output_dim")(dy(lambda: DN.Linear(4, -2)))
case("dy-Linear-int", "Linear", "input")(dy(lambda: DN.Linear(4, 2)(tv(np.ones((3, 4), "int64")))))
case("dy-Linear-numpy", "Linear", "input")(dy(lambda: DN.Linear(4, 2)(np.ones((3, 4), "float32"))))
case("dy-Conv2D-ch", "Conv2D", "input")(
    dy(lambda: DN.Conv2D(3, 4, 3)(tv(np.ones((1, 2, 8, 8), "float32"))))
)
case("dy-Conv2D-rank", "Conv2D", "input")(
    dy(lambda: DN.Conv2D(3, 4, 3)(tv(np.ones((3, 8, 8), "float32"))))
)
case("dy-Conv2D-groups", "Conv2D", "groups")(dy(lambda: DN.Conv2D(3, 4, 3, groups=2)))
case("dy-Conv2DT-ch", "Conv2DTranspose", "input")(
    dy(lambda: DN.Conv2DTranspose(3, 4, 3)(tv(np.ones((1, 2, 8, 8), "float32"))))
)
case("dy-Pool2D-type", "Pool2D", "pool_type")(dy(lambda: DN.Pool2D(2, pool_type="min")))
case("dy-Pool2D-rank", "Pool2D", "input")(dy(lambda: DN.Pool2D(2)(tv(np.ones((3, 8), "float32")))))
case("dy-BatchNorm-ch", "BatchNorm", "input")(
    dy(lambda: DN.BatchNorm(3)(tv(np.ones((2, 4, 2, 2), "float32"))))
)
case("dy-BatchNorm-layout", "BatchNorm", "data_layout")(
    dy(lambda: DN.BatchNorm(3, data_layout="NWHC"))
)
case("dy-LayerNorm-shape", "LayerNorm", "input")(
    dy(lambda: DN.LayerNorm([5])(tv(np.ones((2, 4), "float32"))))
)
case("dy-Embedding-float", "Embedding", "input")(
    dy(lambda: DN.Embedding([10, 3])(tv(np.ones((2, 1), "float32"))))
)
case("dy-Embedding-oob", "Embedding", "input")(
    dy(lambda: DN.Embedding([10, 3])(tv(np.array([[1], [12]], "int64"))))
)
case("dy-Embedding-size", "Embedding", "size")(dy(lambda: DN.Embedding(10)))
case("dy-Dropout-p", "Dropout", "p")(dy(lambda: DN.Dropout(p=1.5)))
case("dy-GRUUnit-size", "GRUUnit", "input")(
    dy(lambda: DN.GRUUnit(6)(tv(np.ones((2, 5), "float32")), tv(np.ones((2, 2), "float32"))))
)
case("dy-PRelu-mode", "PRelu", "mode")(dy(lambda: DN.PRelu(mode="pixel")))
case("dy-PRelu-channel", "PRelu", "input")(
    dy(lambda: DN.PRelu(mode="channel", channel=3)(tv(np.ones((2, 4, 2, 2), "float32"))))
)
case("dy-Sequential-nonlayer", "Sequential", "layers")(
    dy(lambda: DN.Sequential(DN.Linear(2, 2), 3))
)
case("dy-LayerList-nonlayer", "LayerList", "sublayers")(
    dy(lambda: DN.LayerList([DN.Linear(2, 2), 3]))
)
case("dy-ParameterList-nonparam", "ParameterList", "parameters")(dy(lambda: DN.ParameterList([3])))
case("dy-Conv2D-nf-neg", "Conv2D", "num_filters")(dy(lambda: DN.Conv2D(3, -4, 3)))
case("dy-Conv2D-ch-neg", "Conv2D", "num_channels")(dy(lambda: DN.Conv2D(-3, 4, 3)))
case("dy-BatchNorm-int", "BatchNorm", "input")(
    dy(lambda: DN.BatchNorm(3)(tv(np.ones((2, 3, 2, 2), "int64"))))
)
case("dy-Embedding-neg", "Embedding", "size")(dy(lambda: DN.Embedding([-10, 3])))
case("dy-Embedding-pad", "Embedding", "padding_idx")(
    dy(lambda: DN.Embedding([10, 3], padding_idx=20))
)
case("dy-GRUUnit-size", "GRUUnit", "size")(dy(lambda: DN.GRUUnit(7)))
case("dy-GRUUnit-act", "GRUUnit", "activation")(dy(lambda: DN.GRUUnit(6, activation="gelu")))
case("dy-LayerNorm-rank", "LayerNorm", "input")(
    dy(lambda: DN.LayerNorm([2, 4])(tv(np.ones((4,), "float32"))))
)
case("dy-Dropout-impl", "Dropout", "dropout_implementation")(
    dy(lambda: DN.Dropout(dropout_implementation="x"))
)
case("dy-Pool2D-size-neg", "Pool2D", "pool_size")(dy(lambda: DN.Pool2D(-2)))
case("dy-Pool2D-small", "Pool2D", "input")(
    dy(lambda: DN.Pool2D(3)(tv(np.ones((1, 3, 1, 1), "float32"))))
)
case("dy-Linear-float-dim", "Linear", "input_dim")(dy(lambda: DN.Linear(4.0, 2)))
case("dy-Conv2DT-groups", "Conv2DTranspose", "groups")(
    dy(lambda: DN.Conv2DTranspose(3, 4, 3, groups=2))
)
case("dy-PRelu-element", "PRelu", "input")(
    dy(
        lambda: DN.PRelu(mode="element", input_shape=[1, 3, 2, 2])(
            tv(np.ones((1, 3, 4, 4), "float32"))
        )
    )
)
case("dy-BatchNorm-ch-neg", "BatchNorm", "num_channels")(dy(lambda: DN.BatchNorm(-3)))
case("dy-LayerNorm-neg", "LayerNorm", "normalized_shape")(dy(lambda: DN.LayerNorm([-4])))
case("dy-PRelu-channel-neg", "PRelu", "channel")(dy(lambda: DN.PRelu(mode="channel", channel=-3)))
case("dy-GRUUnit-neg", "GRUUnit", "size")(dy(lambda: DN.GRUUnit(-6)))
case("dy-Conv2DT-nf-neg", "Conv2DTranspose", "num_filters")(
    dy(lambda: DN.Conv2DTranspose(3, -4, 3))
)
case("dy-Linear-act", "Linear", "act")(dy(lambda: DN.Linear(4, 2, act="reluu")))
case("dy-Conv2D-big-filter", "Conv2D", "filter")(
    dy(lambda: DN.Conv2D(3, 4, 11)(tv(np.ones((1, 3, 8, 8), "float32"))))
)


RAW = (
    "operands could not be broadcast",
    "cannot reshape array",
    "not enough values to unpack",
    "index out of range",
    "setting an array element",
    "could not convert",
    "is out of bounds for axis",
    "object has no attribute",
    "unsupported operand",
)
THIS = __file__.rsplit("/", 1)[-1]


def classify(exc, layer, arg):
    msg = str(exc)
    # judge the message proper, not the quoted source line that follows it
    low = msg.split("\n  called at ")[0].split("\n  created at ")[0].lower()
    return {
        "type": type(exc).__name__,
        "names_layer": layer.lower() in low or any(t in low for t in ("op '", "layer '")),
        "names_arg": arg.lower() in low,
        "expected_given": any(
            w in low
            for w in (
                "given",
                "got",
                "but",
                " vs ",
                "received",
                "must",
                "out of range",
                "expects",
                "differ",
                "exceeds",
                "larger",
                "not ",
                "unknown",
                "unsupported",
                "outside",
                "runs past",
                "has shape",
                "more than one",
                "give ",
                "has dtype",
            )
        ),
        "raw_numpy": any(w in low for w in RAW),
        "user_line": THIS in msg or "probe_bad_input_vision.py" in msg,
        "numpy_deep": "numpy" in "".join(traceback.format_tb(exc.__traceback__))
        and "oar" not in type(exc).__module__,
        "msg": msg.replace("\n", " | ")[:260],
    }


def run_case(cid, layer, arg, fn, feed):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        try:
            out = fn()
        except Exception as exc:
            return "build", classify(exc, layer, arg)
    if feed is None:
        return "accepted", None
    exe = fluid.Executor(fluid.CPUPlace())
    try:
        exe.run(startup)
        outs = out if isinstance(out, (list, tuple)) else [out]
        exe.run(main, feed=feed, fetch_list=list(outs))
    except Exception as exc:
        return "run", classify(exc, layer, arg)
    return "ran", None


# Fluid 1.8 accepts these at build time too (checked with the real Fluid); oar keeps
# accepting them: run-time errors are clear (cross_entropy float label) or the
# result matches Fluid's (same-rank broadcast of a 1 dim, str scale, assign's output).
FLUID_ACCEPTS = {
    "cross_entropy-label-float",
    "square_error_cost-shape",
    "elementwise_mod-float",
    "scale-str",
    "assign-shape",
    "rt-add-silent",
    "rt-where-cond",
    "unsqueeze-dup",
    "linspace-dtype",
    "rt-bn-ch",
    "rt-mean-fine",
    "abs-int",
    "elementwise_floordiv-float",
    "dy-Embedding-pad",
    "dy-Pool2D-size-neg",
    "dy-Conv2DT-groups",
}


def main(verbose=False):
    layers = set()
    bad = []
    for cid, layer, arg, fn, feed in CASES:
        layers.add(layer)
        when, info = run_case(cid, layer, arg, fn, feed)
        ok = (
            info is not None
            and info["names_layer"]
            and info["user_line"]
            and info["expected_given"]
            and not info["raw_numpy"]
            and info["type"]
            not in ("IndexError", "KeyError", "AttributeError", "ZeroDivisionError")
        )
        if info is None and when == "ran" and cid not in FLUID_ACCEPTS:
            ok = False
        if info is None and cid in FLUID_ACCEPTS:
            ok = True
        flag = "OK " if ok else "BAD"
        if not ok:
            bad.append(cid)
        if verbose or not ok:
            if info is None:
                print(f"{flag} {cid:32s} {when}: no error")
            else:
                print(
                    f"{flag} {cid:32s} {when}: {info['type']} layer={info['names_layer']:d} arg={info['names_arg']:d}"
                    f" exp/given={info['expected_given']:d} line={info['user_line']:d} :: {info['msg']}"
                )
    print(f"\n{len(layers)} layers, {len(CASES)} cases, {len(bad)} flagged")


def main_dygraph() -> None:
    """The static cases again in dygraph mode (data -> to_variable, -1 dims -> 2)."""
    global d

    def d_dy(name, shape, dtype=F32, lod_level=0):
        shape = [2 if s < 0 else s for s in shape]
        return fluid.dygraph.to_variable(
            (np.zeros if dtype.startswith("int") else np.ones)(shape, dtype)
        )

    d = d_dy
    flagged = n = 0
    for cid, layer, arg, fn, feed in CASES:
        if cid.startswith("dy-") or feed is not None:
            continue
        n += 1
        with fluid.dygraph.guard():
            try:
                fn()
                continue
            except Exception as exc:
                info = classify(exc, layer, arg)
        if (
            not info["user_line"]
            or info["raw_numpy"]
            or info["type"]
            in ("IndexError", "KeyError", "AttributeError", "AxisError", "RuntimeError")
        ):
            flagged += 1
            print(f"BAD {cid:32s} {info['type']} :: {info['msg']}")
    print(f"\ndygraph: {n} cases, {flagged} flagged")


if __name__ == "__main__":
    if "--dygraph" in sys.argv:
        main_dygraph()
    else:
        main("-v" in sys.argv)

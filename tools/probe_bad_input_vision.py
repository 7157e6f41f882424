"""Bad-input probe cases for the vision, metric and loss layers.

Kept out of probe_bad_input.py (the module budget); it calls ``register`` with its helpers.
"""

from __future__ import annotations


def register(case, x, d, L) -> None:
    V5 = (2, 3, 4, 4, 4)
    case("conv3d-4d", "conv3d", "input")(lambda: L.conv3d(x((2, 3, 4, 4)), 2, 3))
    case("conv3d-groups", "conv3d", "groups")(lambda: L.conv3d(x(V5), 2, 3, groups=2))
    case("conv3d-too-big", "conv3d", "filter_size")(lambda: L.conv3d(x(V5), 2, 9))
    case("conv3d_transpose-nosize", "conv3d_transpose", "filter_size")(
        lambda: L.conv3d_transpose(x(V5), 2)
    )
    case("pool3d-type", "pool3d", "pool_type")(lambda: L.pool3d(x(V5), 2, "min"))
    case("pool3d-size", "pool3d", "pool_size")(lambda: L.pool3d(x(V5)))
    case("adaptive_pool3d-size", "adaptive_pool3d", "pool_size")(
        lambda: L.adaptive_pool3d(x(V5), [2, 2])
    )
    case("group_norm-groups", "group_norm", "groups")(lambda: L.group_norm(x((2, 6, 3, 3)), 4))
    case("instance_norm-1d", "instance_norm", "input")(lambda: L.instance_norm(x((3,))))
    case("resize_trilinear-shape", "resize_trilinear", "out_shape")(
        lambda: L.resize_trilinear(x(V5), [4, 4])
    )
    case("affine_grid-shape", "affine_grid", "out_shape")(
        lambda: L.affine_grid(x((2, 2, 3)), [2, 3])
    )
    case("grid_sampler-grid", "grid_sampler", "grid")(
        lambda: L.grid_sampler(x((2, 1, 4, 4)), x((2, 3, 3, 2), name="g"))
    )
    case("space_to_depth-block", "space_to_depth", "blocksize")(
        lambda: L.space_to_depth(x((2, 8, 4, 4)), 3)
    )
    case("temporal_shift-seg", "temporal_shift", "seg_num")(
        lambda: L.temporal_shift(x((6, 4, 2, 2)), 4)
    )
    case("unfold-kernel", "unfold", "kernel_sizes")(lambda: L.unfold(x((2, 1, 3, 3)), [5, 5]))
    case("crop-rank", "crop", "shape")(lambda: L.crop(x((3, 4)), [2]))
    case("bilinear_tensor_product-3d", "bilinear_tensor_product", "x")(
        lambda: L.bilinear_tensor_product(x((2, 3, 4)), x((2, 3), name="y"), 4)
    )
    case("index_select-index", "index_select", "index")(
        lambda: L.index_select(x(), x((2,), name="i"))
    )
    case("trace-dims", "trace", "dim2")(lambda: L.trace(x(), dim1=1, dim2=1))
    case("flip-dims", "flip", "dims")(lambda: L.flip(x(), dims=[3]))
    case("hsigmoid-classes", "hsigmoid", "num_classes")(
        lambda: L.hsigmoid(x(), d("l", [2, 1], "int64"), 1)
    )
    case("nce-negs", "nce", "num_neg_samples")(
        lambda: L.nce(x(), d("l", [2, 1], "int64"), 4, num_neg_samples=4)
    )
    case("center_loss-classes", "center_loss", "num_classes")(
        lambda: L.center_loss(x(), d("l", [2, 1], "int64"), 0, 0.1, None)
    )
    case("mean_iou-classes", "mean_iou", "num_classes")(
        lambda: L.mean_iou(x(dtype="int32"), x(dtype="int32", name="y"), 0)
    )
    case("auc-steps", "auc", "slide_steps")(
        lambda: L.auc(x(), d("l", [2, 1], "int64"), slide_steps=-1)
    )
    case("auc-curve", "auc", "curve")(lambda: L.auc(x(), d("l", [2, 1], "int64"), curve="DET"))
    case("data_norm-slot_dim", "data_norm", "slot_dim")(lambda: L.data_norm(x((2, 3)), slot_dim=2))
    case("adaptive_pool3d-index-avg", "adaptive_pool3d", "require_index")(
        lambda: L.adaptive_pool3d(x(V5), 2, "avg", require_index=True)
    )

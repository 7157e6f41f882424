"""``cvm`` (continuous value model), ``random_crop`` and ``spectral_norm``."""

from __future__ import annotations

from oar.ops._infer import check_float, compatible, meta
from oar.registry import Attr, GradSpec, OpDef


def _infer_cvm(ins, attrs):
    x, cvm = ins["X"], ins["CVM"]
    if len(x.shape) != 2 or len(cvm.shape) != 2 or not compatible(x.shape[0], cvm.shape[0]):
        raise ValueError(
            f"cvm: X [N, D] and CVM [N, 2] expected, given {list(x.shape)} and {list(cvm.shape)}"
        )
    if x.shape[1] >= 0 and x.shape[1] < 2:
        raise ValueError(f"cvm: X needs at least the 2 show/click columns, given {list(x.shape)}")
    d = x.shape[1]
    return {"Y": meta((x.shape[0], d if attrs["use_cvm"] or d < 0 else d - 2), x.dtype)}


def _infer_random_crop(ins, attrs):
    x, shape = ins["X"], list(attrs["shape"])
    if not shape or len(shape) > len(x.shape):
        raise ValueError(
            f"random_crop: shape {shape} must name 1 to {len(x.shape)} trailing dims of X"
        )
    lead = len(x.shape) - len(shape)
    for i, (s, d) in enumerate(zip(shape, x.shape[lead:])):
        if s <= 0 or (d >= 0 and s > d):
            raise ValueError(f"random_crop: size {s} of dim {lead + i} must be in [1, {d}]")
    return {
        "Out": meta(tuple(x.shape[:lead]) + tuple(shape), x.dtype),
        "SeedOut": meta((1,), "int64"),
    }


def _infer_spectral_norm(ins, attrs):
    w = ins["Weight"]
    check_float(ins, "Weight")
    dim = attrs["dim"]
    if len(w.shape) < 2 or not 0 <= dim < len(w.shape):
        raise ValueError(
            f"spectral_norm: Weight must have >= 2 dims and dim in range, given {list(w.shape)}, dim={dim}"
        )
    h = w.shape[dim]
    rest = 1
    for i, d in enumerate(w.shape):
        if i != dim:
            rest = rest * d if d >= 0 and rest >= 0 else -1
    if list(ins["U"].shape) != [h] or (rest >= 0 and list(ins["V"].shape) != [rest]):
        raise ValueError(
            f"spectral_norm: U must be [{h}] and V [{rest}], given {list(ins['U'].shape)} and {list(ins['V'].shape)}"
        )
    return {"Out": w}


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "cvm",
            ["X", "CVM"],
            ["Y"],
            {"use_cvm": Attr(bool, True)},
            infer_shape=_infer_cvm,
            grad=GradSpec(("X", "CVM", "Y@GRAD"), ("X@GRAD",)),
        )
    )
    registry.register_op(
        OpDef(
            "random_crop",
            ["X", "Seed?"],
            ["Out", "SeedOut"],
            {"shape": Attr(list, []), "startup_seed": Attr(int, 0)},
            infer_shape=_infer_random_crop,
            kernel_dtype="X",
        )
    )
    registry.register_op(
        OpDef(
            "spectral_norm",
            ["Weight", "U", "V"],
            ["Out"],
            {"dim": Attr(int, 0), "power_iters": Attr(int, 1), "eps": Attr(float, 1e-12)},
            infer_shape=_infer_spectral_norm,
            grad=GradSpec(("Weight", "U", "V", "Out@GRAD"), ("Weight@GRAD",)),
        )
    )

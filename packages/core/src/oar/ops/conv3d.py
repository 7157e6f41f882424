"""3-D convolutions: ``conv3d`` and ``conv3d_transpose`` (NCDHW or NDHWC).

``paddings`` has 3 values (symmetric per axis) or 6 (front, back, top, bottom,
left, right); :func:`conv3d_geometry` is shared with the kernels (through
``oar.api``) so that shapes and values agree.
"""

from __future__ import annotations

from collections.abc import Sequence

from oar.ops._infer import check_float, check_same_dtype, int_check, meta, one_of, paddings_check
from oar.registry import Attr, GradSpec, OpDef


def _triples(v):
    if len(v) != 3 or any((not isinstance(i, int)) or i <= 0 for i in v):
        return "must be 3 positive ints"
    return None


def resolve_paddings_nd(
    paddings: Sequence[int],
    algorithm: str,
    sizes: Sequence[int],
    ksize: Sequence[int],
    strides: Sequence[int],
    dilations: Sequence[int],
) -> tuple:
    """``(before/after pads per axis, flat), dilations`` for the padding algorithm, any rank."""
    r = len(sizes)
    if algorithm == "VALID":
        return (0,) * (2 * r), tuple(dilations)
    if algorithm == "SAME":
        pads: list = []
        for size, k, s in zip(sizes, ksize, strides):
            if size < 0:
                pads += [0, 0]
                continue
            total = max((-(-size // s) - 1) * s + k - size, 0)
            pads += [total // 2, total - total // 2]
        return tuple(pads), (1,) * r
    p = list(paddings)
    if len(p) == r:
        p = [v for v in p for _ in (0, 1)]
    return tuple(p), tuple(dilations)


def _resolve(in_dhw, k_dhw, attrs) -> tuple:
    return resolve_paddings_nd(
        attrs["paddings"],
        attrs["padding_algorithm"],
        in_dhw,
        k_dhw,
        attrs["strides"],
        attrs["dilations"],
    )


def conv3d_geometry(in_dhw, k_dhw, attrs) -> tuple:
    """``(pads6, dilations, out_dhw)`` of a forward 3-D convolution (-1 for unknown sizes)."""
    pads, dil = _resolve(in_dhw, k_dhw, attrs)
    out = []
    for i, (size, k, s) in enumerate(zip(in_dhw, k_dhw, attrs["strides"])):
        if size < 0:
            out.append(-1)
        else:
            out.append((size + pads[2 * i] + pads[2 * i + 1] - (dil[i] * (k - 1) + 1)) // s + 1)
    return pads, dil, tuple(out)


def _ncdhw(shape, fmt, op, slot):
    if len(shape) != 5:
        raise ValueError(f"{op}: {slot} must be 5-D ({fmt}), given shape {list(shape)}")
    if fmt == "NDHWC":
        return shape[0], shape[4], tuple(shape[1:4])
    return shape[0], shape[1], tuple(shape[2:])


def _filter(ins, op, what):
    w = ins["Filter"]
    if len(w.shape) != 5:
        raise ValueError(
            f"{op}: Filter must be 5-D [{what}, kd, kh, kw], given shape {list(w.shape)}"
        )
    return w.shape


def _infer_conv3d(ins, attrs):
    x = ins["Input"]
    check_float(ins, "Input")
    dtype = check_same_dtype(ins, "Input", "Filter")
    fmt = attrs["data_format"]
    n, c, dhw = _ncdhw(x.shape, fmt, "conv3d", "Input")
    oc, cg, *k = _filter(ins, "conv3d", "out_channels, in_channels/groups")
    g = attrs["groups"]
    if oc % g or (c >= 0 and (c % g or c // g != cg)):
        raise ValueError(
            f"conv3d: Input has {c} channels and groups={g}, so Filter needs {oc} output channels "
            f"divisible by {g} and {c // g if c >= 0 else '?'} input channels per group; given "
            f"Filter shape {list(ins['Filter'].shape)}"
        )
    pads, dil, out = conv3d_geometry(dhw, k, attrs)
    if any(s >= 0 and o <= 0 for s, o in zip(dhw, out)):
        raise ValueError(
            f"conv3d: the filter {k} (dilations {list(dil)}) does not fit the padded input {list(dhw)} "
            f"(paddings {list(pads)}): output would be {list(out)}"
        )
    shape = (n, *out, oc) if fmt == "NDHWC" else (n, oc, *out)
    return {"Output": meta(shape, dtype)}


def conv3d_transpose_geometry(in_dhw, k_dhw, attrs) -> tuple:
    """``(pads6, dilations, out_dhw)`` of a transposed 3-D convolution (output_size honoured)."""
    pads, dil = _resolve(in_dhw, k_dhw, attrs)
    full = []
    for i, (size, k, s) in enumerate(zip(in_dhw, k_dhw, attrs["strides"])):
        full.append(
            -1
            if size < 0
            else (size - 1) * s - pads[2 * i] - pads[2 * i + 1] + dil[i] * (k - 1) + 1
        )
    want = list(attrs.get("output_size") or [])
    if want:
        for i, (mn, w) in enumerate(zip(full, want)):
            if mn >= 0 and not mn <= w < mn + attrs["strides"][i]:
                raise ValueError(
                    f"conv3d_transpose: output_size {want} is not reachable: dim {i} must be in "
                    f"[{mn}, {mn + attrs['strides'][i] - 1}]"
                )
        full = want
    return pads, dil, tuple(full)


def _infer_conv3d_transpose(ins, attrs):
    x = ins["Input"]
    check_float(ins, "Input")
    dtype = check_same_dtype(ins, "Input", "Filter")
    fmt = attrs["data_format"]
    n, c, dhw = _ncdhw(x.shape, fmt, "conv3d_transpose", "Input")
    ci, og, *k = _filter(ins, "conv3d_transpose", "in_channels, out_channels/groups")
    g = attrs["groups"]
    if (c >= 0 and c != ci) or ci % g:
        raise ValueError(
            f"conv3d_transpose: Input has {c} channels; Filter shape {list(ins['Filter'].shape)} "
            f"needs {ci}, divisible by groups={g}"
        )
    _, _, out = conv3d_transpose_geometry(dhw, k, attrs)
    if any(0 <= o <= 0 for o in out):
        raise ValueError(f"conv3d_transpose: output would be {list(out)} (paddings too large)")
    oc = og * g
    shape = (n, *out, oc) if fmt == "NDHWC" else (n, oc, *out)
    return {"Output": meta(shape, dtype)}


def conv3d_attrs(transpose: bool = False) -> dict:
    a = {
        "strides": Attr(list, [1, 1, 1], _triples),
        "paddings": Attr(list, [0, 0, 0], paddings_check(3)),
        "dilations": Attr(list, [1, 1, 1], _triples),
        "groups": Attr(int, 1, int_check(1)),
        "padding_algorithm": Attr(str, "EXPLICIT", one_of("EXPLICIT", "SAME", "VALID")),
        "data_format": Attr(str, "NCDHW", one_of("NCDHW", "NDHWC", "AnyLayout")),
        "use_cudnn": Attr(bool, True),
    }
    if transpose:
        a["output_size"] = Attr(list, [])
    return a


def register(registry) -> None:
    grad = GradSpec(("Input", "Filter", "Output@GRAD"), ("Input@GRAD", "Filter@GRAD"))
    registry.register_op(
        OpDef(
            "conv3d",
            ["Input", "Filter"],
            ["Output"],
            conv3d_attrs(),
            infer_shape=_infer_conv3d,
            grad=grad,
            kernel_dtype="Input",
            doc="3-D convolution (vol2col + GEMM on the CPU)",
        )
    )
    registry.register_op(
        OpDef(
            "conv3d_transpose",
            ["Input", "Filter"],
            ["Output"],
            conv3d_attrs(True),
            infer_shape=_infer_conv3d_transpose,
            grad=grad,
            kernel_dtype="Input",
            doc="transposed 3-D convolution (the gradient of conv3d w.r.t. its input)",
        )
    )

"""NMS layers (Fluid 1.8 signatures): multiclass_nms, multiclass_nms2 (fluid.contrib),
matrix_nms, and SSD's detection_output (decode + softmax + multiclass_nms)."""

from __future__ import annotations

from typing import Any

from oar.errors import ArgumentError, ArgumentTypeError
from oar.layer_helper import LayerHelper, check_variable
from oar.layers._user_line import with_user_line

__all__ = ["multiclass_nms", "matrix_nms", "locality_aware_nms", "detection_output"]


def _int(layer: str, name: str, v: Any) -> int:
    if not isinstance(v, int) or isinstance(v, bool):
        raise ArgumentTypeError(layer, f"{name} must be an int, given {v!r}")
    if v < -1:
        raise ArgumentError(layer, f"{name} must be -1 (all) or >= 0, given {v}")
    return v


def _num(layer: str, name: str, v: Any) -> float:
    if not isinstance(v, (int, float)) or isinstance(v, bool):
        raise ArgumentTypeError(layer, f"{name} must be a number, given {v!r}")
    return float(v)


def _nms(
    layer: str,
    op: str,
    bboxes: Any,
    scores: Any,
    attrs: dict,
    outs: tuple = ("Out",),
    name: str | None = None,
) -> list:
    check_variable(layer, "bboxes", bboxes)
    check_variable(layer, "scores", scores)
    helper = LayerHelper(layer, name=name)
    res = {"Out": helper.create_variable_for_type_inference(bboxes.dtype)}
    if "Index" in outs:
        res["Index"] = helper.create_variable_for_type_inference("int32")
    helper.append_op(
        op, {"BBoxes": [bboxes], "Scores": [scores]}, {k: [v] for k, v in res.items()}, attrs
    )
    for v in res.values():
        v.stop_gradient = True
    return [res[k] for k in outs]


def nms_attrs(
    layer,
    score_threshold,
    nms_top_k,
    keep_top_k,
    nms_threshold,
    normalized,
    nms_eta,
    background_label,
) -> dict:
    eta = _num(layer, "nms_eta", nms_eta)
    if not 0 < eta <= 1:
        raise ArgumentError(layer, f"nms_eta must be in (0, 1], given {nms_eta!r}")
    return {
        "score_threshold": _num(layer, "score_threshold", score_threshold),
        "nms_top_k": _int(layer, "nms_top_k", nms_top_k),
        "keep_top_k": _int(layer, "keep_top_k", keep_top_k),
        "nms_threshold": _num(layer, "nms_threshold", nms_threshold),
        "normalized": bool(normalized),
        "nms_eta": eta,
        "background_label": _int(layer, "background_label", background_label),
    }


def multiclass_nms(
    bboxes: Any,
    scores: Any,
    score_threshold: float,
    nms_top_k: int,
    keep_top_k: int,
    nms_threshold: float = 0.3,
    normalized: bool = True,
    nms_eta: float = 1.0,
    background_label: int = 0,
    name: str | None = None,
) -> Any:
    """Per-class greedy NMS of ``bboxes`` [N, M, 4] scored by ``scores`` [N, C, M], then the
    best ``keep_top_k`` per image: a LoD tensor of rows [label, score, x1, y1, x2, y2]
    (a single row [-1] when no image keeps any box)."""
    layer = "multiclass_nms"
    attrs = nms_attrs(layer, score_threshold, nms_top_k, keep_top_k, nms_threshold, normalized,
                      nms_eta, background_label)  # fmt: skip
    return _nms(layer, layer, bboxes, scores, attrs, name=name)[0]


def multiclass_nms2(
    bboxes: Any,
    scores: Any,
    score_threshold: float,
    nms_top_k: int,
    keep_top_k: int,
    nms_threshold: float = 0.3,
    normalized: bool = True,
    nms_eta: float = 1.0,
    background_label: int = 0,
    return_index: bool = False,
    name: str | None = None,
) -> Any:
    """:func:`multiclass_nms`; with ``return_index`` also the kept boxes' indices into the
    flattened [N * M] boxes (fluid.contrib.multiclass_nms2)."""
    layer = "multiclass_nms2"
    attrs = nms_attrs(layer, score_threshold, nms_top_k, keep_top_k, nms_threshold, normalized,
                      nms_eta, background_label)  # fmt: skip
    out, index = _nms(layer, layer, bboxes, scores, attrs, ("Out", "Index"), name)
    return (out, index) if return_index else out


def matrix_nms(
    bboxes: Any,
    scores: Any,
    score_threshold: float,
    post_threshold: float,
    nms_top_k: int,
    keep_top_k: int,
    use_gaussian: bool = False,
    gaussian_sigma: float = 2.0,
    background_label: int = 0,
    normalized: bool = True,
    return_index: bool = False,
    name: str | None = None,
) -> Any:
    """Matrix NMS (SOLOv2): every score is decayed by its overlap with better boxes of its class
    (linear or Gaussian), kept above ``post_threshold``; rows sorted by decayed score."""
    layer = "matrix_nms"
    attrs = {
        "score_threshold": _num(layer, "score_threshold", score_threshold),
        "post_threshold": _num(layer, "post_threshold", post_threshold),
        "nms_top_k": _int(layer, "nms_top_k", nms_top_k),
        "keep_top_k": _int(layer, "keep_top_k", keep_top_k),
        "use_gaussian": bool(use_gaussian),
        "gaussian_sigma": _num(layer, "gaussian_sigma", gaussian_sigma),
        "background_label": _int(layer, "background_label", background_label),
        "normalized": bool(normalized),
    }
    out, index = _nms(layer, layer, bboxes, scores, attrs, ("Out", "Index"), name)
    return (out, index) if return_index else out


def locality_aware_nms(
    bboxes: Any,
    scores: Any,
    score_threshold: float,
    nms_top_k: int,
    keep_top_k: int,
    nms_threshold: float = 0.3,
    normalized: bool = True,
    nms_eta: float = 1.0,
    background_label: int = -1,
    name: str | None = None,
) -> Any:
    """EAST's locality-aware NMS: per class, consecutive boxes overlapping by more than
    ``nms_threshold`` are merged (coordinates weighted by score, scores summed), then greedy
    NMS. ``bboxes`` [N, M, 4 or 8 (quadrilaterals)], ``scores`` [N, C, M]."""
    layer = "locality_aware_nms"
    attrs = nms_attrs(layer, score_threshold, nms_top_k, keep_top_k, nms_threshold, normalized,
                      nms_eta, background_label)  # fmt: skip
    return _nms(layer, layer, bboxes, scores, attrs, name=name)[0]


def detection_output(
    loc: Any,
    scores: Any,
    prior_box: Any,
    prior_box_var: Any,
    background_label: int = 0,
    nms_threshold: float = 0.3,
    nms_top_k: int = 400,
    keep_top_k: int = 200,
    score_threshold: float = 0.01,
    nms_eta: float = 1.0,
    return_index: bool = False,
) -> Any:
    """SSD's detection output: ``loc`` [N, M, 4] decoded against ``prior_box`` [M, 4],
    ``scores`` [N, M, C] softmaxed over classes, then :func:`multiclass_nms`."""
    from oar.layers.activation import softmax
    from oar.layers.detection_boxes import box_coder
    from oar.layers.manip import transpose

    layer = "detection_output"
    check_variable(layer, "loc", loc)
    check_variable(layer, "scores", scores)
    if len(loc.shape) != 3 or len(scores.shape) != 3:
        raise ArgumentError(
            layer,
            f"loc must be [N, M, 4] and scores [N, M, C], given {list(loc.shape)} and {list(scores.shape)}",
        )
    decoded = box_coder(prior_box, prior_box_var, loc, "decode_center_size")
    probs = transpose(softmax(scores), [0, 2, 1])
    nms = multiclass_nms2 if return_index else multiclass_nms
    kw = {"return_index": True} if return_index else {}
    return nms(
        decoded,
        probs,
        score_threshold,
        nms_top_k,
        keep_top_k,
        nms_threshold,
        True,
        nms_eta,
        background_label,
        **kw,
    )


# fluid.contrib's, not in fluid.layers (so not in __all__, which the package wraps)
multiclass_nms2 = with_user_line(multiclass_nms2)

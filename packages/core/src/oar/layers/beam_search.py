"""Beam-search layers (Fluid 1.8 signatures): beam_search, beam_search_decode, gather_tree."""

from __future__ import annotations

from typing import Any

from oar.layer_helper import LayerHelper, check_variable

__all__ = ["beam_search", "beam_search_decode", "gather_tree"]


def gather_tree(ids: Any, parents: Any) -> Any:
    """Whole beam-search paths [max_time, batch, beam] from the ids chosen at every step and
    the beam each came from (back-traced from the last step)."""
    check_variable("gather_tree", "ids", ids)
    check_variable("gather_tree", "parents", parents)
    helper = LayerHelper("gather_tree")
    out = helper.create_variable_for_type_inference(ids.dtype, stop_gradient=True)
    helper.append_op("gather_tree", {"Ids": [ids], "Parents": [parents]}, {"Out": [out]})
    return out


def _positive_int(layer: str, arg: str, value: Any, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"{layer}: {arg} must be an int >= {low}, given {value!r}")
    return value


def beam_search(
    pre_ids: Any,
    pre_scores: Any,
    ids: Any,
    scores: Any,
    beam_size: int,
    end_id: int,
    level: int = 0,
    is_accumulated: bool = True,
    name: str | None = None,
    return_parent_idx: bool = False,
) -> tuple:
    """One beam-search step: of every source's candidates (``ids``/``scores`` [rows, K],
    one row per live prefix, LoD [sources -> prefixes -> rows]) keep the best ``beam_size``.

    A prefix that already ended (``pre_ids == end_id``) competes only with ``end_id`` and its
    own score; a source whose kept branches have all ended is dropped. ``scores`` are
    accumulated log-probabilities (``is_accumulated``) or probabilities added to
    ``pre_scores`` as logs. Returns ``(selected_ids, selected_scores)`` [N, 1] with LoD
    [sources -> prefixes, prefixes -> kept], and the parent row of each when
    ``return_parent_idx``."""
    for arg, v in (("pre_ids", pre_ids), ("pre_scores", pre_scores), ("scores", scores)):
        check_variable("beam_search", arg, v)
    if ids is not None:
        check_variable("beam_search", "ids", ids)
    _positive_int("beam_search", "beam_size", beam_size, 1)
    _positive_int("beam_search", "end_id", end_id, 0)
    _positive_int("beam_search", "level", level, 0)
    helper = LayerHelper("beam_search", name=name)
    sel_ids = helper.create_variable_for_type_inference(pre_ids.dtype, stop_gradient=True)
    sel_scores = helper.create_variable_for_type_inference(scores.dtype, stop_gradient=True)
    parent = helper.create_variable_for_type_inference("int32", stop_gradient=True)
    ins = {"pre_ids": [pre_ids], "pre_scores": [pre_scores], "scores": [scores]}
    if ids is not None:
        ins["ids"] = [ids]
    helper.append_op(
        "beam_search",
        ins,
        {"selected_ids": [sel_ids], "selected_scores": [sel_scores], "parent_idx": [parent]},
        {
            "level": level,
            "beam_size": beam_size,
            "end_id": end_id,
            "is_accumulated": bool(is_accumulated),
        },
    )
    return (sel_ids, sel_scores, parent) if return_parent_idx else (sel_ids, sel_scores)


def _steps(layer: str, arg: str, value: Any) -> list:
    """The per-step variables: a tensor array variable, or (an oar extension) a list of them."""
    if isinstance(value, (list, tuple)):
        if not value:
            raise ValueError(f"{layer}: {arg} must hold at least one step, given an empty list")
        for k, v in enumerate(value):
            check_variable(layer, f"{arg}[{k}]", v)
        return list(value)
    check_variable(layer, arg, value)
    return [value]


def beam_search_decode(
    ids: Any, scores: Any, beam_size: int, end_id: int, name: str | None = None
) -> tuple:
    """Whole sentences from the ids and scores every beam_search step selected (tensor arrays,
    step 0 holding the start ids): each source's final branches back-traced through the
    steps' LoD, cut after their first ``end_id`` and sorted best first (at most
    ``beam_size``). Returns ``(sentence_ids, sentence_scores)``, 1-D with LoD
    [sources -> sentences, sentences -> tokens]."""
    id_steps = _steps("beam_search_decode", "ids", ids)
    score_steps = _steps("beam_search_decode", "scores", scores)
    if len(id_steps) != len(score_steps):
        raise ValueError(
            f"beam_search_decode: ids and scores must hold as many steps, given "
            f"{len(id_steps)} and {len(score_steps)}"
        )
    _positive_int("beam_search_decode", "beam_size", beam_size, 1)
    _positive_int("beam_search_decode", "end_id", end_id, 0)
    helper = LayerHelper("beam_search_decode", name=name)
    sent_ids = helper.create_variable_for_type_inference("int64", stop_gradient=True)
    sent_scores = helper.create_variable_for_type_inference("float32", stop_gradient=True)
    helper.append_op(
        "beam_search_decode",
        {"Ids": id_steps, "Scores": score_steps},
        {"SentenceIds": [sent_ids], "SentenceScores": [sent_scores]},
        {"beam_size": beam_size, "end_id": end_id},
    )
    return sent_ids, sent_scores

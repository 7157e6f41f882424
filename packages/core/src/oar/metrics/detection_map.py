"""``fluid.metrics.DetectionMAP``: mean average precision of a detector, for the current batch
and accumulated over batches (state kept in persistable variables of the program)."""

from __future__ import annotations

from typing import Any

from oar.errors import ArgumentError, ArgumentTypeError
from oar.layer_helper import LayerHelper, check_variable

__all__ = ["DetectionMAP"]


class DetectionMAP:
    """Builds two ``detection_map`` ops into the current program: the mAP of the batch and the
    mAP of every batch since the last :meth:`reset`.

    ``input``: detections [M, 6] (label, score, x1, y1, x2, y2) with a LoD of images, as
    ``detection_output`` / ``multiclass_nms`` give; ``gt_label`` [N, 1], ``gt_box`` [N, 4]
    and optionally ``gt_difficult`` [N, 1] with the same LoD of images.

    >>> cur_map, accum_map = DetectionMAP(dets, label, box, None, 21).get_map_var()
    """

    def __init__(
        self,
        input: Any,
        gt_label: Any,
        gt_box: Any,
        gt_difficult: Any = None,
        class_num: Any = None,
        background_label: int = 0,
        overlap_threshold: float = 0.5,
        evaluate_difficult: bool = True,
        ap_version: str = "integral",
    ) -> None:
        from oar import layers as L
        from oar.framework import unique_name
        from oar.initializer import Constant

        name = "DetectionMAP"
        for arg, v in (("input", input), ("gt_label", gt_label), ("gt_box", gt_box)):
            check_variable(name, arg, v)
        if not isinstance(class_num, int) or isinstance(class_num, bool) or class_num <= 0:
            raise ArgumentTypeError(name, f"class_num must be a positive int, given {class_num!r}")
        if ap_version not in ("integral", "11point"):
            raise ArgumentError(
                name, f"ap_version must be 'integral' or '11point', given {ap_version!r}"
            )
        dtype = gt_box.dtype
        parts = [L.cast(gt_label, dtype)]
        if gt_difficult is not None:
            check_variable(name, "gt_difficult", gt_difficult)
            parts.append(L.cast(gt_difficult, dtype))
        label = L.concat(parts + [gt_box], axis=1)
        self._attrs = {
            "class_num": class_num,
            "background_label": int(background_label),
            "overlap_threshold": float(overlap_threshold),
            "evaluate_difficult": bool(evaluate_difficult),
            "ap_type": ap_version,
        }
        helper = LayerHelper("detection_map")
        self._cur_map = self._append(helper, input, label)

        def state(suffix, shape, dt, lod_level=0):
            var = helper.create_global_variable(
                persistable=True,
                name=unique_name.generate(f"detection_map_{suffix}"),
                shape=shape,
                dtype=dt,
                lod_level=lod_level,
            )
            helper.set_variable_initializer(var, Constant(0))
            return var

        self._has_state = state("has_state", [1], "int32")
        states = {
            "PosCount": state("pos_count", [class_num, 1], "int32"),
            "TruePos": state("true_pos", [0, 2], input.dtype, 1),
            "FalsePos": state("false_pos", [0, 2], input.dtype, 1),
        }
        self._accum_map = self._append(helper, input, label, states)
        L.fill_constant([1], "int32", 1, out=self._has_state)

    def _append(
        self, helper: LayerHelper, input: Any, label: Any, states: dict | None = None
    ) -> Any:
        ins = {"DetectRes": [input], "Label": [label]}
        if states is None:
            outs = {
                k: [helper.create_variable_for_type_inference(t)]
                for k, t in (
                    ("AccumPosCount", "int32"),
                    ("AccumTruePos", input.dtype),
                    ("AccumFalsePos", input.dtype),
                )
            }
        else:
            ins["HasState"] = [self._has_state]
            ins.update({k: [v] for k, v in states.items()})
            outs = {"AccumPosCount": [states["PosCount"]], "AccumTruePos": [states["TruePos"]],
                    "AccumFalsePos": [states["FalsePos"]]}  # fmt: skip
        mean_ap = helper.create_variable_for_type_inference(input.dtype)
        outs["MAP"] = [mean_ap]
        helper.append_op("detection_map", ins, outs, dict(self._attrs))
        mean_ap.stop_gradient = True
        return mean_ap

    def get_map_var(self) -> tuple:
        """(mAP of the current batch, mAP accumulated since the last reset)."""
        return self._cur_map, self._accum_map

    def reset(self, executor: Any, reset_program: Any = None) -> None:
        """Forget the accumulated batches (runs ``reset_program``, by default one that zeroes
        the has-state flag, with ``executor``)."""
        from oar import fluid

        if reset_program is None:
            reset_program = fluid.Program()
        with fluid.program_guard(reset_program, fluid.Program()):
            flag = reset_program.global_block().create_var(
                name=self._has_state.name, shape=[1], dtype="int32", persistable=True
            )
            fluid.layers.fill_constant([1], "int32", 0, out=flag)
        executor.run(reset_program)

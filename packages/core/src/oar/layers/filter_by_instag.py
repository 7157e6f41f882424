"""fluid.layers.filter_by_instag."""

from __future__ import annotations

from oar.errors import ArgumentError
from oar.layer_helper import LayerHelper, check_variable

__all__ = ["filter_by_instag"]


def filter_by_instag(ins, ins_tag, filter_tag, is_lod, out_val_if_empty=0):
    """Keep the instances of ``ins`` whose tags (``ins_tag``, one LoD sequence per instance)
    meet ``filter_tag``; returns ``[out, loss_weight]``."""
    check_variable("filter_by_instag", "ins", ins)
    check_variable("filter_by_instag", "ins_tag", ins_tag)
    check_variable("filter_by_instag", "filter_tag", filter_tag)
    if not isinstance(is_lod, bool):
        raise ArgumentError("filter_by_instag", f"is_lod must be a bool, given {is_lod!r}")
    helper = LayerHelper("filter_by_instag")
    out = helper.create_variable_for_type_inference(ins.dtype)
    weight = helper.create_variable_for_type_inference(ins.dtype, stop_gradient=True)
    index = helper.create_variable_for_type_inference("int64", stop_gradient=True)
    helper.append_op(
        "filter_by_instag",
        {"Ins": [ins], "Ins_tag": [ins_tag], "Filter_tag": [filter_tag]},
        {"Out": [out], "LossWeight": [weight], "IndexMap": [index]},
        {"is_lod": is_lod, "out_val_if_empty": int(out_val_if_empty)},
    )
    return [out, weight]

"""The signatures of Fluid 1.8.5's detection layers (and DetectionMAP), for oar's signature test.

Regenerate with the oracle: ``$FLUID18_PYTHON tests/kernels_cpu/data/fluid18_detection_signatures.py``
(writes ``fluid18_detection_signatures.json`` next to this file).
"""

import inspect
import json
import os

NAMES = (
    "anchor_generator bipartite_match box_clip box_coder box_decoder_and_assign "
    "collect_fpn_proposals density_prior_box detection_output distribute_fpn_proposals "
    "generate_mask_labels generate_proposal_labels generate_proposals iou_similarity "
    "locality_aware_nms matrix_nms multi_box_head multiclass_nms polygon_box_transform prior_box "
    "retinanet_detection_output retinanet_target_assign roi_perspective_transform "
    "rpn_target_assign ssd_loss target_assign yolo_box yolov3_loss roi_align roi_pool prroi_pool "
    "psroi_pool deformable_conv deformable_roi_pooling affine_channel"
).split()


def describe(fn):
    return [
        [p.name, None if p.default is inspect.Parameter.empty else repr(p.default)]
        for p in inspect.signature(fn).parameters.values()
    ]


if __name__ == "__main__":
    import paddle.fluid as fluid

    sigs = {f"layers.{n}": describe(getattr(fluid.layers, n)) for n in NAMES}
    sigs["contrib.multiclass_nms2"] = describe(fluid.contrib.multiclass_nms2)
    sigs["metrics.DetectionMAP"] = describe(fluid.metrics.DetectionMAP.__init__)[1:]
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "fluid18_detection_signatures.json"), "w") as f:
        json.dump(sigs, f, indent=1, sort_keys=True)

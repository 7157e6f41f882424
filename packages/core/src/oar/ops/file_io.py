"""``load``: fill a variable from a tensor file at run time (``fluid.layers.load``).

The file is a Fluid LoDTensor file or an oar tensor file (whichever format plugin
recognises it: oar-io registers both). The output keeps the shape and dtype the
file holds; ``load_as_fp16`` converts to float16.
"""

from __future__ import annotations

from oar.registry import Attr, OpDef


def _infer_load(ins, attrs):
    if not attrs.get("file_path"):
        raise ValueError("attr 'file_path' must name the tensor file to load")
    return {}  # shape and dtype come from the file


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "load",
            [],
            ["Out"],
            {"file_path": Attr(str, ""), "load_as_fp16": Attr(bool, False)},
            infer_shape=_infer_load,
        )
    )

"""``oar.onnx``: export an inference program to ONNX (``pip install oar-deploy[onnx]``).

``oar.onnx.export(program, feed_names, fetch_targets, scope, path, opset=13)``
writes a model that passes ``onnx.checker`` and whose outputs under
onnxruntime equal oar's (tests/deploy/test_onnx_*.py). Each Fluid op maps
through a converter in ``oar_deploy.onnx.ops_*``; an op without one raises
:class:`UnsupportedOpError` naming every such op of the program at once.
This module imports ``onnx`` only when exporting.
"""

from __future__ import annotations

from oar_deploy.onnx.export import (
    DEFAULT_OPSET,
    UnsupportedOpError,
    export,
    supported_ops,
    to_model,
)

__all__ = ["DEFAULT_OPSET", "UnsupportedOpError", "export", "supported_ops", "to_model"]

"""``fluid.contrib``: extras provided by plugins (e.g. ``contrib.reader`` from oar-data),
and core's contrib layers (``multiclass_nms2``, the rnn_impl ``basic_lstm`` family)."""

from typing import Any

from oar._facade import module_getattr
from oar.optimizer.decoupled import extend_with_decoupled_weight_decay

_plugin_getattr = module_getattr("contrib.")
_CORE = {
    "multiclass_nms2": "oar.layers.detection_nms",
    "basic_lstm": "oar.layers._rnn_impl",
    "basic_gru": "oar.layers._rnn_impl",
    "BasicLSTMUnit": "oar.dygraph.rnn_impl",
    "BasicGRUUnit": "oar.dygraph.rnn_impl",
}


def __getattr__(name: str) -> Any:
    if name in _CORE:
        import importlib

        return getattr(importlib.import_module(_CORE[name]), name)
    return _plugin_getattr(name)


__all__ = ["extend_with_decoupled_weight_decay"]

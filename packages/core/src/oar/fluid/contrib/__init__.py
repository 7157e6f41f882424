"""``fluid.contrib``: extras provided by plugins (e.g. ``contrib.reader`` from oar-data),
and core's contrib layers (``multiclass_nms2``)."""

from typing import Any

from oar._facade import module_getattr

_plugin_getattr = module_getattr("contrib.")
_CORE = {"multiclass_nms2": "oar.layers.detection_nms"}


def __getattr__(name: str) -> Any:
    if name in _CORE:
        import importlib

        return getattr(importlib.import_module(_CORE[name]), name)
    return _plugin_getattr(name)

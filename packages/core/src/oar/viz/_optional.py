"""Import an optional viz library, or say which extra installs it."""

from __future__ import annotations

import importlib
from types import ModuleType

from oar.errors import MissingPluginError


def require(module: str, feature: str, pip_name: str | None = None) -> ModuleType:
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingPluginError(
            f"{feature} needs the '{pip_name or module}' package, which is not installed: "
            f'`pip install "oar-core[viz]"` (or `pip install {pip_name or module}`)'
        ) from exc

"""``fluid.save_dygraph`` / ``fluid.load_dygraph`` (Fluid 1.8): state dicts as ``.pdparams``/``.pdopt``.

A state dict whose values are all parameters (objects with a ``trainable``
attribute, as ``Layer.state_dict()`` gives) goes to ``path.pdparams``; any
other dict (an optimizer's, or plain arrays) to ``path.pdopt``, as in Fluid
1.8. Files use oar's checked container: loading never runs code.
"""

from __future__ import annotations

import os
from typing import Any

from oar_io import container
from oar_io.atomic import PrefixTransaction
from oar_io.errors import MissingVariableError
from oar_io.manifest import PREFIX_MANIFEST


def _is_param(value: Any) -> bool:
    return hasattr(value, "trainable") and hasattr(value, "numpy")


def _prefix(model_path: str, fn: str) -> str:
    if not isinstance(model_path, str):
        raise TypeError(f"{fn}: model_path must be a str, given {type(model_path).__name__}")
    for suf in (".pdparams", ".pdopt"):
        if model_path.endswith(suf):
            return model_path[: -len(suf)]
    return model_path


def save_dygraph(state_dict: dict, model_path: str) -> None:
    """Save a model's or an optimizer's ``state_dict()`` to ``model_path`` + ``.pdparams``/``.pdopt``."""
    if not isinstance(state_dict, dict):
        raise TypeError(
            f"save_dygraph: state_dict must be a dict, given {type(state_dict).__name__}"
        )
    if not state_dict:
        raise ValueError("save_dygraph: state_dict is empty, nothing to save")
    base = _prefix(model_path, "save_dygraph")
    if not os.path.basename(base):
        raise ValueError(
            f"save_dygraph: model_path must be 'dirname/filename', given '{model_path}'"
        )
    suffix = ".pdparams" if all(_is_param(v) for v in state_dict.values()) else ".pdopt"
    with PrefixTransaction(base, replace_all=False) as tx, tx.open(suffix) as f:
        container.write_dict(f, state_dict)


def load_dygraph(model_path: str, keep_name_table: bool = False) -> tuple:
    """``(params, optimizer state)`` from ``model_path.pdparams`` / ``.pdopt``; the latter None if absent."""
    base = _prefix(model_path, "load_dygraph")
    params_path, opt_path = base + ".pdparams", base + ".pdopt"
    if not (
        os.path.isfile(params_path)
        or os.path.isfile(opt_path)
        or os.path.isfile(base + PREFIX_MANIFEST)
    ):
        raise MissingVariableError(f"load_dygraph: parameter file '{params_path}' not found")
    from oar_io.program_state import read_states

    return read_states(base, "load_dygraph")

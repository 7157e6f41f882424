"""``fluid.save`` / ``fluid.load`` and ``load_program_state`` / ``set_program_state`` (Fluid 1.8).

``fluid.save(program, "dir/name")`` writes ``name.pdparams`` (parameters),
``name.pdopt`` (other persistables, when there are any) and ``name.pdmodel``
(the program as JSON) as one unit, committed by the manifest ``name.pdsave``
(see :class:`oar_io.atomic.PrefixTransaction`); loads take all parts from one save. ``.pdparams``/``.pdopt`` use oar's
checked container (:mod:`oar_io.container`), never pickle.
"""

from __future__ import annotations

import os
import warnings
from typing import Any

import numpy as np

from oar_io import container, snapshot, static_io, varstore
from oar_io.atomic import PrefixTransaction
from oar_io.errors import MismatchError, MissingVariableError
from oar_io.formats import get_format, sniff
from oar_io.manifest import PREFIX_MANIFEST

SUFFIXES = (".pdparams", ".pdopt", ".pdmodel")


def _base(model_path: str, fn: str) -> str:
    if not isinstance(model_path, str):
        raise TypeError(f"{fn}: model_path must be a str, given {type(model_path).__name__}")
    for suf in SUFFIXES:
        if model_path.endswith(suf):
            return model_path[: -len(suf)]
    return model_path


def save(program: Any, model_path: str) -> None:
    """Save ``program``'s parameters, other persistables and the program itself under ``model_path``."""
    base = _base(model_path, "fluid.save")
    if not os.path.basename(base):
        raise ValueError(f"fluid.save: model_path must be 'dirname/filename', given '{model_path}'")
    program = static_io._program(program, "fluid.save")
    scope = varstore.current_scope()
    params, opt = {}, {}
    for v in program.list_vars():
        if static_io.is_parameter(v):
            params[v.name] = varstore.value_of(scope, v.name)[0]
        elif static_io.is_persistable(v):
            opt[v.name] = varstore.value_of(scope, v.name)[0]
    model = get_format(None, "program").dumps(program, [], [])
    with PrefixTransaction(base, replace_all=True) as tx:  # the three files commit as one
        with tx.open(".pdparams") as f:
            container.write_dict(f, params)
        if opt:
            with tx.open(".pdopt") as f:
                container.write_dict(f, opt)
        with tx.open(".pdmodel") as f:
            f.write(model)


def read_states(base: str, fn: str) -> tuple:
    """``(params, opt)`` dicts of the checkpoint at ``base`` (opt None when it has none).

    With a manifest (saved by oar) both come from the same save, verified; without
    one (an older save) each file is read as it is.
    """
    files = snapshot.open_prefix(base)
    if files is None:
        p, o = base + ".pdparams", base + ".pdopt"
        params = container.load_dict(p) if os.path.isfile(p) else None
        opt = container.load_dict(o) if os.path.isfile(o) else None
        return params, opt
    if ".pdmodel" in files:
        files.pop(".pdmodel")[0].close()
    out: list[dict | None] = []
    for suffix in (".pdparams", ".pdopt"):
        if suffix not in files:
            out.append(None)
            continue
        f, ok = files.pop(suffix)
        try:
            out.append(container.load_dict(base + suffix, f))
        except BaseException:
            for g, _ in files.values():
                g.close()
            raise
        if not ok:
            for g, _ in files.values():
                g.close()
            raise snapshot.mismatch(base + suffix)
    return tuple(out)


def has_checkpoint(base: str) -> bool:
    """Whether ``base`` names a fluid.save / save_dygraph checkpoint (manifest or .pdparams)."""
    return os.path.isfile(base + PREFIX_MANIFEST) or os.path.isfile(base + ".pdparams")


def _read_dir(dirname: str, var_list: list | None) -> dict:
    """Every tensor file directly in ``dirname`` (or just ``var_list``), as ``{name: array}``."""
    if var_list is not None:
        names = [v if isinstance(v, str) else v.name for v in var_list]
    else:
        names = []
        for entry in sorted(os.listdir(dirname)):
            p = os.path.join(dirname, entry)
            if entry.startswith(".") or not os.path.isfile(p) or entry.endswith(SUFFIXES):
                continue
            with open(p, "rb") as f:
                try:
                    sniff(f.read(64), p)
                except ValueError:
                    continue
            names.append(entry)
    return {n: a for n, (a, _) in varstore.read_vars(dirname, names, None).items()}


def load_program_state(model_path: str, var_list: list | None = None) -> dict:
    """``{name: numpy array}`` from a ``fluid.save`` prefix or a directory of per-variable files."""
    base = _base(model_path, "load_program_state")
    if has_checkpoint(base):
        params, opt = read_states(base, "load_program_state")
        if params is None:
            raise MissingVariableError(f"load_program_state: '{base}.pdparams' not found")
        state = dict(params)
        state.update(opt or {})
        return state
    if os.path.isdir(model_path):
        return _read_dir(model_path, var_list)
    raise MissingVariableError(
        f"load_program_state: neither '{base}.pdparams' nor a directory '{model_path}' exists"
    )


def set_program_state(program: Any, state_dict: dict) -> None:
    """Put ``state_dict``'s arrays into the scope for ``program``'s persistables, checking shapes."""
    program = static_io._program(program, "set_program_state")
    scope = varstore.current_scope()
    used, missing = set(), []
    for v in program.list_vars():
        if not static_io.is_persistable(v):
            continue
        if v.name not in state_dict:
            missing.append(v.name)
            continue
        arr = container.as_array(state_dict[v.name])
        if arr is None:
            raise TypeError(
                f"set_program_state: value for '{v.name}' is a {type(state_dict[v.name]).__name__}, "
                f"not an array"
            )
        varstore._expect(v, arr, "<state dict>")
        varstore.store(scope, v.name, np.array(arr, copy=True), [])
        used.add(v.name)
    if missing:
        warnings.warn(f"set_program_state: no value for {missing}", stacklevel=2)
    unused = [k for k in state_dict if k not in used]
    if unused:
        warnings.warn(
            f"set_program_state: {unused} are not persistables of the program", stacklevel=2
        )


def load(program: Any, model_path: str, executor: Any = None, var_list: list | None = None) -> None:
    """Load what :func:`save` wrote (or a directory of per-variable files) into ``program``'s persistables."""
    program = static_io._program(program, "fluid.load")
    base = _base(model_path, "fluid.load")
    if has_checkpoint(base):
        params, opt = read_states(base, "fluid.load")
        if params is None:
            raise MissingVariableError(f"fluid.load: '{base}.pdparams' not found")
        opt = opt or {}
        scope = varstore.current_scope()
        for v in program.list_vars():
            if not static_io.is_persistable(v):
                continue
            src = params if static_io.is_parameter(v) else opt
            if v.name not in src:
                where = base + (".pdparams" if src is params else ".pdopt")
                raise MissingVariableError(f"fluid.load: variable '{v.name}' is not in '{where}'")
            varstore._expect(v, src[v.name], base)
            varstore.store(scope, v.name, src[v.name], [])
        return
    if os.path.isdir(model_path):
        vars_ = (
            var_list
            if var_list is not None
            else [v for v in program.list_vars() if static_io.is_persistable(v)]
        )
        static_io.load_vars(executor, model_path, program, vars=vars_)
        return
    if var_list is None and not os.path.exists(model_path):
        raise MissingVariableError(f"fluid.load: '{base}.pdparams' not found")
    raise MismatchError(
        f"fluid.load: '{model_path}' is neither a fluid.save prefix nor a directory"
    )

"""``save_inference_model`` / ``load_inference_model``: a pruned, test-mode program plus its parameters.

The saved program keeps only the ops needed to compute the targets from the
feeds (``clone(for_test=True)`` then ``prune_to_targets``): no backward,
optimizer, label or loss ops, and ``is_test`` set. Loading it into a fresh
Scope (under ``scope_guard``) and running it needs nothing but the feeds.
"""

from __future__ import annotations

import os
from typing import Any

from oar_io import snapshot, static_io, varstore
from oar_io.atomic import DirTransaction
from oar_io.errors import CorruptFileError, MissingVariableError
from oar_io.formats import get_format, sniff
from oar_io.paths import check_relname

MODEL_FILENAME = "__model__"


def _check_names(feeded_var_names: Any) -> list:
    if isinstance(feeded_var_names, str):
        return [feeded_var_names]
    if not isinstance(feeded_var_names, (list, tuple)) or not all(
        isinstance(n, str) for n in feeded_var_names
    ):
        raise TypeError(
            f"save_inference_model: feeded_var_names must be a str or a list of str, given "
            f"{feeded_var_names!r}"
        )
    return list(feeded_var_names)


def _check_targets(target_vars: Any) -> list:
    from oar.api import Variable

    targets = target_vars if isinstance(target_vars, (list, tuple)) else [target_vars]
    for t in targets:
        if not isinstance(t, Variable):
            raise TypeError(
                f"save_inference_model: target_vars must be Variables (or a list of them), given "
                f"{type(t).__name__} {t!r}"
            )
    return list(targets)


def prune_for_inference(program: Any, feeds: list, targets: list) -> Any:
    """Test-mode copy of ``program`` holding only what ``targets`` need from ``feeds``."""
    from oar.api import prune_to_targets

    block = program.global_block()
    for name in feeds:
        if not block.has_var(name):
            raise ValueError(f"save_inference_model: feed variable '{name}' is not in the program")
    for t in targets:
        if block._find_var_recursive(t.name) is None:
            raise ValueError(
                f"save_inference_model: target variable '{t.name}' is not in the program"
            )
    pruned = prune_to_targets(program.clone(for_test=True), [t.name for t in targets], feeds)
    used = {n for op in pruned.global_block().ops for n in op.input_arg_names}
    unused = [n for n in feeds if n not in used and n not in {t.name for t in targets}]
    if unused and pruned.global_block().ops:
        import warnings

        warnings.warn(
            f"save_inference_model: feed variable(s) {unused} are not needed to compute the "
            f"targets",
            stacklevel=3,
        )
    return pruned


def save_inference_model(
    dirname: str,
    feeded_var_names: Any,
    target_vars: Any,
    executor: Any,
    main_program: Any = None,
    model_filename: str | None = None,
    params_filename: str | None = None,
    export_for_deployment: bool = True,
    program_only: bool = False,
    *,
    format: str | None = None,
    program_format: str | None = None,
) -> list:
    """Save the pruned inference program and its persistables into ``dirname``; returns the target names."""
    feeds = _check_names(feeded_var_names)
    targets = _check_targets(target_vars)
    program = static_io._program(main_program, "save_inference_model")
    if export_for_deployment:
        pruned = prune_for_inference(program, feeds, targets)
    else:
        pruned = program.clone()
    fetch_names = [t.name for t in targets]
    pfmt = get_format(program_format, "program")
    model = pfmt.dumps(pruned, feeds, fetch_names)
    model_file = model_filename or MODEL_FILENAME
    check_relname(model_file, "save_inference_model: model_filename", dirname)
    if program_only:
        with DirTransaction(dirname) as tx, tx.open(model_file) as f:
            f.write(model)
        return fetch_names
    scope = varstore.current_scope()
    params = [v for v in pruned.list_vars() if static_io.is_persistable(v)]
    items = [(v.name, *varstore.value_of(scope, v.name)) for v in params]
    varstore.write_vars(
        dirname,
        items,
        params_filename,
        format,
        extra={model_file: model},
        fn="save_inference_model",
    )
    return fetch_names


def read_model(dirname: str, model_filename: str | None = None) -> tuple:
    """``(program, feed names, fetch names)`` from a model file of any registered program format."""
    if not os.path.isdir(dirname):
        path = os.path.join(dirname, model_filename or MODEL_FILENAME)
        raise MissingVariableError(
            f"load_inference_model: model file '{path}' not found (the directory '{dirname}' "
            f"does not exist)"
        )
    return snapshot.read_dir(dirname, lambda snap: _read_model(snap, model_filename))


MAX_MODEL_BYTES = 1 << 31


def _read_model(snap: Any, model_filename: str | None) -> tuple:
    rel = model_filename or MODEL_FILENAME
    path = os.path.join(snap.dirname, rel)
    try:
        f = snap.open(rel, "load_inference_model: model_filename")
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        raise MissingVariableError(f"load_inference_model: model file '{path}' not found") from None
    with f:
        data = f.read(MAX_MODEL_BYTES + 1)
    if len(data) > MAX_MODEL_BYTES:
        raise CorruptFileError(f"model file '{path}' is larger than {MAX_MODEL_BYTES} bytes")
    fmt = sniff(data[:64], path, "program")
    out = fmt.loads(data, path)
    snap.check(rel)
    return out


def _load_snapshot(snap: Any, model_filename: str | None, params_filename: str | None) -> tuple:
    """Model and parameters from one snapshot of the directory (never two different saves)."""
    program, feeds, fetches = _read_model(snap, model_filename)
    path = os.path.join(snap.dirname, model_filename or MODEL_FILENAME)
    params = [v for v in program.list_vars() if static_io.is_persistable(v)]
    what = f"model file '{path}' names persistable variable"
    for v in params:  # a crafted model must not make the load open a file outside dirname
        check_relname(v.name, what, snap.dirname)
    block = program.global_block()
    for n in list(feeds) + list(fetches):
        if block._find_var_recursive(n) is None:
            raise CorruptFileError(
                f"model file '{path}': feed/fetch target {n[:200]!r} is not a variable of the "
                f"program"
            )
    values = varstore.read_snapshot(snap, params, params_filename, what)
    return program, feeds, fetches, values


def _paddle_layout(dirname: str, model_filename: str | None, params_filename: str | None) -> tuple:
    """Accept Paddle 2.x/3.x ``path_prefix`` (``prefix.pdmodel`` + ``prefix.pdiparams``) as well."""
    if model_filename is not None or os.path.isfile(os.path.join(dirname, MODEL_FILENAME)):
        return dirname, model_filename, params_filename
    prefix = dirname
    if os.path.isdir(dirname):
        models = [e for e in os.listdir(dirname) if e.endswith(".pdmodel")]
        if len(models) != 1:
            return dirname, model_filename, params_filename
        prefix = os.path.join(dirname, models[0][: -len(".pdmodel")])
    elif prefix.endswith(".pdmodel"):
        prefix = prefix[: -len(".pdmodel")]
    if not os.path.isfile(prefix + ".pdmodel"):
        return dirname, model_filename, params_filename
    params = os.path.basename(prefix) + ".pdiparams"
    parent = os.path.dirname(prefix) or "."
    has_params = os.path.isfile(os.path.join(parent, params))
    return (
        parent,
        os.path.basename(prefix) + ".pdmodel",
        params_filename or (params if has_params else None),
    )


def load_inference_model(
    dirname: str,
    executor: Any,
    model_filename: str | None = None,
    params_filename: str | None = None,
    pserver_endpoints: Any = None,
) -> list:
    """Load a model saved by ``save_inference_model`` (oar, Fluid 1.x or Paddle ``.pdmodel``).

    Returns ``[program, feed_target_names, fetch_targets]``; the parameters go
    into the current global scope.
    """
    if dirname is None:
        raise ValueError("load_inference_model: dirname must be a directory path, given None")
    dirname, model_filename, params_filename = _paddle_layout(
        dirname, model_filename, params_filename
    )
    if not os.path.isdir(dirname):
        read_model(dirname, model_filename)  # raises the "not found" error
    program, feeds, fetches, values = snapshot.read_dir(
        dirname, lambda snap: _load_snapshot(snap, model_filename, params_filename)
    )
    scope = varstore.current_scope()
    for name, (array, lod) in values.items():
        varstore.store(scope, name, array, lod)
    block = program.global_block()
    fetch_targets = [block.var(n) for n in fetches]
    return [program, feeds, fetch_targets]

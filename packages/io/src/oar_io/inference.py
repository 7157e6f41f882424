"""``save_inference_model`` / ``load_inference_model``: a pruned, test-mode program plus its parameters.

The saved program keeps only the ops needed to compute the targets from the
feeds (``clone(for_test=True)`` then ``prune_to_targets``): no backward,
optimizer, label or loss ops, and ``is_test`` set. Loading it into a fresh
Scope (under ``scope_guard``) and running it needs nothing but the feeds.
"""

from __future__ import annotations

import os
from typing import Any

from oar_io import static_io, varstore
from oar_io.atomic import DirTransaction
from oar_io.errors import MissingVariableError
from oar_io.formats import get_format, sniff

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
    if program_only:
        with DirTransaction(dirname) as tx, tx.open(model_file) as f:
            f.write(model)
        return fetch_names
    scope = varstore.current_scope()
    params = [v for v in pruned.list_vars() if static_io.is_persistable(v)]
    items = [(v.name, *varstore.value_of(scope, v.name)) for v in params]
    varstore.write_vars(dirname, items, params_filename, format, extra={model_file: model})
    return fetch_names


def read_model(dirname: str, model_filename: str | None = None) -> tuple:
    """``(program, feed names, fetch names)`` from a model file of any registered program format."""
    path = os.path.join(dirname, model_filename or MODEL_FILENAME)
    if not os.path.isfile(path):
        where = "" if os.path.isdir(dirname) else f" (the directory '{dirname}' does not exist)"
        raise MissingVariableError(f"load_inference_model: model file '{path}' not found{where}")
    with open(path, "rb") as f:
        data = f.read()
    fmt = sniff(data[:64], path, "program")
    return fmt.loads(data, path)


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
    program, feeds, fetches = read_model(dirname, model_filename)
    params = [v for v in program.list_vars() if static_io.is_persistable(v)]
    values = varstore.read_vars(dirname, params, params_filename)
    scope = varstore.current_scope()
    for name, (array, lod) in values.items():
        varstore.store(scope, name, array, lod)
    block = program.global_block()
    fetch_targets = [block.var(n) for n in fetches]
    return [program, feeds, fetch_targets]

"""``fluid.io.save_vars`` / ``load_vars`` and the params / persistables variants (Fluid 1.8 signatures).

Values come from, and go to, the current global scope (``fluid.global_scope()``,
which ``scope_guard`` switches), as Fluid's save/load ops do when the executor
runs them. Every save is atomic (see :mod:`oar_io.atomic`); every load checks
dtype and shape against the program's variables.

Run the startup program *before* loading: running it afterwards overwrites
the loaded values with fresh initial ones, exactly as the Fluid guide warns.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from oar_io import varstore

_NOT_SAVED_TYPES = ("feed_minibatch", "fetch_list", "reader", "raw")


def _program(main_program: Any, fn: str) -> Any:
    from oar.api import Program, default_main_program

    if main_program is None:
        return default_main_program()
    if not isinstance(main_program, Program):
        inner = getattr(main_program, "_program", None)
        kind = type(main_program).__name__
        if inner is not None:
            raise TypeError(
                f"{fn}: main_program is a {kind}; save/load work on the fluid.Program it was "
                f"compiled from (pass that program instead)"
            )
        raise TypeError(f"{fn}: main_program must be a fluid.Program or None, given {kind}")
    return main_program


def is_parameter(var: Any) -> bool:
    """Fluid's ``io.is_parameter``: a :class:`Parameter`."""
    from oar.api import Parameter

    return isinstance(var, Parameter)


def is_persistable(var: Any) -> bool:
    """Fluid's ``io.is_persistable``: persistable, and not a feed/fetch/reader holder."""
    return bool(var.persistable) and var.type not in _NOT_SAVED_TYPES


def get_program_parameter(program: Any) -> list:
    """The program's parameters (Fluid's ``io.get_program_parameter``)."""
    return [v for v in program.list_vars() if is_parameter(v)]


def get_program_persistable_vars(program: Any) -> list:
    """The program's persistable variables (Fluid's ``io.get_program_persistable_vars``)."""
    return [v for v in program.list_vars() if is_persistable(v)]


def _select(program: Any, vars: Any, predicate: Callable | None, fn: str) -> list:
    if vars is not None:
        if not isinstance(vars, (list, tuple)):
            vars = [vars]
        out = []
        for v in vars:
            if isinstance(v, str):
                v = program.global_block()._find_var_recursive(v) or v
            out.append(v)
        return out
    return [
        v
        for v in program.list_vars()
        if (predicate(v) if predicate else True)
        and getattr(v, "type", None) not in _NOT_SAVED_TYPES
    ]


def _name(v: Any) -> str:
    return v if isinstance(v, str) else v.name


def save_vars(
    executor: Any,
    dirname: str,
    main_program: Any = None,
    vars: Any = None,
    predicate: Callable | None = None,
    filename: str | None = None,
    *,
    format: str | None = None,
) -> None:
    """Save ``vars`` (or the program's variables that ``predicate`` accepts) into ``dirname``.

    One file per variable, named after it, or all in ``dirname/filename``.
    ``format`` names a registered tensor format (default ``oar``; ``fluid``
    writes PaddlePaddle-compatible files).
    """
    if dirname is None:
        raise ValueError("save_vars: dirname must be a directory path, given None")
    program = _program(main_program, "save_vars")
    selected = _select(program, vars, predicate, "save_vars")
    scope = varstore.current_scope()
    items = [(_name(v), *varstore.value_of(scope, _name(v))) for v in selected]
    varstore.write_vars(dirname, items, filename, format)


def load_vars(
    executor: Any,
    dirname: str,
    main_program: Any = None,
    vars: Any = None,
    predicate: Callable | None = None,
    filename: str | None = None,
) -> None:
    """Load ``vars`` (or the program's variables that ``predicate`` accepts) from ``dirname``.

    The file format is recognised from each file's first bytes. A missing
    file, a damaged file, or a dtype/shape that differs from the program's
    variable raises a :class:`~oar_io.errors.CheckpointError` naming both.
    """
    if dirname is None:
        raise ValueError("load_vars: dirname must be a directory path, given None")
    program = _program(main_program, "load_vars")
    selected = _select(program, vars, predicate, "load_vars")
    values = varstore.read_vars(dirname, selected, filename)
    scope = varstore.current_scope()
    for name, (array, lod) in values.items():
        varstore.store(scope, name, array, lod)


def save_params(
    executor: Any,
    dirname: str,
    main_program: Any = None,
    filename: str | None = None,
    *,
    format: str | None = None,
) -> None:
    """Save every parameter of ``main_program`` (enough to predict, not to resume training)."""
    save_vars(
        executor,
        dirname,
        _program(main_program, "save_params"),
        predicate=is_parameter,
        filename=filename,
        format=format,
    )


def load_params(
    executor: Any, dirname: str, main_program: Any = None, filename: str | None = None
) -> None:
    """Load every parameter of ``main_program``; run the startup program first, not after."""
    load_vars(
        executor,
        dirname,
        _program(main_program, "load_params"),
        predicate=is_parameter,
        filename=filename,
    )


def save_persistables(
    executor: Any,
    dirname: str,
    main_program: Any = None,
    filename: str | None = None,
    *,
    format: str | None = None,
) -> None:
    """Save every persistable variable (parameters, optimizer accumulators, learning rate): a checkpoint.

    A program that says how it is checkpointed (``program._oar_save_persistables``: a trainer
    program of a parameter-server job, whose pservers hold part of the state) is saved that way.
    """
    program = _program(main_program, "save_persistables")
    custom = getattr(program, "_oar_save_persistables", None)
    if custom is not None:
        kw = {} if format is None else {"format": format}
        custom(executor, dirname, filename=filename, **kw)
        return
    save_vars(
        executor,
        dirname,
        program,
        predicate=is_persistable,
        filename=filename,
        format=format,
    )


def load_persistables(
    executor: Any, dirname: str, main_program: Any = None, filename: str | None = None
) -> None:
    """Load every persistable variable to resume training; run the startup program first."""
    load_vars(
        executor,
        dirname,
        _program(main_program, "load_persistables"),
        predicate=is_persistable,
        filename=filename,
    )

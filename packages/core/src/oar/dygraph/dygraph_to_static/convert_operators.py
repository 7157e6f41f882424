"""Runtime helpers the converted code calls (``_jst.<name>`` in ``get_code`` output).

Each helper looks at its operands when the converted function runs: a static
``Variable`` (a tensor whose value is known only when the program runs) turns
the construct into graph ops (``layers.cond``, ``layers.while_loop``,
``logical_and``...); a Python value keeps plain Python semantics.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from oar.dygraph.dygraph_to_static.tensor_list import (
    is_tensor_array,
    is_tensor_list,
    to_tensor_array,
)
from oar.errors import ArgumentError
from oar.framework.variable import Variable

__all__ = [
    "UNDEFINED",
    "get_args",
    "convert_ifelse",
    "convert_ifexp",
    "convert_while_loop",
    "convert_logical_and",
    "convert_logical_or",
    "convert_logical_not",
    "convert_print",
    "convert_len",
    "convert_index",
    "convert_iter_seq",
    "range_args",
    "for_cond",
]


class _Undefined:
    """The value of a local that has no value yet (assigned later, or in one branch only)."""

    _instance: _Undefined | None = None

    def __new__(cls) -> _Undefined:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return (
            "<undefined: a variable assigned in only one branch of a tensor-dependent `if`, "
            "or not yet assigned>"
        )

    def __bool__(self) -> bool:
        raise ArgumentError(
            "declarative", "a variable assigned in only one branch of a tensor `if` has no value"
        )


UNDEFINED = _Undefined()


def is_tensor(x: Any) -> bool:
    return isinstance(x, Variable)


def get_args(local_vars: dict, names: tuple) -> tuple:
    """The current values of ``names`` (UNDEFINED for a local not assigned yet)."""
    return tuple(local_vars.get(n, UNDEFINED) for n in names)


def _is_number(x: Any) -> bool:
    return isinstance(x, (bool, int, float, np.bool_, np.integer, np.floating))


def to_tensor(x: Any) -> Any:
    """A Python number as a one-element constant tensor (bool, int64 or float32)."""
    from oar import layers

    if isinstance(x, (bool, np.bool_)):
        return layers.fill_constant([1], "bool", bool(x))
    if isinstance(x, (int, np.integer)):
        return layers.fill_constant([1], "int64", int(x))
    return layers.fill_constant([1], "float32", float(x))


# --- if / else ----------------------------------------------------------------------------------
def convert_ifelse(pred: Any, true_fn: Any, false_fn: Any, args: tuple, names: tuple) -> tuple:
    """``if pred``: Python branches for a Python ``pred``, ``layers.cond`` for a tensor."""
    if not is_tensor(pred):
        return true_fn(*args) if pred else false_fn(*args)
    return _tensor_branches(pred, true_fn, false_fn, args, names)


def convert_ifexp(pred: Any, true_fn: Any, false_fn: Any) -> Any:
    """``a if pred else b``."""
    if not is_tensor(pred):
        return true_fn() if pred else false_fn()
    return _tensor_branches(pred, lambda: (true_fn(),), lambda: (false_fn(),), (), ("<expr>",))[0]


def _tensor_branches(pred: Any, true_fn: Any, false_fn: Any, args: tuple, names: tuple) -> tuple:
    from oar import layers

    args = tuple(to_tensor(a) if _is_number(a) else a for a in args)
    seen: dict = {}

    def branch(fn: Any, key: str) -> Any:
        def run() -> Any:
            outs = tuple(fn(*args))
            seen[key] = outs
            tensors = []
            for value in outs:
                if _is_number(value):
                    value = to_tensor(value)
                if is_tensor(value) or _is_tensor_tuple(value):
                    tensors.append(value)
            return tensors or None

        return run

    res = layers.cond(pred, branch(true_fn, "t"), branch(false_fn, "f"))
    res = list(res) if isinstance(res, (list, tuple)) else ([] if res is None else [res])
    return _merge(names, seen["t"], seen["f"], res)


def _is_tensor_tuple(v: Any) -> bool:
    return isinstance(v, (tuple, list)) and len(v) > 0 and all(is_tensor(x) for x in v)


def _merge(names: tuple, t_outs: tuple, f_outs: tuple, res: list) -> tuple:
    """Put the cond results back among the values that did not go through the cond."""
    out = []
    it = iter(res)
    for name, tv, fv in zip(names, t_outs, f_outs):
        t_t = is_tensor(tv) or _is_number(tv) or _is_tensor_tuple(tv)
        f_t = is_tensor(fv) or _is_number(fv) or _is_tensor_tuple(fv)
        if t_t != f_t:
            if tv is UNDEFINED or fv is UNDEFINED:
                if t_t:
                    next(it)
                out.append(UNDEFINED)
                continue
            raise ArgumentError(
                "declarative",
                f"variable '{name}' is a tensor in one branch of a tensor-dependent `if` and "
                f"{type(fv if t_t else tv).__name__} in the other; give it the same kind of value "
                f"in both branches",
            )
        if t_t:
            out.append(next(it))
        elif tv is fv:
            out.append(tv)
        else:
            raise ArgumentError(
                "declarative",
                f"variable '{name}' holds a Python {type(tv).__name__} that the branches of a "
                f"tensor-dependent `if` set differently; only tensors and numbers can differ "
                f"between branches",
            )
    return tuple(out)


# --- while --------------------------------------------------------------------------------------
def convert_while_loop(cond_fn: Any, body_fn: Any, loop_vars: tuple, names: tuple) -> tuple:
    """``while cond``: a Python loop while the condition is a Python value, ``layers.while_loop``
    from the first iteration whose condition is a tensor."""
    loop_vars = tuple(loop_vars)
    pred = cond_fn(*loop_vars)
    while not is_tensor(pred):
        if not pred:
            return loop_vars
        loop_vars = tuple(body_fn(*loop_vars))
        pred = cond_fn(*loop_vars)
    return _tensor_loop(cond_fn, body_fn, loop_vars, names)


def _tensor_loop(cond_fn: Any, body_fn: Any, loop_vars: tuple, names: tuple) -> tuple:
    from oar import layers

    kinds = []
    init = []
    for name, v in zip(names, loop_vars):
        if _is_number(v):
            v = to_tensor(v)
        if is_tensor_list(v):
            v = to_tensor_array(v)
        if is_tensor(v):
            if getattr(v, "is_data", False):
                v = layers.assign(v)  # a loop over a fed variable works on a copy
            kinds.append(True)
            init.append(v)
        elif v is UNDEFINED:
            raise ArgumentError(
                "declarative",
                f"variable '{name}' is first assigned inside a loop whose condition is a tensor; "
                f"give it a value before the loop",
            )
        else:
            kinds.append(False)

    def full(tensors: tuple) -> list:
        it = iter(tensors)
        return [next(it) if k else v for k, v in zip(kinds, loop_vars)]

    def cond(*tensors: Any) -> Any:
        return cond_fn(*full(tensors))

    def body(*tensors: Any) -> list:
        outs = tuple(body_fn(*full(tensors)))
        res: list = []
        for name, k, old, new in zip(names, kinds, loop_vars, outs):
            if k:
                new = to_tensor(new) if _is_number(new) else new
                if not is_tensor_array(new) and any(
                    new is t for j, t in enumerate(tensors) if j != len(res)
                ):
                    new = layers.assign(new)  # loop vars are written back in place: no aliasing
                res.append(new)
            elif new is not old:
                raise ArgumentError(
                    "declarative",
                    f"variable '{name}' ({type(old).__name__}) is changed inside a loop whose "
                    f"condition is a tensor; only tensors and numbers can change in such a loop",
                )
        return res

    res = layers.while_loop(cond, body, init)
    res = list(res) if isinstance(res, (list, tuple)) else [res]
    return tuple(full(tuple(res)))


# --- for ----------------------------------------------------------------------------------------
def range_args(*args: Any) -> tuple:
    """``range(...)``'s (start, stop, step), each a Python int or a tensor."""
    if len(args) == 1:
        return 0, args[0], 1
    if len(args) == 2:
        return args[0], args[1], 1
    if len(args) == 3:
        return args
    raise ArgumentError("range", f"range expected 1 to 3 arguments, given {len(args)}")


def for_cond(i: Any, end: Any, step: Any) -> Any:
    if not is_tensor(step) and step < 0:
        return i > end
    return i < end


def convert_iter_seq(seq: Any) -> Any:
    """What ``for x in seq`` walks: a tensor as is (its rows), anything else as a list."""
    if is_tensor(seq) or isinstance(seq, (list, tuple, range)):
        return seq
    return list(seq)


def convert_len(x: Any) -> Any:
    if is_tensor_array(x):
        from oar import layers

        return layers.array_length(x)
    if is_tensor(x):
        if x.shape and int(x.shape[0]) >= 0:
            return int(x.shape[0])
        from oar import layers

        return layers.slice(layers.shape(x), axes=[0], starts=[0], ends=[1])
    return len(x)


def convert_index(seq: Any, i: Any) -> Any:
    if is_tensor(seq):
        from oar import layers

        if is_tensor(i):
            return layers.squeeze(layers.gather(seq, layers.cast(i, "int64")), [0])
        return layers.squeeze(layers.slice(seq, axes=[0], starts=[i], ends=[i + 1]), [0])
    if is_tensor(i):
        raise ArgumentError(
            "declarative",
            f"cannot index a Python {type(seq).__name__} with a tensor inside a tensor-dependent loop",
        )
    return seq[i]


# --- and / or / not, print ----------------------------------------------------------------------
def convert_logical_and(lhs: Any, rhs: Any) -> Any:
    """``lhs() and rhs()``: short-circuit on a Python ``lhs``, ``logical_and`` on tensors."""
    return _logical("logical_and", lhs, rhs)


def convert_logical_or(lhs: Any, rhs: Any) -> Any:
    """``lhs() or rhs()``: short-circuit on a Python ``lhs``, ``logical_or`` on tensors."""
    return _logical("logical_or", lhs, rhs)


def _logical(op: str, lhs: Any, rhs: Any) -> Any:
    a = lhs()
    if not is_tensor(a):
        if op == "logical_and":
            return a and rhs()
        return a or rhs()
    b = rhs()
    from oar import layers

    return getattr(layers, op)(a, b if is_tensor(b) else to_tensor(bool(b)))


def convert_logical_not(x: Any) -> Any:
    if is_tensor(x):
        from oar import layers

        return layers.logical_not(x)
    return not x


def convert_print(*args: Any, **kwargs: Any) -> None:
    """``print``: tensors print when the program runs (``layers.Print``), the rest now."""
    from oar import layers

    rest = [a for a in args if not is_tensor(a)]
    if rest or not args:
        print(*rest, **kwargs)
    for a in args:
        if is_tensor(a):
            layers.Print(a)

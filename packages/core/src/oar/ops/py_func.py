"""``py_func``: a Python function as an op (forward, and optionally backward).

The callables live in a process-wide table; the op stores their ids
(``forward_callable_id``, ``backward_callable_id``) as Fluid does. The backward op is
another ``py_func`` calling ``backward_func(*x, *out, *dout)`` (minus the variables in
``backward_skip_vars``) that returns one gradient per input.
"""

from __future__ import annotations

from collections.abc import Callable

from oar.registry import Attr, GradOpDesc, OpDef

_CALLABLES: list = []


def register_py_func(fn: Callable) -> int:
    """Keep ``fn`` and return its id (an index into the table)."""
    _CALLABLES.append(fn)
    return len(_CALLABLES) - 1


def py_func_callable(callable_id: int) -> Callable:
    """The function a ``py_func`` op's id refers to."""
    try:
        return _CALLABLES[callable_id]
    except (IndexError, TypeError):
        raise KeyError(f"py_func: no registered function with id {callable_id!r}") from None


def _grad(g) -> list:
    bid = g.attrs["backward_callable_id"]
    if bid < 0:
        return []
    skip = set(g.attrs["backward_skip_vars"])
    ins = [n for n in g.input("X") if n not in skip]
    ins += [n for n in g.output("Out") if n not in skip]
    ins += g.output_grad("Out")
    attrs = {"forward_callable_id": bid, "backward_callable_id": -1, "backward_skip_vars": []}
    return [GradOpDesc("py_func", {"X": ins}, {"Out": g.input_grad("X")}, attrs)]


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "py_func",
            ["X*?"],
            ["Out*?"],
            {
                "forward_callable_id": Attr(int, -1),
                "backward_callable_id": Attr(int, -1),
                "backward_skip_vars": Attr(list, []),
            },
            grad=_grad,
            doc="runs a registered Python function on the inputs' arrays",
        )
    )

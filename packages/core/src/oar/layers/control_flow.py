"""Control flow over sub-blocks: ``While``, ``while_loop``, ``cond``, ``case``, ``switch_case``,
``Switch``, ``is_empty``.

A body is built into a new block of the program (``Program._create_block``);
on leaving it, one ``while`` / ``conditional_block`` op is appended to the
enclosing block, listing the enclosing variables the body reads (``X`` /
``Input``) and writes (``Out``). The executor runs the body's plan (compiled
once) on each pass. In dygraph mode ``while_loop``, ``cond``, ``case`` and
``switch_case`` run the Python callables eagerly, as Fluid 1.8 does.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from oar.errors import ArgumentError, ArgumentTypeError, user_site
from oar.framework.dtypes import VarType
from oar.framework.mode import current_builder
from oar.framework.program import default_main_program
from oar.framework.variable import Variable
from oar.layer_helper import LayerHelper, check_variable, is_variable

# Fluid's layers/control_flow.py also holds these (``fluid.layers.control_flow.less_than``)
_FLUID_ALSO = frozenset(
    "DynamicRNN IfElse Print StaticRNN reorder_lod_tensor_by_rank array_length array_read array_write create_array equal greater_equal "
    "greater_than "
    "increment less_equal less_than not_equal".split()
)


_RANK = frozenset(
    "lod_rank_table max_sequence_len lod_tensor_to_array array_to_lod_tensor shrink_memory".split()
)


def __getattr__(name: str) -> Any:
    if name in _FLUID_ALSO:
        import oar.layers

        return getattr(oar.layers, name)
    if name in _RANK:
        import oar.layers.lod_rank

        return getattr(oar.layers.lod_rank, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "While",
    "while_loop",
    "cond",
    "case",
    "switch_case",
    "Switch",
    "is_empty",
]


def _eager() -> bool:
    """Dygraph: control flow runs as Python control flow (Fluid 1.8's eager behaviour)."""
    return current_builder().eager


# --- blocks ---------------------------------------------------------------------------------------
def block_io(block: Any) -> tuple:
    """(reads, writes): the enclosing blocks' variables the ops of ``block`` read and write."""
    reads: dict = {}
    writes: dict = {}
    for op in block.ops:
        for n in op.input_arg_names:
            if n not in block.vars and block._find_var_recursive(n) is not None:
                reads.setdefault(n, None)
        for n in op.output_arg_names:
            if n not in block.vars and block._find_var_recursive(n) is not None:
                writes.setdefault(n, None)
    return list(reads), list(writes)


@contextlib.contextmanager
def sub_block(program: Any | None = None) -> Iterator[Any]:
    """Build ops into a new child block of the current block; back to the parent afterwards."""
    program = program if program is not None else default_main_program()
    blk = program._create_block()
    try:
        yield blk
    finally:
        program._rollback()


@contextlib.contextmanager
def in_parent_block(program: Any) -> Iterator[None]:
    """Append to the enclosing block for a while (e.g. a loop's initial values)."""
    cur = program.current_block_idx
    program.current_block_idx = program.current_block().parent_idx
    try:
        yield
    finally:
        program.current_block_idx = cur


def check_bool_scalar(layer: str, arg: str, value: Any) -> None:
    """A loop or branch condition must be a bool Variable holding one element."""
    if not isinstance(value, Variable):
        raise ArgumentTypeError(
            layer,
            f"'{arg}' must be a bool Variable of shape [1], given {type(value).__name__}",
            callsite=user_site(),
        )
    shape = list(value.shape or ())
    if value.dtype != "bool" or any(d > 1 for d in shape):
        raise ArgumentTypeError(
            layer,
            f"'{arg}' must be a bool Variable holding one element (shape [1]), given "
            f"'{value.name}' of dtype {value.dtype} and shape {shape}",
            variable=value.name,
            callsite=user_site(),
        )


def _append_block_op(program: Any, blk: Any, op_type: str, inputs: dict, scopes_slot: str, attrs):
    """Append ``op_type`` for sub-block ``blk`` to the current (enclosing) block."""
    reads, writes = block_io(blk)
    parent = program.current_block()
    helper = LayerHelper(op_type)
    scopes = parent.create_var(
        name=helper.name + ".scopes", type=VarType.STEP_SCOPES, stop_gradient=True
    )
    slot = "X" if op_type == "while" else "Input"
    ins = dict(inputs)
    ins[slot] = [parent._var_recursive(n) for n in reads]
    outs = {"Out": [parent._var_recursive(n) for n in writes], scopes_slot: [scopes]}
    return parent.append_op(op_type, ins, outs, {"sub_block": blk.idx, **attrs})


# --- While ----------------------------------------------------------------------------------------
class While:
    """Run the ops built inside ``with loop.block():`` while ``cond`` holds.

    ``cond`` is a bool Variable of shape [1]; the body must update it (e.g.
    ``fluid.layers.less_than(i, n, cond=cond)``).
    """

    BEFORE_WHILE_BLOCK, IN_WHILE_BLOCK, AFTER_WHILE_BLOCK = 0, 1, 2

    def __init__(self, cond: Any, is_test: bool = False, name: str | None = None) -> None:
        if _eager():
            raise ArgumentError(
                "While",
                "While builds a static loop; in dygraph mode use a Python while loop "
                "(or fluid.layers.while_loop)",
                callsite=user_site(),
            )
        check_bool_scalar("While", "cond", cond)
        self.cond_var = cond
        self.is_test = bool(is_test)
        self.name = name
        self.status = While.BEFORE_WHILE_BLOCK

    @contextlib.contextmanager
    def block(self) -> Iterator[None]:
        if self.status != While.BEFORE_WHILE_BLOCK:
            raise ArgumentError("While", "block() can be entered only once", callsite=user_site())
        program = self.cond_var.block.program
        self.status = While.IN_WHILE_BLOCK
        with sub_block(program) as blk:
            yield
        self.status = While.AFTER_WHILE_BLOCK
        _append_block_op(
            program,
            blk,
            "while",
            {"Condition": [self.cond_var]},
            "StepScopes",
            {"is_test": self.is_test},
        )


def _flatten(x: Any) -> list:
    if isinstance(x, (list, tuple)):
        return [y for item in x for y in _flatten(item)]
    return [x]


def _structure(x: Any) -> Any:
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, tuple(_structure(y) for y in x))
    return "tensor" if is_variable(x) else type(x).__name__


def _pack(structure_like: Any, flat: list) -> Any:
    it = iter(flat)

    def build(s: Any) -> Any:
        if isinstance(s, (list, tuple)):
            return type(s)(build(y) for y in s)
        return next(it)

    return build(structure_like)


def _differentiable_start(v: Any) -> Any:
    """A float loop variable that stops gradients (a data variable, a constant) starts from
    a copy that does not: the loop writes into the copy, so gradients reach what the body
    computes from parameters (the original keeps its value)."""
    from oar.layers.tensor import assign

    if (
        isinstance(v, Variable)
        and v.stop_gradient
        and v.type != VarType.LOD_TENSOR_ARRAY
        and v.dtype in ("float16", "float32", "float64")
    ):
        return assign(v)
    return v


def while_loop(
    cond: Callable, body: Callable, loop_vars: Any, is_test: bool = False, name: Any = None
) -> Any:
    """``while cond(*loop_vars): loop_vars = body(*loop_vars)``; returns the final loop_vars.

    In static graph the loop writes into the loop variables, except that a float one which
    stops gradients (a data variable, a constant) is first copied, so that gradients reach the
    body's parameters; use the returned variables."""
    if not callable(cond) or not callable(body):
        raise ArgumentTypeError(
            "while_loop",
            f"cond and body must be callable, given {type(cond).__name__} and {type(body).__name__}",
        )
    if not isinstance(loop_vars, (list, tuple)) or not loop_vars:
        raise ArgumentTypeError(
            "while_loop", f"loop_vars must be a non-empty list or tuple, given {loop_vars!r}"
        )
    if _eager():
        now = cond(*loop_vars)
        while bool(now.numpy().reshape(-1)[0]):
            out = body(*loop_vars)
            loop_vars = list(out) if isinstance(out, (list, tuple)) else [out]
            now = cond(*loop_vars)
        return loop_vars
    from oar.layers.tensor import assign

    pre_cond = cond(*loop_vars)
    check_bool_scalar("while_loop", "the result of cond", pre_cond)
    loop_vars = _pack(loop_vars, [_differentiable_start(v) for v in _flatten(loop_vars)])
    loop = While(pre_cond, is_test, name)
    flat_vars = _flatten(loop_vars)
    with loop.block():
        out = body(*loop_vars)
        out = list(out) if isinstance(out, (list, tuple)) else [out]
        if len(out) != len(loop_vars) or _structure(out) != _structure(list(loop_vars)):
            raise ArgumentError(
                "while_loop",
                f"body returns {len(out)} values of structure {_structure(out)}, but loop_vars has "
                f"{len(loop_vars)} of structure {_structure(list(loop_vars))}",
                callsite=user_site(),
            )
        for new, old in zip(_flatten(out), flat_vars):
            if new is not old:
                assign(new, old)
        now = cond(*loop_vars)
        check_bool_scalar("while_loop", "the result of cond", now)
        assign(now, pre_cond)
    return list(loop_vars) if isinstance(loop_vars, tuple) else loop_vars


# --- conditionals ---------------------------------------------------------------------------------
def _branch(program: Any, conds: list, fn: Callable, scalar: bool, outs: list | None) -> Any:
    """Build ``fn()`` into a conditional block; its results are copied to ``outs`` (variables of
    the enclosing block, created from the first branch's results when None)."""
    from oar.layers.tensor import assign

    with sub_block(program) as blk:
        result = fn()
        flat = [] if result is None else _flatten(result)
        for i, v in enumerate(flat):
            if not is_variable(v):
                raise ArgumentTypeError(
                    "cond",
                    f"a branch must return Variables (or nested lists of them), given "
                    f"{type(v).__name__} at position {i}",
                    callsite=user_site(),
                )
        if outs is None:
            parent = program.block(blk.parent_idx)
            helper = LayerHelper("cond")
            outs = [
                parent.create_var(
                    name=f"{helper.name}.out_{i}",
                    dtype=v.dtype,
                    shape=v.shape,
                    lod_level=v.lod_level,
                )
                for i, v in enumerate(flat)
            ]
        for v, o in zip(flat, outs):
            assign(v, o)
    _append_block_op(
        program,
        blk,
        "conditional_block",
        {"Cond": conds},
        "Scope",
        {"is_scalar_condition": scalar},
    )
    return result, outs


def cond(pred: Any, true_fn: Callable | None = None, false_fn: Callable | None = None, name=None):
    """``true_fn()`` if ``pred`` (a bool Variable of shape [1]) holds, else ``false_fn()``.

    Both branches must return the same structure of Variables (or both None).
    """
    for fname, fn in (("true_fn", true_fn), ("false_fn", false_fn)):
        if fn is not None and not callable(fn):
            raise ArgumentTypeError(
                "cond", f"{fname} must be callable or None, given {type(fn).__name__}"
            )
    if _eager():
        check_variable("cond", "pred", pred)
        taken = true_fn if bool(pred.numpy().reshape(-1)[0]) else false_fn
        return None if taken is None else taken()
    check_bool_scalar("cond", "pred", pred)
    from oar.layers.compare import logical_not

    program = default_main_program()
    t_res = f_res = None
    outs = None
    if true_fn is not None:
        t_res, outs = _branch(program, [pred], true_fn, True, None)
        if t_res is None:
            outs = None
    if false_fn is not None:
        not_pred = logical_not(pred)
        with _expect_structure(t_res, true_fn is not None) as check:
            f_res, fouts = _branch(program, [not_pred], _checked(false_fn, check), True, outs)
        outs = outs if outs is not None else fouts
    if t_res is None and f_res is None:
        return None
    if (t_res is None) != (f_res is None) and true_fn is not None and false_fn is not None:
        raise _mismatch(t_res, f_res)
    like = t_res if t_res is not None else f_res
    return _pack(like, outs)


def _mismatch(t_res: Any, f_res: Any) -> ArgumentError:
    return ArgumentError(
        "cond",
        f"true_fn and false_fn must return the same structure; true_fn returns "
        f"{_structure(t_res)} and false_fn returns {_structure(f_res)}",
        callsite=user_site(),
    )


@contextlib.contextmanager
def _expect_structure(t_res: Any, have_true: bool) -> Iterator[Callable]:
    def check(f_res: Any) -> None:
        if have_true and _structure(t_res) != _structure(f_res):
            raise _mismatch(t_res, f_res)

    yield check


def _checked(fn: Callable, check: Callable) -> Callable:
    def run() -> Any:
        res = fn()
        check(res)
        return res

    return run


def case(pred_fn_pairs: Sequence, default: Callable | None = None, name: Any = None) -> Any:
    """The function of the first ``(pred, fn)`` pair whose pred holds, else ``default``
    (the last pair's fn when no default is given)."""
    if not isinstance(pred_fn_pairs, (list, tuple)) or not pred_fn_pairs:
        raise ArgumentTypeError(
            "case", f"pred_fn_pairs must be a non-empty list of (pred, fn), given {pred_fn_pairs!r}"
        )
    for i, pair in enumerate(pred_fn_pairs):
        if not isinstance(pair, tuple) or len(pair) != 2 or not callable(pair[1]):
            raise ArgumentTypeError(
                "case", f"pred_fn_pairs[{i}] must be a (pred, callable) tuple, given {pair!r}"
            )
        if not _eager():
            check_bool_scalar("case", f"pred_fn_pairs[{i}][0]", pair[0])
    if default is not None and not callable(default):
        raise ArgumentTypeError("case", f"default must be callable, given {type(default).__name__}")
    pairs = list(pred_fn_pairs)
    if default is None:
        default = pairs.pop()[1]
    fn = default
    for pred, true_fn in reversed(pairs):
        fn = functools.partial(cond, pred, true_fn, fn)
    return fn()


def switch_case(
    branch_index: Any, branch_fns: Any, default: Callable | None = None, name: Any = None
) -> Any:
    """Run the branch whose key equals ``branch_index`` (an int Variable of shape [1]),
    else ``default`` (the branch of the largest key when None)."""
    from oar.layers.compare import equal
    from oar.layers.tensor import fill_constant

    check_variable("switch_case", "branch_index", branch_index)
    if not _eager() and branch_index.dtype not in ("int32", "int64"):
        raise ArgumentTypeError(
            "switch_case",
            f"branch_index must be an int32/int64 Variable, given {branch_index.dtype}",
            variable=branch_index.name,
        )
    if isinstance(branch_fns, dict):
        items = list(branch_fns.items())
    elif isinstance(branch_fns, (list, tuple)) and all(callable(f) for f in branch_fns):
        items = list(enumerate(branch_fns))
    elif isinstance(branch_fns, (list, tuple)):
        items = list(branch_fns)
    else:
        raise ArgumentTypeError(
            "switch_case",
            f"branch_fns must be a dict, a list of callables or of (int, callable), given "
            f"{type(branch_fns).__name__}",
        )
    keys = set()
    for item in items:
        if not (isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], int)):
            raise ArgumentTypeError(
                "switch_case", f"each branch must be (int, callable), given {item!r}"
            )
        if not callable(item[1]):
            raise ArgumentTypeError("switch_case", f"branch {item[0]} is not callable")
        if item[0] in keys:
            raise ArgumentError("switch_case", f"the key {item[0]} is given twice")
        keys.add(item[0])
    items.sort(key=lambda kv: kv[0])
    if default is None:
        default = items.pop()[1]
    if _eager():
        k = int(branch_index.numpy().reshape(-1)[0])
        return dict(items).get(k, default)()
    pairs = [
        (equal(branch_index, fill_constant([1], branch_index.dtype, key)), fn) for key, fn in items
    ]
    if not pairs:
        return default()
    return case(pairs, default)


class Switch:
    """``with Switch() as s: with s.case(c1): ...; with s.default(): ...`` — the first case whose
    condition holds runs, else the default."""

    def __init__(self, name: str | None = None) -> None:
        if _eager():
            raise ArgumentError(
                "Switch", "Switch builds static branches; use Python if in dygraph mode"
            )
        self.name = name
        self.pre_not_conditions: list = []
        self.inside = False

    def __enter__(self) -> Switch:
        self.inside = True
        return self

    def __exit__(self, *exc: Any) -> bool:
        self.inside = False
        return False

    def _check_inside(self) -> None:
        if not self.inside:
            raise ArgumentError(
                "Switch", "case()/default() must be used inside `with Switch() as switch:`"
            )

    @contextlib.contextmanager
    def case(self, condition: Any) -> Iterator[None]:
        from oar.layers.compare import logical_and, logical_not

        self._check_inside()
        check_bool_scalar("Switch.case", "condition", condition)
        if self.pre_not_conditions:
            pre = self.pre_not_conditions[-1]
            now = logical_and(pre, condition)
            self.pre_not_conditions.append(logical_and(pre, logical_not(condition)))
        else:
            now = condition
            self.pre_not_conditions.append(logical_not(condition))
        with self._block(now):
            yield

    @contextlib.contextmanager
    def default(self) -> Iterator[None]:
        self._check_inside()
        if not self.pre_not_conditions:
            raise ArgumentError("Switch", "default() needs at least one case() before it")
        with self._block(self.pre_not_conditions[-1]):
            yield

    @contextlib.contextmanager
    def _block(self, condition: Any) -> Iterator[None]:
        program = default_main_program()
        with sub_block(program) as blk:
            yield
        _append_block_op(
            program, blk, "conditional_block", {"Cond": [condition]}, "Scope",
            {"is_scalar_condition": True},
        )  # fmt: skip


def is_empty(x: Any, cond: Any = None) -> Any:
    """A bool [1] tensor: whether ``x`` has no elements."""
    check_variable("is_empty", "x", x)
    helper = LayerHelper("is_empty")
    if cond is None:
        cond = helper.create_variable_for_type_inference("bool")
    else:
        check_variable("is_empty", "cond", cond)
    helper.append_op("is_empty", {"X": [x]}, {"Out": [cond]})
    cond.stop_gradient = True
    return cond

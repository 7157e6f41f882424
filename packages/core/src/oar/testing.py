"""Op conformance helpers for oar's tests and for third-party kernel plugins.

An :class:`OpCase` describes one op call (inputs, attrs, a numpy reference and
which inputs to gradient-check). :func:`check_case` builds a one-op program,
compares the forward result with the reference and the analytic gradients with
central differences. Test modules list their cases in ``CASES`` so registry-wide
tests (coverage, dygraph-vs-static) can reuse them.

The suite runs on every registered, available device: :func:`device_places`
lists one place per device and :func:`use_place` makes one the default of
:func:`check_case` (``tests/kernels_cpu/conftest.py`` parametrises every
OpCase test over them, so a new device plugin enters the same conformance
suite). :class:`CheckingArrayModule` is a numpy-backed stand-in for another
array module, to prove that kernels registered for a device use its ``xp``.
"""

from __future__ import annotations

import contextlib
import functools
import types
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import attrs as _attrs
import numpy as np

from oar.places import CPUPlace, CUDAPlace, Place

_places: list = []  # use_place's stack (a plain global: pytest may run fixtures in another context)


class DevicePlace(Place):
    """A place on any registered device by name (``CPUPlace``/``CUDAPlace`` for the built-in ones)."""

    def __init__(self, device: str, device_id: int = 0) -> None:
        self.device = device
        self.device_id = device_id

    def __repr__(self) -> str:
        return f"DevicePlace({self.device!r}, {self.device_id})"


def place_for(device: str, device_id: int = 0) -> Place:
    """The place that runs programs on the device registered as ``device``."""
    if device == "cpu":
        return CPUPlace()
    if device == "cuda":
        return CUDAPlace(device_id)
    return DevicePlace(device, device_id)


def device_places() -> list:
    """One place per registered device that is available here, cpu first."""
    from oar.plugins import registries

    devs = [d for d in registries().devices if d.available()]
    return [place_for(d.name) for d in sorted(devs, key=lambda d: (d.name != "cpu", d.name))]


@contextlib.contextmanager
def use_place(place: Place) -> Iterator[Place]:
    """Make ``place`` the default of :func:`check_case`, :func:`run_forward` and friends."""
    _places.append(place)
    try:
        yield place
    finally:
        _places.pop()


def default_place() -> Place:
    return _places[-1] if _places else CPUPlace()


class CheckingArray(np.ndarray):
    """An array "on" the checking device: numpy data, its own type (see CheckingArrayModule).

    As on cupy, an element or a full reduction is a 0-d array, not a numpy scalar, so a kernel
    that hands one to a function taking host numbers fails here as it would on a GPU.
    """

    def __array_wrap__(self, array: Any, context: Any = None, return_scalar: bool = False) -> Any:
        return super().__array_wrap__(array, context, False)

    def __getitem__(self, key: Any) -> Any:
        item = super().__getitem__(key)
        return np.asarray(item).view(CheckingArray) if isinstance(item, np.generic) else item


def _checked(value: Any) -> Any:
    if type(value) is np.ndarray:
        return value.view(CheckingArray)
    if isinstance(value, (tuple, list)):
        return type(value)(_checked(v) for v in value)
    if isinstance(value, np.random.Generator):
        return CheckingArrayModule(value, counts=Counter())
    return value


# What cupy (the CUDA device's array module) refuses and numpy allows, so the checking device
# refuses it too: a kernel that passes on ``checking`` does not fail on a GPU for these reasons.
# Functions that take host data (lists, shapes, scalars, numpy arrays) as their first argument:
_TAKES_HOST_DATA = frozenset(
    "array asarray asanyarray ascontiguousarray asfortranarray empty zeros ones full eye "
    "identity tri arange linspace logspace dtype result_type promote_types can_cast issubdtype "
    "iinfo finfo ndim shape size isscalar min_scalar_type broadcast_shapes get_array_module "
    "fromfunction fromiter frombuffer einsum".split()
)
# ...of which these read their number arguments on the host (a device array there fails):
_TAKES_HOST_NUMBERS = frozenset({"arange"})
# Functions whose first argument is a sequence of device arrays:
_TAKES_ARRAY_SEQUENCE = frozenset(
    "concatenate stack vstack hstack dstack column_stack row_stack block".split()
)
# cupy.random.Generator's methods (cupy 14): no normal, permutation, shuffle or choice
CUPY_GENERATOR_METHODS = frozenset(
    "beta binomial chisquare dirichlet exponential f gamma geometric hypergeometric integers "
    "logseries poisson power random standard_exponential standard_gamma standard_normal "
    "uniform".split()
)


def _not_on_device(value: Any) -> bool:
    """True for what cupy would not take as a device array (numpy scalars stand for cupy's 0-d
    arrays, which numpy reductions of a CheckingArray return)."""
    if isinstance(value, (CheckingArray, np.generic)):
        return False
    return isinstance(value, (np.ndarray, list, tuple, int, float, complex, bool))


def _check_call(name: str, args: tuple) -> None:
    if not args:
        return
    first = args[0]
    if name in _TAKES_HOST_NUMBERS:
        bad = [a for a in args if isinstance(a, CheckingArray)]
        why = "numbers on the host (cupy: 'Implicit conversion to a NumPy array is not allowed')"
    elif name in _TAKES_HOST_DATA or isinstance(first, str):
        return
    elif name in _TAKES_ARRAY_SEQUENCE:
        items = first if isinstance(first, (list, tuple)) else [first]
        bad = [i for i in items if _not_on_device(i)]
        why = "a sequence of device arrays"
    else:
        bad = [first] if _not_on_device(first) else []
        why = "a device array as its first argument"
    if bad:
        given = ", ".join(sorted({type(b).__name__ for b in bad}))
        raise TypeError(
            f"xp.{name} was given {given}: on a GPU (cupy) it takes {why}; compute shapes "
            f"and indices with numpy or Python, data with xp"
        )


class CheckingArrayModule:
    """numpy behind a proxy: counts each attribute a kernel reads, and returns arrays made
    through it as :class:`CheckingArray`.

    A kernel written against ``xp`` then produces CheckingArrays; one that called
    numpy directly returns a plain ``numpy.ndarray``, which the checking
    device's ``to_host`` refuses. Ufuncs are numpy's own (they keep the subclass).
    Calls cupy would refuse are refused too (see ``_check_call``): host lists, tuples, numbers
    or numpy arrays where cupy wants device arrays, and generator methods cupy lacks.
    """

    def __init__(self, module: Any = np, counts: Counter | None = None) -> None:
        self._module = module
        self.counts = Counter() if counts is None else counts
        self.__name__ = "oar_checking_" + getattr(module, "__name__", "xp")

    def __getattr__(self, name: str) -> Any:
        if isinstance(self._module, np.random.Generator) and name not in CUPY_GENERATOR_METHODS:
            raise AttributeError(f"'Generator' object has no attribute {name!r} (as on cupy)")
        attr = getattr(self._module, name)
        self.counts[name] += 1
        if isinstance(attr, types.ModuleType):
            return CheckingArrayModule(attr, self.counts)
        if isinstance(attr, (np.ufunc, type)) or not callable(attr):
            return attr
        # random draws take sizes and numbers: only the generator's method set is cupy's
        checked = getattr(self._module, "__name__", "").partition(".")[::2] != ("numpy", "random")
        checked = checked and isinstance(self._module, types.ModuleType)

        @functools.wraps(attr)
        def call(*args: Any, **kwargs: Any) -> Any:
            if checked:
                _check_call(name, args)
            return _checked(attr(*args, **kwargs))

        return call


def checking_device(name: str, xp: CheckingArrayModule) -> Any:
    """A :class:`~oar.registry.Device` whose arrays are CheckingArrays made through ``xp``."""
    from oar.registry import Device

    def to_host(a: Any) -> Any:
        if type(a) is np.ndarray:
            raise AssertionError(
                f"a kernel on the '{name}' device returned a plain numpy array of shape {a.shape}: "
                f"it computed with numpy instead of the device's array module (xp)"
            )
        return np.asarray(a) if isinstance(a, np.ndarray) else a

    return Device(
        name=name,
        available=lambda: True,
        count=lambda: 1,
        get_xp=lambda: xp,
        from_host=lambda a, device_id=0: np.array(a).view(CheckingArray),
        to_host=to_host,
    )


@_attrs.define
class OpCase:
    """One op call to check.

    ``inputs``: slot -> array (a list of arrays for a duplicable slot).
    ``ref``: ``f(**inputs, **attrs) -> {out slot: expected}`` (or None to skip).
    ``grad``: input slots to gradient-check; ``grad_outputs`` the output slots
    whose gradients drive it (default: all float outputs).
    ``outputs``: output slot -> number of variables (duplicable slots), by default 1 each.
    """

    op_type: str
    inputs: Mapping[str, Any]
    attrs: Mapping[str, Any] = _attrs.field(factory=dict)
    ref: Callable | None = None
    grad: Sequence[str] = ()
    grad_outputs: Sequence[str] | None = None
    outputs: Mapping[str, int] | None = None
    rtol: float = 1e-5
    atol: float = 1e-6
    grad_rtol: float = 1e-4
    grad_atol: float = 1e-6
    eps: float = 1e-6
    name: str = ""
    lod: Mapping[str, Any] = _attrs.field(factory=dict)

    def __str__(self) -> str:
        return f"{self.op_type}{'-' + self.name if self.name else ''}"


def _build(case: OpCase, wrt: Sequence[str] = ()) -> tuple:
    from oar import fluid
    from oar.plugins import registries

    opdef = registries().ops.get(case.op_type)
    main, startup = fluid.Program(), fluid.Program()
    feeds: dict = {}
    in_vars: dict = {}
    with fluid.program_guard(main, startup):
        block = main.global_block()
        for slot, value in case.inputs.items():
            values = value if isinstance(value, (list, tuple)) else [value]
            vs = []
            for i, arr in enumerate(values):
                arr = np.array(arr)  # a copy: in-place kernels (sgd, adam) must not change the case
                name = f"{slot.lower()}_{i}"
                v = block.create_var(
                    name=name,
                    shape=arr.shape,
                    dtype=arr.dtype.name,
                    is_data=True,
                    stop_gradient=slot not in wrt,
                    lod_level=1 if name in case.lod else 0,
                )
                feeds[name] = arr
                vs.append(v)
            in_vars[slot] = vs
        out_vars: dict = {}
        counts = dict(case.outputs or {})
        for s in opdef.outputs:
            n = counts.get(s.name, 1 if not s.dispensable or case.outputs is None else 0)
            if n:
                out_vars[s.name] = [
                    block.create_var(name=f"out_{s.name.lower()}_{i}") for i in range(n)
                ]
        block.append_op(case.op_type, in_vars, out_vars, dict(case.attrs))
    return main, feeds, in_vars, out_vars


def _feed(feeds: dict, lod: Mapping) -> dict:
    from oar.lod_tensor import LoDTensor

    out = {}
    for name, arr in feeds.items():
        if name in lod:
            t = LoDTensor()
            t.set(arr)
            t.set_recursive_sequence_lengths(lod[name])
            out[name] = t
        else:
            out[name] = arr
    return out


def run_forward(case: OpCase, place: Any = None) -> dict:
    """Run the op once; returns {out slot: [arrays]}."""
    from oar import fluid

    main, feeds, _, out_vars = _build(case)
    exe = fluid.Executor(place or default_place())
    names = [v.name for vs in out_vars.values() for v in vs]
    values = exe.run(main, feed=_feed(feeds, case.lod), fetch_list=names, scope=fluid.Scope())
    it = iter(values)
    return {slot: [next(it) for _ in vs] for slot, vs in out_vars.items()}


def check_output(case: OpCase, place: Any = None) -> dict:
    got = run_forward(case, place)
    if case.ref is not None:
        expected = case.ref(**{k: v for k, v in case.inputs.items()}, **dict(case.attrs))
        for slot, exp in expected.items():
            exps = exp if isinstance(exp, (list, tuple)) else [exp]
            for i, e in enumerate(exps):
                g = got[slot][i]
                e = np.asarray(e)
                assert g.shape == e.shape, (
                    f"{case}: {slot}[{i}] shape {g.shape} != expected {e.shape}"
                )
                np.testing.assert_allclose(
                    g, e, rtol=case.rtol, atol=case.atol, err_msg=f"{case}: output {slot}[{i}]"
                )
    return got


def _float_outputs(out_vars: dict, got: dict, wanted: Sequence[str] | None) -> list:
    slots = wanted if wanted is not None else list(out_vars)
    res = []
    for slot in slots:
        for v, arr in zip(out_vars[slot], got[slot]):
            if np.asarray(arr).dtype.kind == "f":
                res.append((slot, v, np.asarray(arr)))
    return res


def check_grad(case: OpCase, place: Any = None) -> None:
    """Compare analytic gradients of ``sum(out * dout)`` with central differences."""
    from oar import fluid

    if not case.grad:
        return
    main, feeds, in_vars, out_vars = _build(case, case.grad)
    exe = fluid.Executor(place or default_place())
    scope = fluid.Scope()
    fetch = [v.name for vs in out_vars.values() for v in vs]
    first = exe.run(main, feed=_feed(feeds, case.lod), fetch_list=fetch, scope=scope)
    it = iter(first)
    got = {slot: [next(it) for _ in vs] for slot, vs in out_vars.items()}
    outs = _float_outputs(out_vars, got, case.grad_outputs)
    rng = np.random.default_rng(1234)
    douts = {v.name: rng.uniform(0.5, 1.5, arr.shape).astype(arr.dtype) for _, v, arr in outs}
    with fluid.program_guard(main):
        block = main.global_block()
        tg = []
        for _, v, arr in outs:
            tg.append(
                block.create_var(
                    name=v.name + "_dout",
                    shape=arr.shape,
                    dtype=arr.dtype.name,
                    is_data=True,
                    stop_gradient=True,
                )
            )
        wrt = [v for slot in case.grad for v in in_vars[slot]]
        grads = fluid.gradients([v for _, v, _ in outs], wrt, target_gradients=tg)
    feed_all = dict(feeds)
    for _, v, _ in outs:
        feed_all[v.name + "_dout"] = douts[v.name]
    fetch_grads = [g.name for g in grads if g is not None]
    analytic = exe.run(main, feed=_feed(feed_all, case.lod), fetch_list=fetch_grads, scope=scope)
    analytic_by_var = {}
    it = iter(analytic)
    for v, g in zip(wrt, grads):
        analytic_by_var[v.name] = next(it) if g is not None else np.zeros_like(feeds[v.name])
    fwd_main, _, _, fwd_out = _build(case)
    fwd_fetch = [v.name for _, v, _ in outs]

    def objective(fd: dict) -> float:
        vals = exe.run(fwd_main, feed=_feed(fd, case.lod), fetch_list=fwd_fetch, scope=scope)
        return float(
            sum(np.sum(val.astype(np.float64) * douts[n]) for val, n in zip(vals, fwd_fetch))
        )

    for v in wrt:
        x = feeds[v.name].copy()
        num = np.zeros(x.shape, dtype=np.float64)
        fd = dict(feeds)
        flat = x.reshape(-1)
        for i in range(flat.size):
            orig = flat[i]
            flat[i] = orig + case.eps
            fd[v.name] = x
            fp = objective(fd)
            flat[i] = orig - case.eps
            fm = objective(fd)
            flat[i] = orig
            num.reshape(-1)[i] = (fp - fm) / (2 * case.eps)
        np.testing.assert_allclose(
            analytic_by_var[v.name],
            num,
            rtol=case.grad_rtol,
            atol=case.grad_atol,
            err_msg=f"{case}: gradient of {v.name} (analytic vs numeric)",
        )


def check_case(case: OpCase, place: Any = None) -> None:
    """Forward against the reference, then the numeric gradient check."""
    check_output(case, place)
    check_grad(case, place)


@contextlib.contextmanager
def scoped_registry() -> Iterator[Any]:
    """Registrations made inside the block (ops, kernels, devices...) are undone on exit.

    For tests that define throw-away ops or kernels: yields the registries, and
    restores them as they were, so no test pops private registry dicts.
    """
    from oar.plugins import registries, restore, snapshot

    state = snapshot()
    try:
        yield registries()
    finally:
        restore(state)


def assert_layer_refuses(layer: str, build: Callable, match: str, user_file: str) -> None:
    """``build(fluid.layers)``, in a fresh program, raises an OarError matching ``match`` whose
    message names ``layer`` and the user's file (``user_file``, usually the test's
    ``__file__``): the bad-input contract of every layer."""
    import os
    import re

    from oar import fluid
    from oar.errors import OarError

    try:
        with fluid.program_guard(fluid.Program(), fluid.Program()):
            build(fluid.layers)
    except OarError as exc:
        text = str(exc)
        assert re.search(match, text), f"{match!r} not in: {text}"
        assert layer in text, f"the layer name {layer!r} is not in: {text}"
        assert os.path.basename(user_file) in text, f"the user's line is not in: {text}"
        return
    raise AssertionError(f"{layer}: the bad input was accepted")


def eager_sgd_steps(model: Any, loss_of: Callable, steps: int, lr: float = 0.1) -> tuple:
    """Train the dygraph ``model`` ``steps`` SGD steps on ``loss_of(model)``: the losses, the
    last step's parameter gradients and the final parameters (numpy arrays), for comparing
    two ways of running the same training (fused and unfused, two thread counts)."""
    from oar import fluid

    opt = fluid.optimizer.SGD(lr, parameter_list=model.parameters())
    losses: list = []
    grads: list = []
    for _ in range(steps):
        loss = loss_of(model)
        loss.backward()
        grads = [p.gradient() for p in model.parameters()]
        opt.minimize(loss)
        model.clear_gradients()
        losses.append(loss.numpy())
    return losses, grads, [p.numpy() for p in model.parameters()]

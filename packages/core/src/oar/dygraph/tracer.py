"""The eager tracer: runs each op's registered kernel at once and records a tape node.

One op definition serves both modes: ``trace_op`` looks up the same kernel the
static executor would (cached per (op type, dtype)), and ``backward`` replays
the same grad makers over the recorded nodes, running the grad kernels
eagerly. Nodes hang off the variables they produced (``VarBase._node``), so
the tape of one step dies with that step's variables.
"""

from __future__ import annotations

import itertools
import weakref
from typing import Any

import numpy as np

from oar.dygraph.varbase import ParamBase, VarBase
from oar.errors import KernelNotFoundError, OarError, OpRuntimeError
from oar.framework.dtypes import convert_dtype
from oar.install_hints import kernel_not_found_message
from oar.lod_tensor import LoDTensor, SelectedRows

_FLOATS = frozenset(("float16", "float32", "float64"))
_OUT = frozenset(("Out",))


class _Node:
    """One recorded op: input variables (strong), outputs as weak references plus their values,
    and attrs.

    Outputs are weak so that variable -> node -> variable forms no reference cycle: a step's
    tape is freed by reference counting as soon as its variables go, with or without backward.
    Every output on a path to a loss stays alive anyway (a later node holds it as an input).
    """

    __slots__ = ("type", "inputs", "outputs", "out_values", "attrs", "seq")

    def __init__(self, type_: str, inputs: dict, outputs: dict, attrs: dict, seq: int) -> None:
        self.type = type_
        self.inputs = inputs
        self.outputs = {slot: [_ref(v) for v in vs] for slot, vs in outputs.items()}
        self.out_values = {slot: [v._value for v in vs] for slot, vs in outputs.items()}
        self.attrs = attrs
        self.seq = seq


_ref = weakref.ref
_new_node = object.__new__


def _single_out_node(
    type_: str, inputs: dict, out: VarBase, attrs: dict, seq: int, slot: str = "Out"
) -> _Node:
    """The node of an op with one output variable, built without the generic comprehensions."""
    node = _new_node(_Node)
    node.type = type_
    node.inputs = inputs
    node.outputs = {slot: [_ref(out)]}
    node.out_values = {slot: [out._value]}
    node.attrs = attrs
    node.seq = seq
    return node


class _OpInfo:
    """What the tracer resolves once per op type: definition, slots, grad maker, kernels, attrs."""

    __slots__ = ("opdef", "in_slots", "out_slots", "kernel_dtype", "maker", "kernels", "attr_cache")

    def __init__(self, opdef: Any) -> None:
        self.opdef = opdef
        self.in_slots = tuple((s.name, s.duplicable) for s in opdef.inputs)
        self.out_slots = tuple((s.name, s.duplicable) for s in opdef.outputs)
        self.kernel_dtype = opdef.kernel_dtype
        self.maker = opdef.grad
        self.kernels: dict = {}
        self.attr_cache: dict = {}

    def complete(self, attrs: dict) -> dict:
        """Defaults filled in and checked, cached per distinct hashable attrs (treat the result as frozen)."""
        try:
            key = tuple(attrs.items())
            hash(key)
        except TypeError:
            return self.opdef.complete_attrs(attrs)
        done = self.attr_cache.get(key)
        if done is None:
            done = self.opdef.complete_attrs(attrs)
            if len(self.attr_cache) < 256:
                self.attr_cache[key] = done
        return done


class Tracer:
    """Implements the hooks LayerHelper calls in dygraph mode, plus ``backward``."""

    def __init__(self, place: Any = None, device: str = "cpu") -> None:
        from oar.plugins import registries

        self._reg = registries()
        self.place = place
        self.device = device
        self._xp: Any = None
        self._infos: dict = {}
        self._seq = itertools.count()
        self._has_grad = True
        self._train_mode = True
        self._recorder: list | None = None  # TracedLayer: every op traced, in order
        from oar.dygraph.eager_block import EagerBlock

        self.eager_block = EagerBlock(self)

    @property
    def xp(self) -> Any:
        """The array module of this tracer's device (numpy on cpu)."""
        if self._xp is None:
            self._xp = np if self.device == "cpu" else self._reg.devices.get(self.device).get_xp()
        return self._xp

    def to_device(self, value: Any) -> Any:
        """A host array on this tracer's device (itself on cpu): what to_variable holds."""
        if self.device == "cpu" or not isinstance(value, np.ndarray):
            return value
        device = self._reg.devices.get(self.device)
        return device.from_host(value, getattr(self.place, "device_id", 0))

    # --- LayerHelper hooks ----------------------------------------------------------------------
    def is_variable(self, x: Any) -> bool:
        return isinstance(x, VarBase)

    def create_variable(
        self,
        name: str | None = None,
        dtype: Any = None,
        stop_gradient: bool = False,
        persistable: bool = False,
        shape: Any = None,
        **_: Any,
    ) -> VarBase:
        value = None
        if persistable and shape is not None and all(int(d) >= 0 for d in shape):
            value = self.to_device(
                np.zeros([int(d) for d in shape], convert_dtype(dtype or "float32"))
            )
        return VarBase(
            value, name=name, stop_gradient=stop_gradient, persistable=persistable, dtype=dtype
        )

    def create_parameter(
        self, attr: Any, shape: list, dtype: Any, is_bias: bool, initializer: Any
    ) -> ParamBase:
        p = ParamBase(
            None,
            name=attr.name,
            trainable=attr.trainable,
            optimize_attr={"learning_rate": attr.learning_rate},
            regularizer=attr.regularizer,
            gradient_clip_attr=getattr(attr, "gradient_clip", None),
            do_model_average=getattr(attr, "do_model_average", None),
        )
        p._dtype = dtype
        self.eager_block.init_var(p, shape, dtype, initializer)
        return p

    def initialize(self, var: VarBase, initializer: Any) -> VarBase:
        if getattr(var._value, "shape", None) is None:  # a numpy or a device array has one
            raise ValueError(
                f"dygraph: cannot initialise '{var.name}': it was created without a shape"
            )
        shape = list(var._value.shape)
        self.eager_block.init_var(var, shape, var.dtype, initializer)
        return var

    # --- running ops ----------------------------------------------------------------------------
    def _info(self, op_type: str) -> _OpInfo:
        info = self._infos.get(op_type)
        if info is None:
            info = self._infos[op_type] = _OpInfo(self._reg.ops.get(op_type))
        return info

    def _kernel(self, info: _OpInfo, dtype: Any) -> Any:
        entry = info.kernels.get(dtype)
        if entry is None:
            name = (
                None
                if dtype is None
                else (dtype if isinstance(dtype, str) else np.dtype(dtype).name)
            )
            entry = self._reg.kernels.lookup(info.opdef.type, self.device, name)
            if entry is None:
                raise KernelNotFoundError(
                    kernel_not_found_message(self._reg, info.opdef.type, self.device, name)
                )
            info.kernels[dtype] = entry
        return entry

    @staticmethod
    def _dtype_of(info: _OpInfo, values: dict, attrs: dict) -> Any:
        """The dtype that selects the kernel (a numpy dtype or a name), as the static Plan picks it."""
        kd = info.kernel_dtype
        if kd is not None and kd.startswith("attr:"):
            return attrs.get(kd[5:])
        slots = (kd,) if kd else values
        for slot in slots:
            v = values.get(slot)
            if v is None:
                continue
            if v.__class__ is list:
                if not v:
                    continue
                v = v[0]
            if v.__class__ is np.ndarray:
                return v.dtype
            if isinstance(v, SelectedRows):
                return np.asarray(v.value).dtype
            if isinstance(v, LoDTensor):
                return v._array.dtype
            dt = getattr(v, "dtype", None)
            if dt is not None:
                return dt
        d = attrs.get("dtype")
        return d if isinstance(d, str) else "float32"

    def _call(self, info: _OpInfo, values: dict, attrs: dict, wanted: Any) -> dict:
        """The general eager call (any input values); ``wanted``: a frozenset of output slots,
        or ``{slot: variables}`` where the slots given variables are wanted."""
        entry = self._kernel(info, self._dtype_of(info, values, attrs))
        try:
            return entry.call_eager(values, attrs, wanted)
        except OarError:
            raise
        except Exception as exc:
            raise _failure(info, values, exc) from exc

    def trace_op(
        self, type: str, inputs: dict, outputs: dict, attrs: dict, stop_gradient: bool = False
    ) -> None:
        """Run ``type`` now on the inputs' values; record a tape node if a gradient may be needed."""
        info = self._infos.get(type)
        if info is None:
            info = self._info(type)
        attrs = info.complete(attrs)
        values: dict = {}
        needs_grad = False
        first = None
        plain = True  # every input a bare ndarray: the fast kernel path applies
        for slot, dup in info.in_slots:
            vs = inputs.get(slot)
            if not vs:
                continue
            if vs.__class__ is not list:
                vs = inputs[slot] = list(vs) if isinstance(vs, tuple) else [vs]
            if dup:
                values[slot] = [v._value for v in vs]
                plain = False
                for v in vs:
                    if not v.stop_gradient:
                        needs_grad = True
            else:
                v = vs[0]
                x = values[slot] = v._value
                if x.__class__ is not np.ndarray:
                    plain = False
                elif first is None:
                    first = x
                if not v.stop_gradient:
                    needs_grad = True
        kd = info.kernel_dtype
        if kd is not None and plain and not kd.startswith("attr:"):
            first = values.get(kd)  # the slot that selects the kernel (optimizers' Param)
            if first.__class__ is not np.ndarray:
                first = None
            kd = None
        if plain and first is not None and kd is None:
            entry = info.kernels.get(first.dtype) or self._kernel(info, first.dtype)
            try:
                if entry.direct:
                    res = entry.kernel(values, attrs)
                else:
                    res = entry.call(values, attrs, frozenset(s for s, vs in outputs.items() if vs))
            except OarError:
                raise
            except Exception as exc:
                raise _failure(info, values, exc) from exc
        else:
            res = self._call(info, values, attrs, outputs)
        self._outputs(info, type, inputs, outputs, attrs, res, needs_grad and not stop_gradient)

    def _outputs(
        self,
        info: _OpInfo,
        type: str,
        inputs: dict,
        outputs: dict,
        attrs: dict,
        res: dict,
        grad: bool,
    ) -> None:
        """Give the output variables the kernel's results ``res`` and record the tape node
        when ``grad`` (an input wants a gradient) and gradients are being recorded."""
        record = grad and self._has_grad and info.maker is not None
        for slot, dup in info.out_slots:
            vs = outputs.get(slot)
            if not vs:
                continue
            if vs.__class__ is not list:
                vs = outputs[slot] = list(vs) if isinstance(vs, tuple) else [vs]
            r = res.get(slot)
            if dup:
                for v, x in zip(vs, r or ()):
                    v._value = x
                    if not v.persistable:
                        v.stop_gradient = not record
            else:
                v = vs[0]
                if r is not None:
                    v._value = r
                if not v.persistable:
                    v.stop_gradient = not record
        if record:
            self._new_node(type, inputs, outputs, attrs)
        if self._recorder is not None:
            self._recorder.append((type, inputs, outputs, attrs))

    def _new_node(self, type: str, inputs: dict, outputs: dict, attrs: dict) -> None:
        """Record the tape node of an op on its (non-persistable) output variables."""
        if len(outputs) == 1:
            ((slot, vs),) = outputs.items()
            if len(vs) == 1 and not vs[0].persistable:  # the common case, without comprehensions
                vs[0]._node = _single_out_node(type, inputs, vs[0], attrs, next(self._seq), slot)
                return
        node = _Node(type, inputs, outputs, attrs, next(self._seq))
        for vs in outputs.values():
            for v in vs:
                if not v.persistable:
                    v._node = node

    def trace_chain(self, ops: list) -> None:
        """Trace ``[(type, inputs, outputs, attrs)]``, each op reading the previous one's
        output, as one fused kernel when a plugin offers one (:mod:`oar.dygraph.chain`)."""
        from oar.dygraph.chain import trace_chain

        trace_chain(self, ops)

    def trace_simple(self, type: str, ins: dict, attrs: dict) -> VarBase:
        """The operator fast path: ``ins`` maps each input slot to a one-variable list, one ``Out``
        output, attrs already complete. Same kernel, same tape node as :meth:`trace_op`, minus
        the generic slot handling."""
        info = self._infos.get(type)
        if info is None:
            info = self._info(type)
        values = {}
        needs_grad = False
        first = None
        for slot, vs in ins.items():
            v = vs[0]
            x = values[slot] = v._value
            if x.__class__ is not np.ndarray:
                out = VarBase(None)
                self.trace_op(type, ins, {"Out": [out]}, attrs)
                return out
            if first is None:
                first = x
            if not v.stop_gradient:
                needs_grad = True
        entry = info.kernels.get(first.dtype) or self._kernel(info, first.dtype)
        try:
            res = entry.kernel(values, attrs) if entry.direct else entry.call(values, attrs, _OUT)
        except OarError:
            raise
        except Exception as exc:
            raise _failure(info, values, exc) from exc
        out = VarBase(res["Out"])
        if self._recorder is not None:
            self._recorder.append((type, ins, {"Out": [out]}, attrs))
        if needs_grad and self._has_grad and info.maker is not None:
            out.stop_gradient = False
            out._node = _single_out_node(type, ins, out, attrs, next(self._seq))
        return out

    def complete_attrs(self, type: str, attrs: dict) -> dict:
        info = self._infos.get(type) or self._info(type)
        return info.complete(attrs)

    def run_op(self, type: str, inputs: dict, outputs: dict, attrs: dict | None = None) -> None:
        """Run an op eagerly without recording it (optimizer updates, initialisers)."""
        old, self._has_grad = self._has_grad, False
        try:
            self.trace_op(type, inputs, outputs, attrs or {})
        finally:
            self._has_grad = old

    # --- backward -------------------------------------------------------------------------------
    def backward(self, loss: VarBase, retain_graph: bool = False) -> None:
        """Walk the tape from ``loss`` in reverse, replaying each op's grad maker."""
        from oar.dygraph.backward import run_backward

        run_backward(self, loss, retain_graph)


def _failure(info: _OpInfo, values: dict, exc: Exception) -> OpRuntimeError:
    shapes = ", ".join(
        f"{s}={list(np.shape(_plain(v)))}" for s, v in values.items() if not isinstance(v, list)
    )
    return OpRuntimeError(
        f"op '{info.opdef.type}' failed in dygraph mode: {type(exc).__name__}: {exc}; inputs: {shapes}"
    )


def _plain(v: Any) -> Any:
    if isinstance(v, LoDTensor):
        return v._array
    if isinstance(v, SelectedRows):
        return v.value
    return v


__all__ = ["Tracer"]

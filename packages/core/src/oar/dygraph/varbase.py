"""Eager variables: a value (numpy array) plus what autograd needs to know about it.

A :class:`VarBase` is what every ``fluid.layers`` function returns under
``fluid.dygraph.guard()``. It holds its value, its gradient once ``backward``
ran, and a link to the tape node that produced it (``_node``), so backward
can walk the graph from any variable. Names are generated lazily: most
temporaries never need one, and generating names costs per-op time.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from oar.framework import unique_name
from oar.framework.dtypes import VarType, convert_dtype
from oar.framework.math_operators import MathOperators
from oar.lod_tensor import LoDTensor, SelectedRows
from oar.user_array import user_array

_DTYPE_NAMES: dict = {}  # numpy dtype -> its name


def _tracer():
    from oar.framework.mode import _dygraph_tracer

    t = _dygraph_tracer()
    if t is None:
        raise RuntimeError(
            "this operation on a dygraph variable needs dygraph mode: use it inside "
            "`with fluid.dygraph.guard():`"
        )
    return t


def _host(value: Any) -> np.ndarray:
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, SelectedRows):
        return _host(value.to_dense())
    if isinstance(value, LoDTensor):
        return _host(value._array)
    get = getattr(value, "get", None)
    if callable(get):  # a device array (cupy): copied back explicitly
        return get()
    return np.asarray(value)


def _meta(value: Any) -> Any:
    """Something with the value's ``shape`` and ``dtype``, without copying a device array."""
    if isinstance(value, LoDTensor):
        value = value._array
    return value if hasattr(value, "shape") and hasattr(value, "dtype") else _host(value)


class VarBase(MathOperators):
    """An eager tensor. ``stop_gradient`` defaults to True for data, False for parameters and
    for op outputs computed from anything that needs a gradient (as in Fluid)."""

    __slots__ = (
        "_value",
        "_name",
        "stop_gradient",
        "persistable",
        "_grad",
        "_node",
        "_dtype",
        "__weakref__",
    )

    def __init__(
        self,
        value: Any = None,
        name: str | None = None,
        stop_gradient: bool = True,
        persistable: bool = False,
        dtype: Any = None,
    ) -> None:
        self._value = value
        self._name = name
        self.stop_gradient = stop_gradient
        self.persistable = persistable
        self._grad = None
        self._node = None
        self._dtype = dtype

    # --- description ----------------------------------------------------------------------------
    @property
    def name(self) -> str:
        n = self._name
        if n is None:
            n = self._name = unique_name.generate("generated_var" if self._node is None else "tmp")
        return n

    @name.setter
    def name(self, value: str) -> None:
        self._name = value

    @property
    def shape(self) -> list:
        v = self._value
        if v is None:
            return []
        if v.__class__ is np.ndarray:
            return list(v.shape)
        if isinstance(v, SelectedRows):
            return [v.height()] + list(_meta(v.value).shape[1:])
        return list(_meta(v).shape)

    @property
    def dtype(self) -> str:
        v = self._value
        if v.__class__ is np.ndarray:  # numpy's dtype.name is Python code: look it up
            dt = v.dtype
            name = _DTYPE_NAMES.get(dt)
            if name is None:
                name = _DTYPE_NAMES[dt] = dt.name
            return name
        if v is None:
            return convert_dtype(self._dtype) if self._dtype is not None else "float32"
        if isinstance(v, SelectedRows):
            return np.dtype(_meta(v.value).dtype).name
        return np.dtype(_meta(v).dtype).name

    @property
    def type(self) -> str:
        return (
            VarType.SELECTED_ROWS if isinstance(self._value, SelectedRows) else VarType.LOD_TENSOR
        )

    @property
    def lod_level(self) -> int:
        v = self._value
        return len(v._lod) if isinstance(v, LoDTensor) and v._lod else 0

    @property
    def block(self) -> Any:
        """The eager block optimizers and regularizers append (run) their ops on."""
        return _tracer().eager_block

    def _is_initialized(self) -> bool:
        return self._value is not None

    def numel(self) -> int:
        return int(np.prod(self.shape))

    # --- values and gradients ---------------------------------------------------------------------
    def numpy(self) -> np.ndarray:
        """A copy of the value (optimizers update parameters in place)."""
        if self._value is None:
            raise ValueError(f"variable '{self.name}' holds no value yet")
        return user_array(np.array(_host(self._value)))  # size-1: float(x.numpy()) on NumPy 2

    def value(self) -> Any:
        return self._value

    def set_value(self, value: Any) -> None:
        """Replace the value with a copy of ``value`` (same shape and dtype)."""
        arr = value.numpy() if isinstance(value, VarBase) else np.asarray(value)
        if self._value is not None and list(arr.shape) != self.shape:
            raise ValueError(
                f"set_value: variable '{self.name}' has shape {self.shape}, "
                f"given an array of shape {list(arr.shape)}"
            )
        if self._value is not None and arr.dtype.name != self.dtype:
            raise TypeError(
                f"set_value: variable '{self.name}' has dtype {self.dtype}, given {arr.dtype.name}"
            )
        arr = np.array(arr)
        from oar.framework.mode import _dygraph_tracer

        tracer = _dygraph_tracer()
        self._value = tracer.to_device(arr) if tracer is not None else arr

    def gradient(self) -> np.ndarray | None:
        """The gradient as a numpy array (None before backward)."""
        g = self._grad
        if g is None:
            return None
        if isinstance(g, SelectedRows):
            return user_array(_host(g.to_dense()))
        return user_array(np.array(_host(g)))

    def _grad_ivar(self) -> VarBase | None:
        if self._grad is None:
            return None
        return VarBase(self._grad, name=self.name + "@GRAD", stop_gradient=True)

    def clear_gradient(self) -> None:
        self._grad = None

    def backward(self, backward_strategy: Any = None, retain_graph: bool = False) -> None:
        """Gradients of this scalar w.r.t. everything it was computed from."""
        _tracer().backward(self, retain_graph=retain_graph)

    def detach(self) -> VarBase:
        """The same value, cut from the graph."""
        return VarBase(self._value, stop_gradient=True)

    def astype(self, dtype: Any) -> VarBase:
        dtype = convert_dtype(dtype)
        out = VarBase(None)
        _tracer().trace_op(
            "cast", {"X": [self]}, {"Out": [out]}, {"in_dtype": self.dtype, "out_dtype": dtype}
        )
        return out

    # --- printing -------------------------------------------------------------------------------
    def __str__(self) -> str:
        if self._value is None:
            return f"name {self.name}, not initialized"
        arr = _host(self._value)
        body = np.array2string(arr, separator=" ", threshold=1000, max_line_width=120)
        return (
            f"name {self.name}, dtype: {self.dtype} shape: {list(arr.shape)} "
            f"stop_gradient: {self.stop_gradient}\n{body}"
        )

    __repr__ = __str__

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        arr = _host(self._value)
        return arr.astype(dtype) if dtype is not None else arr

    def __len__(self) -> int:
        return self.shape[0]

    def __bool__(self) -> bool:
        if self.numel() != 1:
            raise ValueError(
                f"the truth value of variable '{self.name}' with shape {self.shape} is "
                f"ambiguous; use .numpy().any() or .numpy().all()"
            )
        return bool(_host(self._value).reshape(()))

    def __float__(self) -> float:
        return float(_host(self._value).reshape(()))

    def __int__(self) -> int:
        return int(_host(self._value).reshape(()))

    def __index__(self) -> int:
        return int(_host(self._value).reshape(()))

    # --- indexing -------------------------------------------------------------------------------
    def __getitem__(self, item: Any) -> VarBase:
        from oar.dygraph.indexing import getitem

        return getitem(self, item)

    # --- operators ------------------------------------------------------------------------------
    def _binary(self, other: Any, op: str, reverse: bool = False) -> Any:
        return _math_ops.binary(self, other, op, reverse)

    def _scale(self, factor: float) -> Any:
        from oar.dygraph.math_ops import scale

        return scale(self, factor)

    __hash__ = object.__hash__


class ParamBase(VarBase):
    """An eager parameter: persistable, trainable, with the ParamAttr's extras."""

    __slots__ = (
        "_trainable",
        "optimize_attr",
        "regularizer",
        "gradient_clip_attr",
        "do_model_average",
        "is_distributed",
    )

    def __init__(
        self,
        value: Any,
        name: str,
        trainable: bool = True,
        optimize_attr: dict | None = None,
        regularizer: Any = None,
        gradient_clip_attr: Any = None,
        do_model_average: Any = None,
    ) -> None:
        super().__init__(value, name=name, stop_gradient=not trainable, persistable=True)
        self.trainable = trainable
        self.optimize_attr = optimize_attr or {"learning_rate": 1.0}
        self.regularizer = regularizer
        self.gradient_clip_attr = gradient_clip_attr
        self.do_model_average = do_model_average
        self.is_distributed = False

    @property
    def trainable(self) -> bool:
        return self._trainable

    @trainable.setter
    def trainable(self, value: bool) -> None:
        """A frozen parameter stops gradients too (as in Fluid)."""
        self._trainable = bool(value)
        self.stop_gradient = not value

    def __str__(self) -> str:
        return "Parameter " + super().__str__()

    __repr__ = __str__


from oar.dygraph import math_ops as _math_ops  # noqa: E402  (operators need VarBase defined first)

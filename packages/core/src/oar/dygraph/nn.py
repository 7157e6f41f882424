"""``fluid.dygraph.nn``: layers with parameters, Fluid 1.8 argument names and private attributes.

Each ``forward`` traces the same registered ops the static layer functions
append (``matmul``, ``conv2d``, ``pool2d``, ``batch_norm``...). Attributes the
seeds print (``_padding``, ``_stride``, ``_pool_type``, ``_act``...) keep
Fluid's names and list forms.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from oar.dygraph.container import LayerList, ParameterList, Sequential
from oar.dygraph.explain import explain_failure
from oar.dygraph.layers import Layer
from oar.dygraph.linear_node import ACTS, trace_linear
from oar.dygraph.varbase import VarBase
from oar.errors import (
    ArgumentError,
    ArgumentTypeError,
    KernelNotFoundError,
    OpRuntimeError,
    user_site,
)
from oar.framework.mode import _dygraph_tracer
from oar.initializer import Constant, Normal
from oar.layers.conv import conv2d_spec, conv2d_transpose_spec, conv_filter_std
from oar.layers.embedding import embedding_spec
from oar.layers.norm import (
    batch_norm_attrs,
    batch_norm_moving_attrs,
    batch_norm_stat_dtype,
    layer_norm_attrs,
)
from oar.layers.pool import pool2d_attrs

__all__ = [
    "Linear",
    "Conv2D",
    "Conv2DTranspose",
    "Pool2D",
    "BatchNorm",
    "LayerNorm",
    "Embedding",
    "Dropout",
    "GRUUnit",
    "PRelu",
    "Sequential",
    "LayerList",
    "ParameterList",
]


def _pair(value: Any, name: str, layer: str) -> list:
    if isinstance(value, (list, tuple)):
        if len(value) != 2 or not all(isinstance(v, (int, np.integer)) for v in value):
            raise ArgumentError(
                layer, f"{name} must be an int or a list of 2 ints, given {value!r}"
            )
        return [int(v) for v in value]
    if not isinstance(value, (int, np.integer)):
        raise ArgumentTypeError(
            layer, f"{name} must be an int or a list of 2 ints, given {type(value).__name__}"
        )
    return [int(value), int(value)]


def _op(op_type: str, inputs: dict, outputs: dict, attrs: dict) -> None:
    """Trace ``op_type`` with the attrs its registered definition knows (others are Fluid-only hints)."""
    from oar.plugins import registries

    tracer = _dygraph_tracer()
    if tracer is None:
        raise RuntimeError(
            f"dygraph layer calling '{op_type}' needs dygraph mode: run it inside "
            f"`with fluid.dygraph.guard():`"
        )
    opdef = registries().ops.get(op_type)
    attrs = {k: v for k, v in attrs.items() if k in opdef.attrs}
    try:
        tracer.trace_op(op_type, inputs, outputs, attrs)
    except (OpRuntimeError, KernelNotFoundError) as exc:
        # the kernel failed: explain it with the op's shape inference (run only now, so the
        # fast path pays nothing), else at least name the user's line
        explain_failure(op_type, opdef, inputs, tracer.complete_attrs(op_type, attrs))
        exc.with_context(callsite=user_site())
        raise


def _check_input(layer: str, x: Any) -> None:
    if not isinstance(x, VarBase):
        raise ArgumentTypeError(
            layer,
            f"input must be a dygraph variable (fluid.dygraph.to_variable(ndarray)), "
            f"given {type(x).__name__}",
        )


def _bias_act(x: VarBase, bias: Any, axis: int, act: str | None) -> VarBase:
    tracer = _dygraph_tracer()
    chain = getattr(tracer, "trace_chain", None)
    if bias is not None and act is not None and chain is not None:
        # one chain: a plugin's fused kernel may run both ops (oar.dygraph.chain)
        mid, out = VarBase(None), VarBase(None)
        chain(
            [
                ("elementwise_add", {"X": [x], "Y": [bias]}, {"Out": [mid]}, {"axis": axis}),
                (act, {"X": [mid]}, {"Out": [out]}, {}),
            ]
        )
        return out
    if bias is not None:
        out = VarBase(None)
        _dygraph_tracer().trace_op(
            "elementwise_add", {"X": [x], "Y": [bias]}, {"Out": [out]}, {"axis": axis}
        )
        x = out
    if act is not None:
        out = VarBase(None)
        _dygraph_tracer().trace_op(act, {"X": [x]}, {"Out": [out]}, {})
        x = out
    return x


def _positive_int(layer: str, name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
        raise ArgumentError(layer, f"{name} must be a positive int, given {value!r}")
    return int(value)


def _check_act(layer: str, act: Any) -> None:
    if act is not None:
        from oar.layer_helper import check_activation

        check_activation(layer, act)


class Linear(Layer):
    """``act(input @ weight + bias)``; weight is [input_dim, output_dim]."""

    def __init__(
        self,
        input_dim: int,
        output_dim: int,
        param_attr: Any = None,
        bias_attr: Any = None,
        act: str | None = None,
        dtype: str = "float32",
    ) -> None:
        super().__init__()
        for n, v in (("input_dim", input_dim), ("output_dim", output_dim)):
            if not isinstance(v, (int, np.integer)) or v <= 0:
                raise ArgumentError("Linear", f"{n} must be a positive int, given {v!r}")
        _check_act("Linear", act)
        self._act = act
        self._dtype = dtype
        self.weight = self.create_parameter([input_dim, output_dim], param_attr, dtype, False)
        self.bias = self.create_parameter([output_dim], bias_attr, dtype, True)

    def forward(self, input: VarBase) -> VarBase:
        _check_input("Linear", input)
        weight = self.weight
        x, w = input._value, getattr(weight, "_value", None)  # a Parameter under program_guard
        if x.__class__ is not np.ndarray or w.__class__ is not np.ndarray:
            self._check(input, weight)  # the general checks (values of other kinds)
        elif x.shape[-1] != w.shape[0] or x.dtype != w.dtype:
            self._check(input, weight)
        rank = x.ndim if x.__class__ is np.ndarray else len(input.shape)
        tracer = _dygraph_tracer()
        if w.__class__ is np.ndarray and x.__class__ is np.ndarray and self._act in ACTS:
            # one tape node (oar.dygraph.linear_node)
            out = trace_linear(tracer, input, weight, self.bias, self._act, rank)
            if out is not None:
                return out
        out = VarBase(None)
        # ``mul`` keeps the leading dims (as Fluid's matmul here does) and its kernels are the
        # static ``fc``'s, the fastest GEMM path
        tracer.trace_op(
            "mul",
            {"X": [input], "Y": [weight]},
            {"Out": [out]},
            {"x_num_col_dims": rank - 1, "y_num_col_dims": 1},
        )
        return _bias_act(out, self.bias, rank - 1, self._act)

    @staticmethod
    def _check(input: VarBase, weight: VarBase) -> None:
        if input.shape[-1] != weight.shape[0]:
            raise ArgumentError(
                "Linear",
                f"input '{input.name}' has shape {input.shape}, but this layer expects "
                f"last dim {weight.shape[0]} (input_dim)",
            )
        if str(input.dtype) != str(weight.dtype):
            raise ArgumentTypeError(
                "Linear",
                f"input '{input.name}' must be {weight.dtype} (the layer's dtype), "
                f"given {input.dtype}",
            )


class _ConvLayer(Layer):
    """What Conv2D, Conv3D and their transposes share: Fluid's attributes from the spec of the
    static layer, the filter and bias parameters, and the forward op."""

    _layout = "NCHW"

    def _build(
        self,
        op_type: str,
        spec: Any,
        num_channels: int,
        num_filters: int,
        param_attr: Any,
        bias_attr: Any,
        act: str | None,
        dtype: str,
        filter_init: Any = None,
    ) -> None:
        self._op_type, self._attrs, self._act, self._dtype = op_type, spec.attrs, act, dtype
        self._num_channels, self._num_filters = num_channels, num_filters
        self._groups = spec.attrs["groups"]
        self._stride = spec.attrs["strides"]
        self._padding = spec.attrs["paddings"]
        self._dilation = spec.attrs["dilations"]
        self._filter_size = spec.filter_shape[2:]
        self.weight = self.create_parameter(
            spec.filter_shape, param_attr, dtype, False, filter_init
        )
        self.bias = self.create_parameter([num_filters], bias_attr, dtype, True)

    def forward(self, input: VarBase) -> VarBase:
        layer = type(self).__name__
        _check_input(layer, input)
        if len(input.shape) != len(self._layout) or input.shape[1] != self._num_channels:
            raise ArgumentError(
                layer,
                f"input '{input.name}' must be {self._layout} with {self._num_channels} "
                f"channels, given shape {input.shape}",
            )
        out = VarBase(None)
        _op(
            self._op_type,
            {"Input": [input], "Filter": [self.weight]},
            {"Output": [out]},
            self._attrs,
        )
        return _bias_act(out, self.bias, 1, self._act)


class Conv2D(_ConvLayer):
    """2-D convolution on NCHW input; filter is [num_filters, num_channels/groups, kh, kw].

    Arguments and the op are :func:`oar.layers.conv.conv2d_spec`'s, as for ``layers.conv2d``.
    """

    def __init__(
        self,
        num_channels: int,
        num_filters: int,
        filter_size: Any,
        stride: Any = 1,
        padding: Any = 0,
        dilation: Any = 1,
        groups: int | None = None,
        param_attr: Any = None,
        bias_attr: Any = None,
        use_cudnn: bool = True,
        act: str | None = None,
        dtype: str = "float32",
    ) -> None:
        super().__init__()
        _check_act("Conv2D", act)
        num_channels = _positive_int("Conv2D", "num_channels", num_channels)
        spec = conv2d_spec(
            "Conv2D",
            num_channels,
            num_filters,
            filter_size,
            stride,
            padding,
            dilation,
            groups,
            use_cudnn,
        )
        self._use_cudnn = use_cudnn
        std = conv_filter_std(spec.filter_shape, num_channels)
        self._build(
            spec.op_type,
            spec,
            num_channels,
            num_filters,
            param_attr,
            bias_attr,
            act,
            dtype,
            Normal(0.0, std),
        )


class Conv2DTranspose(_ConvLayer):
    """Transposed 2-D convolution; filter is [num_channels, num_filters/groups, kh, kw].

    Arguments and the op are :func:`oar.layers.conv.conv2d_transpose_spec`'s, as for
    ``layers.conv2d_transpose``.
    """

    def __init__(
        self,
        num_channels: int,
        num_filters: int,
        filter_size: Any,
        output_size: Any = None,
        padding: Any = 0,
        stride: Any = 1,
        dilation: Any = 1,
        groups: int | None = None,
        param_attr: Any = None,
        bias_attr: Any = None,
        use_cudnn: bool = True,
        act: str | None = None,
        dtype: str = "float32",
    ) -> None:
        super().__init__()
        _check_act("Conv2DTranspose", act)
        num_channels = _positive_int("Conv2DTranspose", "num_channels", num_channels)
        if filter_size is None:
            raise ArgumentError("Conv2DTranspose", "filter_size is required")
        spec = conv2d_transpose_spec(
            "Conv2DTranspose",
            num_channels,
            num_filters,
            filter_size,
            output_size,
            stride,
            padding,
            dilation,
            groups,
            use_cudnn,
        )
        self._output_size = output_size
        self._use_cudnn = use_cudnn
        self._build(
            spec.op_type, spec, num_channels, num_filters, param_attr, bias_attr, act, dtype
        )


class Pool2D(Layer):
    """Max or average pooling over NCHW input; arguments are :func:`oar.layers.pool.pool2d_attrs`'s."""

    def __init__(
        self,
        pool_size: Any = -1,
        pool_type: str = "max",
        pool_stride: Any = 1,
        pool_padding: Any = 0,
        global_pooling: bool = False,
        use_cudnn: bool = True,
        ceil_mode: bool = False,
        exclusive: bool = True,
        data_format: str = "NCHW",
    ) -> None:
        super().__init__()
        self._attrs = pool2d_attrs(
            "Pool2D",
            pool_size,
            pool_type,
            pool_stride,
            pool_padding,
            global_pooling,
            use_cudnn,
            ceil_mode,
            exclusive,
            data_format,
        )
        self._pool_type = pool_type
        self._pool_size = self._attrs["ksize"]
        self._pool_padding = self._attrs["paddings"]
        self._pool_stride = self._attrs["strides"]
        self._global_pooling = global_pooling
        self._use_cudnn = use_cudnn
        self._ceil_mode = ceil_mode
        self._exclusive = exclusive
        self._data_format = data_format

    def forward(self, input: VarBase) -> VarBase:
        _check_input("Pool2D", input)
        if len(input.shape) != 4:
            raise ArgumentError(
                "Pool2D",
                f"input '{input.name}' must be 4-D ({self._data_format}), given shape {input.shape}",
            )
        out = VarBase(None)
        _op("pool2d", {"X": [input]}, {"Out": [out]}, self._attrs)
        return out


class BatchNorm(Layer):
    """Batch normalisation; running mean/variance are non-trainable parameters (saved in state_dict)."""

    def __init__(
        self,
        num_channels: int,
        act: str | None = None,
        is_test: bool = False,
        momentum: float = 0.9,
        epsilon: float = 1e-05,
        param_attr: Any = None,
        bias_attr: Any = None,
        dtype: str = "float32",
        data_layout: str = "NCHW",
        in_place: bool = False,
        moving_mean_name: str | None = None,
        moving_variance_name: str | None = None,
        do_model_average_for_mean_and_var: bool = True,
        use_global_stats: bool = False,
        trainable_statistics: bool = False,
    ) -> None:
        super().__init__()
        _check_act("BatchNorm", act)
        _positive_int("BatchNorm", "num_channels", num_channels)
        self._attrs = batch_norm_attrs(
            "BatchNorm",
            momentum,
            epsilon,
            is_test,
            data_layout,
            use_global_stats,
            trainable_statistics,
        )
        self._act = act
        self._is_test = is_test
        self._momentum = momentum
        self._epsilon = epsilon
        self._data_layout = data_layout
        self._use_global_stats = use_global_stats
        self._trainable_statistics = trainable_statistics
        self._dtype = batch_norm_stat_dtype(dtype)
        self.weight = self.create_parameter(
            [num_channels], param_attr, self._dtype, False, Constant(1.0)
        )
        self.bias = self.create_parameter(
            [num_channels], bias_attr, self._dtype, True, Constant(0.0)
        )
        mean_attr, var_attr = batch_norm_moving_attrs(
            moving_mean_name, moving_variance_name, do_model_average_for_mean_and_var
        )
        self._mean = self.create_parameter([num_channels], mean_attr, self._dtype)
        self._variance = self.create_parameter([num_channels], var_attr, self._dtype)

    def forward(self, input: VarBase) -> VarBase:
        _check_input("BatchNorm", input)
        c = len(input.shape) > 1 and input.shape[1 if self._data_layout == "NCHW" else -1]
        if len(input.shape) < 2 or c != self.weight.shape[0]:
            raise ArgumentError(
                "BatchNorm",
                f"input '{input.name}' must have {self.weight.shape[0]} channels "
                f"(num_channels, {self._data_layout}), given shape {input.shape}",
            )
        y, saved_mean, saved_var = VarBase(None), VarBase(None), VarBase(None)
        _op(
            "batch_norm",
            {
                "X": [input],
                "Scale": [self.weight],
                "Bias": [self.bias],
                "Mean": [self._mean],
                "Variance": [self._variance],
            },
            {
                "Y": [y],
                "MeanOut": [self._mean],
                "VarianceOut": [self._variance],
                "SavedMean": [saved_mean],
                "SavedVariance": [saved_var],
            },
            dict(self._attrs, is_test=not self.training or self._is_test),
        )
        return _bias_act(y, None, 1, self._act)


class LayerNorm(Layer):
    """Layer normalisation over the trailing ``normalized_shape`` dims."""

    def __init__(
        self,
        normalized_shape: Any,
        scale: bool = True,
        shift: bool = True,
        epsilon: float = 1e-05,
        param_attr: Any = None,
        bias_attr: Any = None,
        act: str | None = None,
        dtype: str = "float32",
    ) -> None:
        super().__init__()
        _check_act("LayerNorm", act)
        if isinstance(normalized_shape, (int, np.integer)):
            normalized_shape = [int(normalized_shape)]
        self._normalized_shape = list(normalized_shape)
        for d in self._normalized_shape:
            if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d <= 0:
                raise ArgumentError(
                    "LayerNorm",
                    f"normalized_shape must hold positive ints, given {normalized_shape!r}",
                )
        self._scale, self._shift, self._epsilon, self._act = scale, shift, epsilon, act
        n = int(np.prod(self._normalized_shape))
        self.weight = (
            self.create_parameter([n], param_attr, dtype, False, Constant(1.0)) if scale else None
        )
        self.bias = self.create_parameter([n], bias_attr, dtype, True) if shift else None

    def forward(self, input: VarBase) -> VarBase:
        _check_input("LayerNorm", input)
        k = len(self._normalized_shape)
        if input.shape[-k:] != self._normalized_shape:
            raise ArgumentError(
                "LayerNorm",
                f"input '{input.name}' of shape {input.shape} does not end with "
                f"normalized_shape {self._normalized_shape}",
            )
        attrs = layer_norm_attrs(
            "LayerNorm", self._epsilon, len(input.shape) - k, input.shape, input.name
        )
        ins = {"X": [input]}
        if self.weight is not None:
            ins["Scale"] = [self.weight]
        if self.bias is not None:
            ins["Bias"] = [self.bias]
        y, mean, var = VarBase(None), VarBase(None), VarBase(None)
        _op(
            "layer_norm",
            ins,
            {"Y": [y], "Mean": [mean], "Variance": [var]},
            attrs,
        )
        return _bias_act(y, None, 1, self._act)


class Embedding(Layer):
    """Rows of a [vocab, dim] table looked up by int64 ids of any shape: the output has shape
    ``ids.shape + [dim]`` (op ``lookup_table_v2``, as Fluid 1.8's dygraph ``Embedding``; ids
    [N, 1] give [N, 1, dim])."""

    def __init__(
        self,
        size: Any,
        is_sparse: bool = False,
        is_distributed: bool = False,
        padding_idx: int | None = None,
        param_attr: Any = None,
        dtype: str = "float32",
    ) -> None:
        super().__init__()
        self._size, self._attrs = embedding_spec(
            "Embedding", size, is_sparse, is_distributed, padding_idx
        )
        self._is_sparse = is_sparse
        self._is_distributed = is_distributed
        self._padding_idx = self._attrs["padding_idx"]
        self._dtype = dtype
        self.weight = self.create_parameter(self._size, param_attr, dtype, False)

    def forward(self, input: VarBase) -> VarBase:
        _check_input("Embedding", input)
        if str(input.dtype) not in ("int64", "int32"):
            raise ArgumentTypeError(
                "Embedding", f"input '{input.name}' must hold int64 ids, given {input.dtype}"
            )
        out = VarBase(None)
        _op("lookup_table_v2", {"W": [self.weight], "Ids": [input]}, {"Out": [out]}, self._attrs)
        return out


class Dropout(Layer):
    """Dropout; active only in ``train()`` mode."""

    def __init__(
        self,
        p: float = 0.5,
        seed: int | None = None,
        dropout_implementation: str = "downgrade_in_infer",
        is_test: bool = False,
    ) -> None:
        super().__init__()
        if not 0 <= p <= 1:
            raise ArgumentError("Dropout", f"p must be in [0, 1], given {p}")
        if dropout_implementation not in ("downgrade_in_infer", "upscale_in_train"):
            raise ArgumentError(
                "Dropout", f"unknown dropout_implementation {dropout_implementation!r}"
            )
        self._dropout_prob = float(p)
        self._is_test = is_test
        self._seed = seed
        self._dropout_implementation = dropout_implementation

    def forward(self, input: VarBase) -> VarBase:
        _check_input("Dropout", input)
        out, mask = VarBase(None), VarBase(None)
        _op(
            "dropout",
            {"X": [input]},
            {"Out": [out], "Mask": [mask]},
            {
                "dropout_prob": self._dropout_prob,
                "is_test": not self.training or self._is_test,
                "fix_seed": self._seed is not None,
                "seed": self._seed or 0,
                "dropout_implementation": self._dropout_implementation,
            },
        )
        return out


_GRU_ACTS = {"identity": 0, "sigmoid": 1, "tanh": 2, "relu": 3}


class GRUUnit(Layer):
    """One GRU step: ``forward(input, hidden) -> (hidden, reset_hidden_prev, gate)``; size = 3 * hidden."""

    def __init__(
        self,
        size: int,
        param_attr: Any = None,
        bias_attr: Any = None,
        activation: str = "tanh",
        gate_activation: str = "sigmoid",
        origin_mode: bool = False,
        dtype: str = "float32",
    ) -> None:
        super().__init__()
        _positive_int("GRUUnit", "size", size)
        if size % 3:
            raise ArgumentError("GRUUnit", f"size must be 3 * hidden size, given {size}")
        for n, a in (("activation", activation), ("gate_activation", gate_activation)):
            if a not in _GRU_ACTS:
                raise ArgumentError(
                    "GRUUnit", f"{n} must be one of {sorted(_GRU_ACTS)}, given {a!r}"
                )
        self.activation = _GRU_ACTS[activation]
        self.gate_activation = _GRU_ACTS[gate_activation]
        self._origin_mode = origin_mode
        self._dtype = dtype
        d = size // 3
        self.weight = self.create_parameter([d, 3 * d], param_attr, dtype)
        self.bias = self.create_parameter([1, 3 * d], bias_attr, dtype, True)

    def forward(self, input: VarBase, hidden: VarBase) -> tuple:
        _check_input("GRUUnit", input)
        _check_input("GRUUnit", hidden)
        d = self.weight.shape[0]
        if input.shape[-1] != 3 * d or hidden.shape[-1] != d:
            raise ArgumentError(
                "GRUUnit",
                f"input must be [batch, {3 * d}] (size) and hidden [batch, {d}], given "
                f"input '{input.name}' {input.shape} and hidden '{hidden.name}' {hidden.shape}",
            )
        ins = {"Input": [input], "HiddenPrev": [hidden], "Weight": [self.weight]}
        if self.bias is not None:
            ins["Bias"] = [self.bias]
        gate, reset, hid = VarBase(None), VarBase(None), VarBase(None)
        _op(
            "gru_unit",
            ins,
            {"Gate": [gate], "ResetHiddenPrev": [reset], "Hidden": [hid]},
            {
                "activation": self.activation,
                "gate_activation": self.gate_activation,
                "origin_mode": self._origin_mode,
            },
        )
        return hid, reset, gate


class PRelu(Layer):
    """Parametric ReLU with one alpha ('all'), one per channel, or one per element."""

    def __init__(
        self,
        mode: str,
        channel: int | None = None,
        input_shape: Any = None,
        param_attr: Any = None,
        dtype: str = "float32",
    ) -> None:
        super().__init__("prelu")  # Fluid 1.8.5's parameter names: prelu_0.w_0
        self._mode = mode
        if mode == "all":
            shape = [1]
        elif mode == "channel":
            if channel is None:
                raise ArgumentError("PRelu", "mode 'channel' needs channel=")
            _positive_int("PRelu", "channel", channel)
            shape = [1, int(channel), 1, 1]
        elif mode == "element":
            if input_shape is None:
                raise ArgumentError("PRelu", "mode 'element' needs input_shape=")
            shape = [1] + list(input_shape)[1:]
        else:
            raise ArgumentError(
                "PRelu", f"mode must be 'all', 'channel' or 'element', given {mode!r}"
            )
        self._alpha_shape = shape
        self.weight = self.create_parameter(shape, param_attr, dtype, False, Constant(0.25))

    def forward(self, input: VarBase) -> VarBase:
        _check_input("PRelu", input)
        if self._mode == "channel" and (
            len(input.shape) < 2 or input.shape[1] != self._alpha_shape[1]
        ):
            raise ArgumentError(
                "PRelu",
                f"mode 'channel' with channel={self._alpha_shape[1]} needs input "
                f"'{input.name}' of shape [N, {self._alpha_shape[1]}, ...], given {input.shape}",
            )
        out = VarBase(None)
        _op("prelu", {"X": [input], "Alpha": [self.weight]}, {"Out": [out]}, {"mode": self._mode})
        return out


def _wrap_layers(namespace: dict, names: list, module: str) -> None:
    """Argument errors of each layer's constructor and forward (its own or one it inherits
    from a shared base such as ``_ConvLayer``) name the layer and the user's line."""
    from oar.layers._user_line import with_user_line

    for name in names:
        cls = namespace[name]
        # the containers' forward only passes their sublayers' errors on
        meths = ("__init__", "forward") if cls.__module__ == module else ("__init__",)
        for meth in meths:
            owner = next(k for k in cls.__mro__ if meth in k.__dict__)
            if owner not in (Layer, object):
                fn = owner.__dict__[meth]
                if getattr(fn, "__oar_user_line__", False):  # wrapped for its own class
                    fn = fn.__wrapped__
                setattr(cls, meth, with_user_line(fn, name))


_wrap_layers(globals(), __all__, __name__)

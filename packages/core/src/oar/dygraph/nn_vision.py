"""Dygraph layers for volumes and per-sample normalisation: Conv3D, Conv3DTranspose,
GroupNorm, InstanceNorm (arguments checked by the same functions as the static layers)."""

from __future__ import annotations

from typing import Any

from oar.dygraph.layers import Layer
from oar.dygraph.nn import (
    _bias_act,
    _check_act,
    _check_input,
    _ConvLayer,
    _op,
    _positive_int,
    _wrap_layers,
)
from oar.dygraph.varbase import VarBase
from oar.errors import ArgumentError
from oar.initializer import Constant, Normal
from oar.layers.conv import conv_filter_std
from oar.layers.conv3d import conv3d_spec, conv3d_transpose_spec
from oar.layers.norm_extra import group_norm_attrs

__all__ = [
    "Conv3D",
    "Conv3DTranspose",
    "GroupNorm",
    "InstanceNorm",
    "BilinearTensorProduct",
    "SpectralNorm",
    "TreeConv",
]


class Conv3D(_ConvLayer):
    """3-D convolution on NCDHW input; filter [num_filters, num_channels/groups, kd, kh, kw]."""

    _layout = "NCDHW"

    def __init__(
        self,
        num_channels,
        num_filters,
        filter_size,
        stride=1,
        padding=0,
        dilation=1,
        groups=None,
        param_attr=None,
        bias_attr=None,
        use_cudnn=True,
        act=None,
        dtype="float32",
    ) -> None:
        super().__init__()
        _check_act("Conv3D", act)
        self._num_channels = _positive_int("Conv3D", "num_channels", num_channels)
        spec = conv3d_spec(
            "Conv3D",
            self._num_channels,
            num_filters,
            filter_size,
            stride,
            padding,
            dilation,
            groups,
            use_cudnn,
        )
        std = conv_filter_std(spec.filter_shape, self._num_channels)
        self._build(
            "conv3d",
            spec,
            self._num_channels,
            num_filters,
            param_attr,
            bias_attr,
            act,
            dtype,
            Normal(0.0, std),
        )


class Conv3DTranspose(_ConvLayer):
    """Transposed 3-D convolution on NCDHW input; filter [num_channels, num_filters/groups, *k]."""

    _layout = "NCDHW"

    def __init__(
        self,
        num_channels,
        num_filters,
        filter_size,
        padding=0,
        stride=1,
        dilation=1,
        groups=None,
        param_attr=None,
        bias_attr=None,
        use_cudnn=True,
        act=None,
        dtype="float32",
    ) -> None:
        super().__init__()
        _check_act("Conv3DTranspose", act)
        self._num_channels = _positive_int("Conv3DTranspose", "num_channels", num_channels)
        spec = conv3d_transpose_spec(
            "Conv3DTranspose",
            self._num_channels,
            num_filters,
            None,
            filter_size,
            padding,
            stride,
            dilation,
            groups,
            use_cudnn,
        )
        self._build(
            "conv3d_transpose",
            spec,
            self._num_channels,
            num_filters,
            param_attr,
            bias_attr,
            act,
            dtype,
        )


def _affine(layer: Layer, c: int, param_attr: Any, bias_attr: Any, dtype: str, scale: str) -> None:
    """The scale (attribute ``scale``) and the bias parameters, each None if its attr is False."""
    setattr(layer, scale, layer.create_parameter([c], param_attr, dtype, False, Constant(1.0)))
    layer.bias = layer.create_parameter([c], bias_attr, dtype, True)


def _norm_inputs(input: VarBase, scale: Any, bias: Any) -> dict:
    ins = {"X": [input]}
    if scale is not None:
        ins["Scale"] = [scale]
    if bias is not None:
        ins["Bias"] = [bias]
    return ins


class GroupNorm(Layer):
    """Normalise each sample over groups of ``ceil(channels / groups)`` channels; then scale by
    ``weight`` and shift by ``bias``, each only when its attr is given (Fluid 1.8.5's default
    has neither)."""

    def __init__(
        self,
        channels,
        groups,
        epsilon=1e-05,
        param_attr=None,
        bias_attr=None,
        act=None,
        data_layout="NCHW",
        dtype="float32",
    ) -> None:
        super().__init__()
        _check_act("GroupNorm", act)
        self._channels = _positive_int("GroupNorm", "channels", channels)
        shape = [-1, channels] if data_layout == "NCHW" else [-1, -1, channels]
        self._attrs = group_norm_attrs("GroupNorm", shape, groups, epsilon, data_layout)
        self._groups, self._epsilon, self._act = groups, epsilon, act
        # as in Fluid 1.8.5, weight and bias exist only when their attr is given (truthy)
        _affine(
            self,
            self._channels,
            param_attr if param_attr else False,
            bias_attr if bias_attr else False,
            dtype,
            "weight",
        )

    def forward(self, input: VarBase) -> VarBase:
        _check_input("GroupNorm", input)
        axis = -1 if self._attrs["data_layout"] == "NHWC" else 1
        if len(input.shape) < 2 or input.shape[axis] != self._channels:
            raise ArgumentError(
                "GroupNorm",
                f"input '{input.name}' must have {self._channels} channels ({self._attrs['data_layout']}), "
                f"given shape {input.shape}",
            )
        y, mean, var = VarBase(None), VarBase(None), VarBase(None)
        _op(
            "group_norm",
            _norm_inputs(input, self.weight, self.bias),
            {"Y": [y], "Mean": [mean], "Variance": [var]},
            self._attrs,
        )
        return _bias_act(y, None, 1, self._act)


class InstanceNorm(Layer):
    """Normalise each channel of each sample over its spatial dims, then scale (parameter
    ``scale``, as Fluid 1.8.5 names it) and shift (``bias``)."""

    def __init__(
        self, num_channels, epsilon=1e-05, param_attr=None, bias_attr=None, dtype="float32"
    ) -> None:
        super().__init__()
        self._num_channels = _positive_int("InstanceNorm", "num_channels", num_channels)
        self._epsilon = float(epsilon)
        _affine(self, self._num_channels, param_attr, bias_attr, dtype, "scale")

    def forward(self, input: VarBase) -> VarBase:
        _check_input("InstanceNorm", input)
        if not 2 <= len(input.shape) <= 5 or input.shape[1] != self._num_channels:
            raise ArgumentError(
                "InstanceNorm",
                f"input '{input.name}' must be 2-D to 5-D with {self._num_channels} channels, "
                f"given shape {input.shape}",
            )
        y, mean, var = VarBase(None), VarBase(None), VarBase(None)
        _op(
            "instance_norm",
            _norm_inputs(input, self.scale, self.bias),
            {"Y": [y], "SavedMean": [mean], "SavedVariance": [var]},
            {"epsilon": self._epsilon},
        )
        return y


class BilinearTensorProduct(Layer):
    """``out[n, k] = x[n] W[k] y[n]^T + b[k]``, W [output_dim, input1_dim, input2_dim]."""

    def __init__(
        self,
        input1_dim,
        input2_dim,
        output_dim,
        name=None,
        act=None,
        param_attr=None,
        bias_attr=None,
        dtype="float32",
    ) -> None:
        super().__init__()
        _check_act("BilinearTensorProduct", act)
        self._input1_dim = _positive_int("BilinearTensorProduct", "input1_dim", input1_dim)
        self._input2_dim = _positive_int("BilinearTensorProduct", "input2_dim", input2_dim)
        self._output_dim = _positive_int("BilinearTensorProduct", "output_dim", output_dim)
        self._act, self._name = act, name
        self.weight = self.create_parameter(
            [output_dim, input1_dim, input2_dim], param_attr, dtype, False
        )
        self.bias = self.create_parameter([1, output_dim], bias_attr, dtype, True)

    def forward(self, x: VarBase, y: VarBase) -> VarBase:
        _check_input("BilinearTensorProduct", x)
        _check_input("BilinearTensorProduct", y)
        if list(x.shape[1:]) != [self._input1_dim] or list(y.shape[1:]) != [self._input2_dim]:
            raise ArgumentError(
                "BilinearTensorProduct",
                f"x must be [N, {self._input1_dim}] and y [N, {self._input2_dim}], given "
                f"{list(x.shape)} and {list(y.shape)}",
            )
        ins = {"X": [x], "Y": [y], "Weight": [self.weight]}
        if self.bias is not None:
            ins["Bias"] = [self.bias]
        out = VarBase(None)
        _op("bilinear_tensor_product", ins, {"Out": [out]}, {})
        return _bias_act(out, None, 1, self._act)


class SpectralNorm(Layer):
    """``weight / sigma`` with sigma estimated by power iteration on persistable U, V."""

    def __init__(self, weight_shape, dim=0, power_iters=1, eps=1e-12, dtype="float32") -> None:
        from oar.framework.param_attr import ParamAttr

        super().__init__()
        shape = list(weight_shape)
        if len(shape) < 2 or not all(isinstance(d, int) and d > 0 for d in shape):
            raise ArgumentError(
                "SpectralNorm", f"weight_shape must be >= 2 positive ints, given {weight_shape!r}"
            )
        if not 0 <= dim < len(shape):
            raise ArgumentError("SpectralNorm", f"dim must be in [0, {len(shape)}), given {dim!r}")
        self._dim, self._power_iters, self._eps = dim, int(power_iters), float(eps)
        h = shape[dim]
        w = 1
        for i, d in enumerate(shape):
            if i != dim:
                w *= d
        self.weight_u = self.create_parameter(
            [h], ParamAttr(trainable=False), dtype, False, Normal(0.0, 1.0)
        )
        self.weight_v = self.create_parameter(
            [w], ParamAttr(trainable=False), dtype, False, Normal(0.0, 1.0)
        )
        self.weight_u.stop_gradient = True
        self.weight_v.stop_gradient = True

    def forward(self, weight: VarBase) -> VarBase:
        _check_input("SpectralNorm", weight)
        out = VarBase(None)
        _op(
            "spectral_norm",
            {"Weight": [weight], "U": [self.weight_u], "V": [self.weight_v]},
            {"Out": [out]},
            {"dim": self._dim, "power_iters": self._power_iters, "eps": self._eps},
        )
        return out


class TreeConv(Layer):
    """Tree-based convolution over ``nodes_vector`` [B, nodes, feature_size] and ``edge_set``
    [B, edges, 2] (op ``tree_conv``): filter [feature_size, 3, output_size, num_filters],
    optional bias [num_filters], activation (tanh by default)."""

    def __init__(
        self,
        feature_size,
        output_size,
        num_filters=1,
        max_depth=2,
        act="tanh",
        param_attr=None,
        bias_attr=None,
        name=None,
        dtype="float32",
    ) -> None:
        super().__init__()
        _check_act("TreeConv", act)
        self._feature_size = _positive_int("TreeConv", "feature_size", feature_size)
        self._output_size = _positive_int("TreeConv", "output_size", output_size)
        self._num_filters = _positive_int("TreeConv", "num_filters", num_filters)
        self._max_depth = _positive_int("TreeConv", "max_depth", max_depth)
        self._act, self._name = act, name
        self.weight = self.create_parameter(
            [feature_size, 3, output_size, num_filters], param_attr, dtype, False
        )
        self.bias = (
            None
            if bias_attr is None or bias_attr is False
            else self.create_parameter([num_filters], bias_attr, dtype, True)
        )

    def forward(self, nodes_vector: VarBase, edge_set: VarBase) -> VarBase:
        _check_input("TreeConv", nodes_vector)
        _check_input("TreeConv", edge_set)
        out = VarBase(None)
        _op(
            "tree_conv",
            {"NodesVector": [nodes_vector], "EdgeSet": [edge_set], "Filter": [self.weight]},
            {"Out": [out]},
            {"max_depth": self._max_depth},
        )
        return _bias_act(out, self.bias, 3, self._act)


_wrap_layers(globals(), __all__, __name__)

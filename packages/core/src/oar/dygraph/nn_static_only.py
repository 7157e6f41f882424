"""``fluid.dygraph.nn.RowConv`` and ``SequenceConv``: as in Fluid 1.8.5, layers for static
programs only. They are refused under ``dygraph.guard()`` (their ops need LoD sequences);
built under ``program_guard`` they create their parameters at the first call (named after
``name_scope``) and append ``row_conv`` / ``sequence_conv`` to the program."""

from __future__ import annotations

from typing import Any

from oar.dygraph.layers import Layer
from oar.dygraph.nn import _wrap_layers
from oar.errors import ArgumentError
from oar.framework.mode import _dygraph_tracer

__all__ = ["RowConv", "SequenceConv"]


def _static_only(layer: str) -> None:
    if _dygraph_tracer() is not None:
        raise ArgumentError(
            layer,
            "is not supported in dygraph mode (nor in Fluid 1.8.5): build it under "
            "fluid.program_guard, or call fluid.layers."
            + ("row_conv" if layer == "RowConv" else "sequence_conv")
            + " in a static program",
        )


def _width(layer: str, input: Any) -> int:
    if len(input.shape) != 2 or input.shape[1] < 0:
        raise ArgumentError(
            layer, f"input must be [rows, width] with a known width, given {list(input.shape)}"
        )
    return int(input.shape[1])


class RowConv(Layer):
    """Lookahead convolution: ``out[t] = sum_i w[i] * x[t + i]`` within each sequence,
    filter [future_context_size + 1, width]."""

    _static_only = True

    def __init__(self, name_scope, future_context_size, param_attr=None, act=None) -> None:
        _static_only("RowConv")
        if (
            isinstance(future_context_size, bool)
            or not isinstance(future_context_size, int)
            or future_context_size < 0
        ):
            raise ArgumentError(
                "RowConv", f"future_context_size must be an int >= 0, given {future_context_size!r}"
            )
        super().__init__(name_scope)
        self._future, self._param_attr, self._act = future_context_size, param_attr, act
        self.weight: Any = None

    def forward(self, input: Any) -> Any:
        width = _width("RowConv", input)
        if self.weight is None:
            self.weight = self.create_parameter(
                [self._future + 1, width], self._param_attr, input.dtype
            )
        out = self._helper.create_variable_for_type_inference(input.dtype)
        self._helper.append_op("row_conv", {"X": [input], "Filter": [self.weight]}, {"Out": [out]})
        return self._helper.append_activation(out, self._act)


class SequenceConv(Layer):
    """Convolution over each sequence's rows: a window of ``filter_size`` rows centred on
    each row (zeros outside the sequence), filter [filter_size * width, num_filters], bias
    [num_filters] unless ``bias_attr`` is False."""

    _static_only = True

    def __init__(
        self,
        name_scope,
        num_filters,
        filter_size=3,
        filter_stride=1,
        padding=None,
        bias_attr=None,
        param_attr=None,
        act=None,
    ) -> None:
        _static_only("SequenceConv")
        for arg, v in (("num_filters", num_filters), ("filter_size", filter_size)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ArgumentError("SequenceConv", f"{arg} must be a positive int, given {v!r}")
        if filter_stride != 1:
            raise ArgumentError(
                "SequenceConv", f"filter_stride must be 1 (as in Fluid), given {filter_stride!r}"
            )
        super().__init__(name_scope)
        self._num_filters, self._filter_size = num_filters, filter_size
        self._param_attr, self._bias_attr, self._act = param_attr, bias_attr, act
        self.weight: Any = None
        self.bias: Any = None

    def forward(self, input: Any) -> Any:
        width = _width("SequenceConv", input)
        if self.weight is None:
            self.weight = self.create_parameter(
                [self._filter_size * width, self._num_filters], self._param_attr, input.dtype
            )
            self.bias = self.create_parameter(
                [self._num_filters], self._bias_attr, input.dtype, is_bias=True
            )
        helper = self._helper
        out = helper.create_variable_for_type_inference(input.dtype)
        attrs = {
            "contextLength": self._filter_size,
            "contextStart": -(self._filter_size // 2),
            "contextStride": 1,
        }
        helper.append_op(
            "sequence_conv", {"X": [input], "Filter": [self.weight]}, {"Out": [out]}, attrs
        )
        if self.bias is not None:
            pre, out = out, helper.create_variable_for_type_inference(input.dtype)
            helper.append_op(
                "elementwise_add", {"X": [pre], "Y": [self.bias]}, {"Out": [out]}, {"axis": 1}
            )
        return helper.append_activation(out, self._act)


_wrap_layers(globals(), __all__, __name__)

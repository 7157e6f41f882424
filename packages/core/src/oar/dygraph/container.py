"""Containers: ``Sequential``, ``LayerList``, ``ParameterList``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from oar.dygraph.layers import Layer
from oar.dygraph.varbase import ParamBase

__all__ = ["Sequential", "LayerList", "ParameterList"]


class Sequential(Layer):
    """Calls its sublayers in order; built from layers or (name, layer) pairs."""

    def __init__(self, *layers: Any) -> None:
        super().__init__()
        if len(layers) > 0 and isinstance(layers[0], tuple):
            for name, layer in layers:
                self.add_sublayer(name, layer)
        else:
            for i, layer in enumerate(layers):
                self.add_sublayer(str(i), layer)

    def __getitem__(self, name: Any) -> Layer:
        if isinstance(name, int):
            return list(self._sub_layers.values())[name]
        return self._sub_layers[name]

    def __setitem__(self, name: Any, layer: Layer) -> None:
        self.add_sublayer(str(name), layer)

    def __delitem__(self, name: Any) -> None:
        del self._sub_layers[str(name)]

    def __len__(self) -> int:
        return len(self._sub_layers)

    def forward(self, input: Any) -> Any:
        for layer in self._sub_layers.values():
            input = layer(input)
        return input


class LayerList(Layer):
    """A list of sublayers, registered under '0', '1', ..."""

    def __init__(self, sublayers: Iterable | None = None) -> None:
        super().__init__()
        for i, layer in enumerate(sublayers or ()):
            self.add_sublayer(str(i), layer)

    def __getitem__(self, idx: Any) -> Any:
        if isinstance(idx, slice):
            return self.__class__(list(self._sub_layers.values())[idx])
        return list(self._sub_layers.values())[idx]

    def __setitem__(self, idx: int, layer: Layer) -> None:
        key = list(self._sub_layers)[idx]
        self._sub_layers[key] = layer

    def __len__(self) -> int:
        return len(self._sub_layers)

    def __iter__(self):
        return iter(self._sub_layers.values())

    def append(self, sublayer: Layer) -> LayerList:
        self.add_sublayer(str(len(self)), sublayer)
        return self

    def insert(self, index: int, sublayer: Layer) -> None:
        layers = list(self._sub_layers.values())
        layers.insert(index, sublayer)
        self._sub_layers.clear()
        for i, layer in enumerate(layers):
            self.add_sublayer(str(i), layer)

    def extend(self, sublayers: Iterable) -> LayerList:
        for layer in sublayers:
            self.append(layer)
        return self


class ParameterList(Layer):
    """A list of parameters, registered under '0', '1', ..."""

    def __init__(self, parameters: Iterable | None = None) -> None:
        super().__init__()
        for i, p in enumerate(parameters or ()):
            self.add_parameter(str(i), p)

    def __getitem__(self, idx: int) -> ParamBase:
        return list(self._parameters.values())[idx]

    def __setitem__(self, idx: int, param: ParamBase) -> None:
        self._parameters[list(self._parameters)[idx]] = param

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self):
        return iter(self._parameters.values())

    def append(self, parameter: ParamBase) -> ParameterList:
        self.add_parameter(str(len(self)), parameter)
        return self

"""``fluid.dygraph.Layer``: a module of parameters and sublayers with a ``forward``.

Assigning a parameter or a Layer to an attribute registers it, so
``parameters()`` and ``state_dict()`` find it under a structured name
(``conv1.weight``), which is the key checkpoints use.
"""

from __future__ import annotations

import collections
import re
from collections.abc import Iterator
from typing import Any

import numpy as np

from oar.dygraph.varbase import ParamBase, VarBase
from oar.framework import mode as _mode
from oar.framework import unique_name
from oar.framework.variable import Parameter
from oar.layer_helper import LayerHelper

__all__ = ["Layer"]


# set by dygraph-to-static while it builds a program: routes Layer calls there
_static_call: Any = None


def _camel_to_snake(name: str) -> str:
    s = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(
        r"([a-z])([A-Z])", r"\1_\2", s
    ).lower()  # Conv2D -> conv2d, BatchNorm -> batch_norm


class Layer:
    """Base class of dygraph models and layers."""

    def __init__(self, name_scope: str | None = None, dtype: str = "float32") -> None:
        self.training = True
        if name_scope is None:
            name_scope = _camel_to_snake(type(self).__name__)
        self._full_name = unique_name.generate(name_scope)
        self._helper = LayerHelper(self._full_name, name=self._full_name)
        self._dtype = dtype
        self._parameters: collections.OrderedDict = collections.OrderedDict()
        self._sub_layers: collections.OrderedDict = collections.OrderedDict()
        self._buffers: collections.OrderedDict = collections.OrderedDict()
        self._forward_pre_hooks: collections.OrderedDict = collections.OrderedDict()
        self._forward_post_hooks: collections.OrderedDict = collections.OrderedDict()
        self._hook_id = 0

    # --- identity and mode ------------------------------------------------------------------------
    def full_name(self) -> str:
        return self._full_name

    def train(self) -> None:
        """Training mode for this layer and its sublayers (dropout on, batch norm updates stats)."""
        from oar.framework.mode import _dygraph_tracer

        t = _dygraph_tracer()
        if t is not None:
            t._train_mode = True
        for layer in self.sublayers(include_sublayers=True) + [self]:
            layer.training = True

    def eval(self) -> None:
        """Evaluation mode: dropout off, batch norm uses its running statistics."""
        from oar.framework.mode import _dygraph_tracer

        t = _dygraph_tracer()
        if t is not None:
            t._train_mode = False
        for layer in self.sublayers(include_sublayers=True) + [self]:
            layer.training = False

    # --- building -------------------------------------------------------------------------------
    def create_parameter(
        self,
        shape: Any,
        attr: Any = None,
        dtype: str = "float32",
        is_bias: bool = False,
        default_initializer: Any = None,
    ) -> ParamBase | None:
        """A parameter named after this layer (``<full_name>.w_N`` / ``.b_N``); None if attr is False."""
        return self._helper.create_parameter(attr, shape, dtype, is_bias, default_initializer)

    def create_variable(
        self,
        name: str | None = None,
        persistable: bool | None = None,
        dtype: Any = None,
        type: Any = None,
    ) -> VarBase:
        name = name if name is not None else unique_name.generate(f"{self._full_name}.var")
        return VarBase(None, name=name, persistable=bool(persistable), dtype=dtype)

    def add_sublayer(self, name: str, sublayer: Layer) -> Layer:
        if not isinstance(sublayer, Layer):
            raise TypeError(
                f"add_sublayer: '{name}' must be a Layer, given {type(sublayer).__name__}"
            )
        self._sub_layers[name] = sublayer
        return sublayer

    def add_parameter(self, name: str, parameter: ParamBase | None) -> ParamBase | None:
        if "_parameters" not in self.__dict__:
            raise RuntimeError("add_parameter: call super().__init__() before adding parameters")
        if parameter is not None and not isinstance(parameter, ParamBase):
            raise TypeError(
                f"add_parameter: '{name}' must be a Parameter, given {type(parameter).__name__}"
            )
        self._parameters[name] = parameter
        return parameter

    def register_buffer(self, name: str, variable: VarBase, persistable: bool = True) -> None:
        if not isinstance(variable, VarBase):
            raise TypeError(
                f"register_buffer: '{name}' must be a dygraph variable, given {type(variable).__name__}"
            )
        variable.persistable = persistable
        self._buffers[name] = variable

    def buffers(self, include_sublayers: bool = True) -> list:
        return [b for _, b in self.named_buffers(include_sublayers=include_sublayers)]

    def named_buffers(self, prefix: str = "", include_sublayers: bool = True) -> Iterator:
        for lp, layer in (
            self.named_sublayers(prefix=prefix, include_self=True)
            if include_sublayers
            else [(prefix, self)]
        ):
            for n, b in layer._buffers.items():
                yield (lp + ("." if lp else "") + n, b)

    # --- traversal ------------------------------------------------------------------------------
    def parameters(self, include_sublayers: bool = True) -> list:
        return [p for _, p in self.named_parameters(include_sublayers=include_sublayers)]

    def named_parameters(self, prefix: str = "", include_sublayers: bool = True) -> Iterator:
        seen: set = set()
        layers = (
            self.named_sublayers(prefix=prefix, include_self=True)
            if include_sublayers
            else [(prefix, self)]
        )
        for lp, layer in layers:
            for n, p in layer._parameters.items():
                if p is None or id(p) in seen:
                    continue
                seen.add(id(p))
                yield (lp + ("." if lp else "") + n, p)

    def sublayers(self, include_sublayers: bool = True) -> list:
        return [layer for _, layer in self.named_sublayers(include_sublayers=include_sublayers)]

    def named_sublayers(
        self,
        prefix: str = "",
        include_sublayers: bool = True,
        include_self: bool = False,
        layers_set: set | None = None,
    ) -> Iterator:
        if layers_set is None:
            layers_set = set()
        if include_self and id(self) not in layers_set:
            layers_set.add(id(self))
            yield prefix, self
        for key, layer in self._sub_layers.items():
            if layer is None:
                continue
            lp = prefix + ("." if prefix else "") + key
            if include_sublayers:
                yield from layer.named_sublayers(lp, True, True, layers_set)
            elif id(layer) not in layers_set:
                layers_set.add(id(layer))
                yield lp, layer

    def clear_gradients(self) -> None:
        for p in self.parameters():
            if p.trainable:
                p.clear_gradient()

    # --- calling --------------------------------------------------------------------------------
    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define forward()")

    def __call__(self, *inputs: Any, **kwargs: Any) -> Any:
        if _static_call is not None:  # declarative is building a static program
            return _static_call(self, inputs, kwargs)
        if _mode._tracer is None:  # static mode: the layer appends its ops to the program
            from oar.dygraph.dygraph_to_static.bridge import static_mode_call

            return static_mode_call(self, inputs, kwargs)
        return self._call(inputs, kwargs)

    def _call(self, inputs: tuple, kwargs: dict, forward: Any = None) -> Any:
        for hook in self._forward_pre_hooks.values():
            res = hook(self, inputs)
            if res is not None:
                inputs = res if isinstance(res, tuple) else (res,)
        outputs = (forward or self.forward)(*inputs, **kwargs)
        for hook in self._forward_post_hooks.values():
            res = hook(self, inputs, outputs)
            if res is not None:
                outputs = res
        return outputs

    def register_forward_pre_hook(self, hook: Any) -> Any:
        return self._add_hook(self._forward_pre_hooks, hook)

    def register_forward_post_hook(self, hook: Any) -> Any:
        return self._add_hook(self._forward_post_hooks, hook)

    def _add_hook(self, table: dict, hook: Any) -> Any:
        hid = self._hook_id
        self._hook_id += 1
        table[hid] = hook

        class _Handle:
            def remove(self_inner) -> None:
                table.pop(hid, None)

        return _Handle()

    # --- state ----------------------------------------------------------------------------------
    def state_dict(
        self,
        destination: dict | None = None,
        include_sublayers: bool = True,
        structured_name_prefix: str = "",
    ) -> collections.OrderedDict:
        """Structured name (``fc.weight``) -> parameter or persistable buffer (eager variables)."""
        out = destination if destination is not None else collections.OrderedDict()
        for name, p in self.named_parameters(
            prefix=structured_name_prefix.rstrip("."), include_sublayers=include_sublayers
        ):
            out[name] = p
        for name, b in self.named_buffers(
            prefix=structured_name_prefix.rstrip("."), include_sublayers=include_sublayers
        ):
            if b.persistable:
                out[name] = b
        return out

    def set_dict(
        self, stat_dict: dict, include_sublayers: bool = True, use_structured_name: bool = True
    ) -> None:
        """Copy values from ``stat_dict`` (structured names, or parameter names) into this layer."""
        own = self.state_dict(include_sublayers=include_sublayers)
        missing = []
        for key, var in own.items():
            k = key if use_structured_name else var.name
            if k in stat_dict:
                value = stat_dict[k]
            elif var.name in stat_dict:
                value = stat_dict[var.name]
            else:
                missing.append(k)
                continue
            arr = value.numpy() if isinstance(value, VarBase) else np.asarray(value)
            if var._value is not None and list(arr.shape) != var.shape:
                raise ValueError(
                    f"set_dict: '{key}' ({var.name}) has shape {var.shape}, the dict gives "
                    f"shape {list(arr.shape)}"
                )
            arr = np.array(arr, dtype=var.dtype if var._value is not None else arr.dtype)
            tracer = _mode._dygraph_tracer()
            var._value = tracer.to_device(arr) if tracer is not None else arr
        if missing:
            raise KeyError(
                f"set_dict: no value for {missing} in the given state dict "
                f"(it has {sorted(stat_dict)[:10]}{'...' if len(stat_dict) > 10 else ''})"
            )

    load_dict = set_dict
    set_state_dict = set_dict

    # --- attribute registration -----------------------------------------------------------------
    def __setattr__(self, name: str, value: Any) -> None:
        params = self.__dict__.get("_parameters")
        if isinstance(value, (ParamBase, Parameter)):  # Parameter: built in static mode
            if params is None:
                raise RuntimeError("call super().__init__() before assigning parameters")
            self.__dict__.pop(name, None)
            params[name] = value
            return
        if isinstance(value, Layer):
            layers = self.__dict__.get("_sub_layers")
            if layers is None:
                raise RuntimeError("call super().__init__() before assigning sublayers")
            self.__dict__.pop(name, None)
            layers[name] = value
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"assigning {type(value).__name__} to parameter '{name}': expected a Parameter "
                    f"or None"
                )
            params[name] = None
            return
        layers = self.__dict__.get("_sub_layers")
        if layers is not None and name in layers:
            if value is not None:
                raise TypeError(
                    f"assigning {type(value).__name__} to sublayer '{name}': expected a Layer or None"
                )
            layers[name] = None
            return
        object.__setattr__(self, name, value)

    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        for table in ("_parameters", "_sub_layers", "_buffers"):
            t = d.get(table)
            if t is not None and name in t:
                return t[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        for table in ("_parameters", "_sub_layers", "_buffers"):
            t = self.__dict__.get(table)
            if t is not None and name in t:
                del t[name]
                return
        object.__delattr__(self, name)

    def __dir__(self) -> list:
        return sorted(
            set(super().__dir__())
            | set(self._parameters)
            | set(self._sub_layers)
            | set(self._buffers)
        )

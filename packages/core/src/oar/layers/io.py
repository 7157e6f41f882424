"""Data layers: declare the variables a program is fed (and the 1.5-1.8 reader layers)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from oar.errors import ArgumentError, ArgumentTypeError
from oar.framework.dtypes import VarType, convert_dtype
from oar.framework.program import default_main_program

__all__ = ["data", "py_reader", "create_py_reader_by_data", "double_buffer", "read_file", "load"]


def data(
    name: str,
    shape: Sequence,
    append_batch_size: bool = True,
    dtype: Any = "float32",
    lod_level: int = 0,
    type: str = VarType.LOD_TENSOR,
    stop_gradient: bool = True,
) -> Any:
    """Declare a fed variable. ``shape`` is one sample's; a -1 batch dim is prepended
    unless ``append_batch_size=False`` or ``shape`` already holds a -1/None."""
    if not isinstance(name, str) or not name:
        raise ArgumentTypeError("data", f"name must be a non-empty str, given {name!r}")
    if not isinstance(shape, (list, tuple)):
        raise TypeError(f"data '{name}': shape must be a list or tuple, given {type_name(shape)}")
    shape = list(shape)
    for i, d in enumerate(shape):
        if d is None:
            shape[i] = -1
            append_batch_size = False
        elif not isinstance(d, int):
            raise TypeError(f"data '{name}': shape entries must be ints, given {shape!r}")
        elif d < 0:
            if d != -1:
                raise ValueError(
                    f"data '{name}': shape entries must be positive or -1, given {shape}"
                )
            append_batch_size = False
    if append_batch_size:
        shape = [-1] + shape
    if lod_level < 0:
        raise ValueError(f"data '{name}': lod_level must be >= 0, given {lod_level}")
    block = default_main_program().global_block()
    if name in block.vars:
        return block.vars[name]
    return block.create_var(
        name=name,
        shape=shape,
        dtype=convert_dtype(dtype),
        type=type,
        stop_gradient=stop_gradient,
        lod_level=lod_level,
        is_data=True,
        need_check_feed=False,
    )


def fluid_data(name: str, shape: Sequence, dtype: Any = "float32", lod_level: int = 0) -> Any:
    """``fluid.data``: the shape is taken as given (None/-1 = any) and feeds are checked exactly."""
    shape = [-1 if d is None else d for d in shape]
    var = data(name, shape, append_batch_size=False, dtype=dtype, lod_level=lod_level)
    var.need_check_feed = True
    return var


def type_name(x: Any) -> str:
    return type(x).__name__


# --- Fluid 1.5-1.8 reader layers: py_reader / create_py_reader_by_data / read_file ---------------
class ReaderVariable:
    """What ``layers.py_reader`` returns: the reader of a program's data layers.

    ``read_file(reader)`` gives the data variables; the reader is fed with
    ``decorate_paddle_reader`` / ``decorate_tensor_provider`` (or the 1.8
    ``decorate_sample_list_generator`` / ``decorate_batch_generator``) and driven
    with ``start()`` / ``reset()`` around ``exe.run`` until ``fluid.core.EOFException``.
    It is a non-iterable ``fluid.io.PyReader`` (oar-data) over those variables.
    """

    def __init__(self, name: str, variables: list, capacity: int, use_double_buffer: bool) -> None:
        from oar._facade import lookup

        py_reader_cls = lookup("io.PyReader")  # MissingPluginError naming oar-data when absent
        self.name = name
        self.variables = list(variables)
        self._reader = py_reader_cls(
            feed_list=self.variables,
            capacity=capacity,
            use_double_buffer=use_double_buffer,
            iterable=False,
        )

    def start(self) -> None:
        self._reader.start()

    def reset(self) -> None:
        self._reader.reset()

    @property
    def queue(self) -> Any:
        return self._reader.queue

    def decorate_sample_list_generator(self, reader: Any, places: Any = None) -> None:
        self._reader.decorate_sample_list_generator(reader, places)

    def decorate_batch_generator(self, reader: Any, places: Any = None) -> None:
        self._reader.decorate_batch_generator(reader, places)

    def decorate_sample_generator(
        self, sample_generator: Any, batch_size: int, drop_last: bool = True, places: Any = None
    ) -> None:
        self._reader.decorate_sample_generator(sample_generator, batch_size, drop_last, places)

    decorate_paddle_reader = decorate_sample_list_generator
    decorate_tensor_provider = decorate_batch_generator

    def __repr__(self) -> str:
        return f"ReaderVariable({self.name!r}, slots={[v.name for v in self.variables]})"


def _capacity(layer: str, capacity: Any) -> int:
    if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity <= 0:
        raise ArgumentError(layer, f"capacity must be a positive int, given {capacity!r}")
    return capacity


def py_reader(
    capacity: int,
    shapes: Sequence,
    dtypes: Sequence,
    lod_levels: Sequence | None = None,
    name: str | None = None,
    use_double_buffer: bool = True,
) -> ReaderVariable:
    """A reader of ``len(shapes)`` data layers fed from Python (use ``read_file`` for the layers)."""
    from oar.framework import unique_name

    _capacity("py_reader", capacity)
    if not isinstance(shapes, (list, tuple)) or not shapes:
        raise ArgumentError(
            "py_reader", f"shapes must be a non-empty list of shapes, given {shapes!r}"
        )
    if not isinstance(dtypes, (list, tuple)) or len(dtypes) != len(shapes):
        raise ArgumentError(
            "py_reader", f"dtypes must list one dtype per shape ({len(shapes)}), given {dtypes!r}"
        )
    lod_levels = list(lod_levels) if lod_levels is not None else [0] * len(shapes)
    if len(lod_levels) != len(shapes):
        raise ArgumentError(
            "py_reader",
            f"lod_levels must have one entry per shape ({len(shapes)}), given {lod_levels!r}",
        )
    name = name or unique_name.generate("py_reader")
    variables = [
        fluid_data(f"{name}.slot_{i}", list(shape), dtype=dtype, lod_level=lod)
        for i, (shape, dtype, lod) in enumerate(zip(shapes, dtypes, lod_levels))
    ]
    return ReaderVariable(name, variables, capacity, use_double_buffer)


def create_py_reader_by_data(
    capacity: int, feed_list: Sequence, name: str | None = None, use_double_buffer: bool = True
) -> ReaderVariable:
    """A reader feeding the existing data layers ``feed_list``."""
    from oar.framework import unique_name

    _capacity("create_py_reader_by_data", capacity)
    if not isinstance(feed_list, (list, tuple)) or not feed_list:
        raise ArgumentError(
            "create_py_reader_by_data", "feed_list must be a non-empty list of data Variables"
        )
    return ReaderVariable(
        name or unique_name.generate("py_reader"), list(feed_list), capacity, use_double_buffer
    )


def double_buffer(
    reader: ReaderVariable, place: Any = None, name: str | None = None
) -> ReaderVariable:
    """The reader, prefetching one batch ahead (oar's readers always do): returned as is."""
    if not isinstance(reader, ReaderVariable):
        raise ArgumentTypeError(
            "double_buffer", f"reader must come from py_reader, given {type(reader).__name__}"
        )
    return reader


def read_file(reader: ReaderVariable) -> Any:
    """The data variables a reader feeds (one variable, or a list of them)."""
    if not isinstance(reader, ReaderVariable):
        raise ArgumentTypeError(
            "read_file", f"reader must come from py_reader, given {type(reader).__name__}"
        )
    return reader.variables[0] if len(reader.variables) == 1 else list(reader.variables)


def load(out: Any, file_path: str, load_as_fp16: bool | None = None) -> None:
    """Fill ``out`` from the tensor file ``file_path`` when the program runs.

    (Fluid 1.8.5's ``layers.load`` appends its op with a misspelt argument and fails at
    run time; oar's works.)
    """
    from oar.layer_helper import LayerHelper

    if not isinstance(file_path, str) or not file_path:
        raise ArgumentError("load", f"file_path must name a tensor file, given {file_path!r}")
    helper = LayerHelper("load")
    helper.append_op(
        "load",
        {},
        {"Out": [out]},
        {"file_path": file_path, "load_as_fp16": bool(load_as_fp16)},
    )

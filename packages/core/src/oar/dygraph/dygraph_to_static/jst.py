"""The ``_jst`` namespace converted code calls: runtime helpers plus ``convert_call``."""

from __future__ import annotations

from oar.dygraph.dygraph_to_static.call import convert_call
from oar.dygraph.dygraph_to_static.convert_operators import (
    UNDEFINED,
    convert_ifelse,
    convert_ifexp,
    convert_index,
    convert_iter_seq,
    convert_len,
    convert_logical_and,
    convert_logical_not,
    convert_logical_or,
    convert_print,
    convert_while_loop,
    for_cond,
    get_args,
    range_args,
)
from oar.dygraph.dygraph_to_static.tensor_list import convert_append

__all__ = [
    "UNDEFINED",
    "convert_append",
    "convert_call",
    "convert_ifelse",
    "convert_ifexp",
    "convert_index",
    "convert_iter_seq",
    "convert_len",
    "convert_logical_and",
    "convert_logical_not",
    "convert_logical_or",
    "convert_print",
    "convert_while_loop",
    "for_cond",
    "get_args",
    "range_args",
]

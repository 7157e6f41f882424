"""``fluid.contrib``: extras provided by plugins (e.g. ``contrib.reader`` from oar-data)."""

from oar._facade import module_getattr

__getattr__ = module_getattr("contrib.")

from oar.dygraph.rnn_impl import BasicGRUUnit, BasicLSTMUnit
from oar.layers._rnn_impl import basic_gru, basic_lstm

__all__ = ["BasicGRUUnit", "BasicLSTMUnit", "basic_gru", "basic_lstm"]

"""``fluid.contrib``: extras provided by plugins (e.g. ``contrib.reader`` from oar-data),
core's contrib layers (``multiclass_nms2``, the rnn_impl ``basic_lstm`` family, fused and
partial layers) and statistics."""

from typing import Any

from oar._facade import module_dir, module_getattr
from oar.fluid.contrib import (
    hdfs_utils,
    memory_usage_calc,
    mixed_precision,
    model_stat,
    op_frequence,
)
from oar.fluid.contrib.decoder import BeamSearchDecoder, InitState, StateCell, TrainingDecoder
from oar.fluid.contrib.hdfs_utils import HDFSClient, multi_download, multi_upload
from oar.fluid.contrib.layers import (
    ctr_metric_bundle,
    fused_elemwise_activation,
    fused_embedding_seq_pool,
    partial_concat,
    partial_sum,
    shuffle_batch,
)
from oar.fluid.contrib.memory_usage_calc import memory_usage
from oar.fluid.contrib.nn import (
    match_matrix_tensor,
    sequence_topk_avg_pooling,
    tdm_child,
    tdm_sampler,
    tree_conv,
    var_conv_2d,
)
from oar.fluid.contrib.op_frequence import op_freq_statistic
from oar.optimizer.decoupled import extend_with_decoupled_weight_decay

__all__ = [
    "fused_elemwise_activation",
    "fused_embedding_seq_pool",
    "partial_concat",
    "partial_sum",
    "shuffle_batch",
    "ctr_metric_bundle",
    "memory_usage",
    "op_freq_statistic",
    "memory_usage_calc",
    "model_stat",
    "mixed_precision",
    "op_frequence",
    "extend_with_decoupled_weight_decay",
    "HDFSClient",
    "multi_download",
    "multi_upload",
    "hdfs_utils",
    "tree_conv",
    "match_matrix_tensor",
    "var_conv_2d",
    "sequence_topk_avg_pooling",
    "tdm_child",
    "tdm_sampler",
    "decoder",
    "InitState",
    "StateCell",
    "TrainingDecoder",
    "BeamSearchDecoder",
]

_plugin_getattr = module_getattr("contrib.")
_CORE = {
    "multiclass_nms2": "oar.layers.detection_nms",
    "basic_lstm": "oar.layers._rnn_impl",
    "basic_gru": "oar.layers._rnn_impl",
    "BasicLSTMUnit": "oar.dygraph.rnn_impl",
    "BasicGRUUnit": "oar.dygraph.rnn_impl",
}


def __getattr__(name: str) -> Any:
    if name in _CORE:
        import importlib

        return getattr(importlib.import_module(_CORE[name]), name)
    return _plugin_getattr(name)


__dir__ = module_dir("contrib.", __name__, _CORE)

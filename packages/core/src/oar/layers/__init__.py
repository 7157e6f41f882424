"""fluid.layers: functions that append ops to the default main program (or run them in dygraph).

One module per family; each lists its public names in ``__all__``.
"""

# every public layer function's errors carry the user's line (see _user_line)
import sys as _sys
import types as _types

from oar.layers import distributions  # noqa: F401
from oar.layers._user_line import wrap_module_functions as _wrap
from oar.layers.activation import *  # noqa: F403
from oar.layers.affine_channel import *  # noqa: F403
from oar.layers.beam_search import *  # noqa: F403
from oar.layers.center_loss import *  # noqa: F403
from oar.layers.chunk_eval import *  # noqa: F403
from oar.layers.clip_ops import *  # noqa: F403
from oar.layers.compare import *  # noqa: F403
from oar.layers.control_flow import *  # noqa: F403
from oar.layers.control_flow_ifelse import *  # noqa: F403
from oar.layers.control_flow_rnn import *  # noqa: F403
from oar.layers.conv import *  # noqa: F403
from oar.layers.conv3d import *  # noqa: F403
from oar.layers.crf import *  # noqa: F403
from oar.layers.ctc import *  # noqa: F403
from oar.layers.debug import *  # noqa: F403
from oar.layers.deformable_conv import *  # noqa: F403
from oar.layers.deformable_roi_pooling import *  # noqa: F403
from oar.layers.detection_boxes import *  # noqa: F403
from oar.layers.detection_nms import *  # noqa: F403
from oar.layers.detection_roi import *  # noqa: F403
from oar.layers.detection_rpn import *  # noqa: F403
from oar.layers.detection_targets import *  # noqa: F403
from oar.layers.detection_yolo import *  # noqa: F403
from oar.layers.distributions import (  # noqa: F401
    Categorical,
    Distribution,
    MultivariateNormalDiag,
    Normal,
    Uniform,
)
from oar.layers.dropout import *  # noqa: F403
from oar.layers.edit_distance import *  # noqa: F403
from oar.layers.elementwise import *  # noqa: F403
from oar.layers.embedding import *  # noqa: F403
from oar.layers.fc import *  # noqa: F403
from oar.layers.grid_sample import *  # noqa: F403
from oar.layers.gru_unit import *  # noqa: F403
from oar.layers.hash import *  # noqa: F403
from oar.layers.hsigmoid import *  # noqa: F403
from oar.layers.im2sequence import *  # noqa: F403
from oar.layers.indexing import *  # noqa: F403
from oar.layers.interp import *  # noqa: F403
from oar.layers.interp3d import *  # noqa: F403
from oar.layers.io import *  # noqa: F403
from oar.layers.learning_rate_scheduler import *  # noqa: F403
from oar.layers.linalg import *  # noqa: F403
from oar.layers.lod_rank import *  # noqa: F403
from oar.layers.lod_reset import *  # noqa: F403
from oar.layers.losses import *  # noqa: F403
from oar.layers.lstm_unit import *  # noqa: F403
from oar.layers.manip import *  # noqa: F403
from oar.layers.math import *  # noqa: F403
from oar.layers.metric import *  # noqa: F403
from oar.layers.metric_extra import *  # noqa: F403
from oar.layers.nce import *  # noqa: F403
from oar.layers.nn_extra import *  # noqa: F403
from oar.layers.norm import *  # noqa: F403
from oar.layers.norm_extra import *  # noqa: F403
from oar.layers.pool import *  # noqa: F403
from oar.layers.pool3d import *  # noqa: F403
from oar.layers.position_encoding import *  # noqa: F403
from oar.layers.py_func import *  # noqa: F403
from oar.layers.ranges import *  # noqa: F403
from oar.layers.rearrange import *  # noqa: F403
from oar.layers.recurrent import *  # noqa: F403
from oar.layers.reduce import *  # noqa: F403
from oar.layers.reshape import *  # noqa: F403
from oar.layers.rnn import *  # noqa: F403
from oar.layers.rnn_decode import *  # noqa: F403
from oar.layers.rnn_helpers import *  # noqa: F403
from oar.layers.rnn_padded import *  # noqa: F403
from oar.layers.sample_logits import *  # noqa: F403
from oar.layers.search import *  # noqa: F403
from oar.layers.sequence_conv import *  # noqa: F403
from oar.layers.sequence_expand import *  # noqa: F403
from oar.layers.sequence_manip import *  # noqa: F403
from oar.layers.sequence_pad import *  # noqa: F403
from oar.layers.sequence_pool import *  # noqa: F403
from oar.layers.tensor import *  # noqa: F403
from oar.layers.tensor_array import *  # noqa: F403
from oar.layers.tensor_extra import *  # noqa: F403
from oar.layers.tensor_misc import *  # noqa: F403
from oar.layers.vision_misc import *  # noqa: F403

_wrap(
    globals(),
    [
        m
        for n, m in list(_sys.modules.items())
        if n.startswith("oar.layers.") and isinstance(m, _types.ModuleType)
    ],
)

# `import paddle.fluid.layers.rnn` names a Fluid module path that is also a function here
# (fluid.layers.rnn): registering the module under the facade's name up front keeps the
# import system from rebinding the package attribute to the module
_sys.modules.setdefault("oar.fluid.layers.rnn", _sys.modules["oar.layers.rnn"])

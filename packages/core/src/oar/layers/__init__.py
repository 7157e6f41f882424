"""fluid.layers: functions that append ops to the default main program (or run them in dygraph).

One module per family; each lists its public names in ``__all__``.
"""

from oar.layers.activation import *  # noqa: F401,F403
from oar.layers.fc import *  # noqa: F401,F403
from oar.layers.io import *  # noqa: F401,F403
from oar.layers.loss import *  # noqa: F401,F403
from oar.layers.math import *  # noqa: F401,F403
from oar.layers.metric import *  # noqa: F401,F403
from oar.layers.shape import *  # noqa: F401,F403
from oar.layers.tensor import *  # noqa: F401,F403
from oar.layers.learning_rate_scheduler import *  # noqa: F401,F403
from oar.layers.debug import *  # noqa: F401,F403

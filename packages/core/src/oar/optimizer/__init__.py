"""Optimizers: each appends update ops whose state lives in persistable variables.

Accumulators and the learning rate are initialised by the startup program, so
``save_persistables`` + ``load_persistables`` resumes training exactly.
"""

from oar.optimizer.adadelta import Adadelta, AdadeltaOptimizer
from oar.optimizer.adagrad import Adagrad, AdagradOptimizer, DecayedAdagrad, DecayedAdagradOptimizer
from oar.optimizer.adam import Adam, AdamOptimizer
from oar.optimizer.adamax import Adamax, AdamaxOptimizer
from oar.optimizer.base import Optimizer
from oar.optimizer.dpsgd import Dpsgd, DpsgdOptimizer
from oar.optimizer.ema import ExponentialMovingAverage
from oar.optimizer.ftrl import Ftrl, FtrlOptimizer
from oar.optimizer.lamb import Lamb, LambOptimizer
from oar.optimizer.lookahead import LookaheadOptimizer
from oar.optimizer.model_average import ModelAverage
from oar.optimizer.momentum import LarsMomentum, LarsMomentumOptimizer, Momentum, MomentumOptimizer
from oar.optimizer.recompute import RecomputeOptimizer
from oar.optimizer.rmsprop import RMSProp, RMSPropOptimizer
from oar.optimizer.sgd import SGD, SGDOptimizer

__all__ = [
    "Optimizer",
    "SGD",
    "SGDOptimizer",
    "Adam",
    "AdamOptimizer",
    "Momentum",
    "MomentumOptimizer",
    "LarsMomentum",
    "LarsMomentumOptimizer",
    "Adagrad",
    "AdagradOptimizer",
    "DecayedAdagrad",
    "DecayedAdagradOptimizer",
    "RMSProp",
    "RMSPropOptimizer",
    "Adamax",
    "AdamaxOptimizer",
    "Adadelta",
    "AdadeltaOptimizer",
    "Ftrl",
    "FtrlOptimizer",
    "Lamb",
    "LambOptimizer",
    "ExponentialMovingAverage",
    "ModelAverage",
    "Dpsgd",
    "DpsgdOptimizer",
    "LookaheadOptimizer",
    "RecomputeOptimizer",
]

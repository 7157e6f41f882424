"""Optimizers: each appends update ops whose state lives in persistable variables.

Accumulators and the learning rate are initialised by the startup program, so
``save_persistables`` + ``load_persistables`` resumes training exactly.
"""

from oar.optimizer.adam import Adam, AdamOptimizer
from oar.optimizer.base import Optimizer
from oar.optimizer.sgd import SGD, SGDOptimizer

__all__ = ["Optimizer", "SGD", "SGDOptimizer", "Adam", "AdamOptimizer"]

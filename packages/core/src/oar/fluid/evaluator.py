"""``fluid.evaluator``: Fluid's older in-program evaluators (superseded by ``fluid.metrics``,
still used by 1.x programs).

An evaluator adds ops to the current program that accumulate a metric's counts, batch after
batch, into persistable state variables. ``reset(executor)`` zeroes the states; ``eval(executor)``
reads them and returns the accumulated metric as float32 arrays of shape [1].
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from oar.errors import ArgumentError
from oar.layer_helper import LayerHelper, check_variable

__all__ = ["ChunkEvaluator", "EditDistance", "DetectionMAP"]


class Evaluator:
    """Base class: ``states`` (persistable variables the program accumulates into),
    ``metrics`` (the batch's values), ``reset`` and ``eval``."""

    def __init__(self, name: str, **kwargs: Any) -> None:
        warnings.warn(
            f"fluid.evaluator.{type(self).__name__} is deprecated (as in Fluid 1.8); "
            "use fluid.metrics instead",
            DeprecationWarning,
            stacklevel=3,
        )
        self.states: list = []
        self.metrics: list = []
        self.helper = LayerHelper(name, **kwargs)

    def _create_state(self, suffix: str, dtype: str, shape: list) -> Any:
        """A persistable state variable named after the evaluator, zero at start."""
        from oar.framework import unique_name
        from oar.initializer import Constant

        var = self.helper.create_global_variable(
            persistable=True,
            name=unique_name.generate(f"{self.helper.name}_{suffix}"),
            shape=shape,
            dtype=dtype,
        )
        self.helper.set_variable_initializer(var, Constant(0))
        var.stop_gradient = True
        self.states.append(var)
        return var

    def _accumulate(self, state: Any, batch: Any) -> None:
        from oar import layers

        layers.sums([state, layers.cast(batch, state.dtype)], out=state)

    def reset(self, executor: Any, reset_program: Any = None) -> None:
        """Zero every state (runs ``reset_program``, by default a new one, with ``executor``)."""
        from oar import fluid

        program = fluid.Program() if reset_program is None else reset_program
        with fluid.program_guard(program, fluid.Program()):
            for s in self.states:
                var = program.global_block().create_var(
                    name=s.name, shape=s.shape, dtype=s.dtype, persistable=True
                )
                fluid.layers.fill_constant(list(s.shape), s.dtype, 0, out=var)
        executor.run(program)

    def _values(self, executor: Any, eval_program: Any = None) -> list:
        """The states' current values (numpy), read through ``executor``."""
        from oar import fluid

        program = fluid.Program() if eval_program is None else eval_program
        with fluid.program_guard(program, fluid.Program()):
            copies = []
            for s in self.states:
                var = program.global_block().create_var(
                    name=s.name, shape=s.shape, dtype=s.dtype, persistable=True
                )
                copies.append(fluid.layers.assign(var))
        return [np.asarray(v) for v in executor.run(program, fetch_list=copies)]

    def eval(self, executor: Any, eval_program: Any = None) -> Any:
        raise NotImplementedError(f"{type(self).__name__} does not implement eval()")


def _ratio(num: float, den: float) -> np.ndarray:
    return np.array([num / den if den else 0.0], dtype="float32")


class ChunkEvaluator(Evaluator):
    """Accumulated chunk precision, recall and F1 (op ``chunk_eval``) of sequence labelling:
    ``metrics`` are the batch's (precision, recall, f1); ``eval`` gives them over every batch
    since the last ``reset``."""

    def __init__(
        self,
        input: Any,
        label: Any,
        chunk_scheme: str,
        num_chunk_types: int,
        excluded_chunk_types: Any = None,
    ) -> None:
        from oar import layers

        super().__init__("chunk_eval")
        check_variable("ChunkEvaluator", "input", input)
        check_variable("ChunkEvaluator", "label", label)
        self.num_infer_chunks = self._create_state("num_infer_chunks", "int64", [1])
        self.num_label_chunks = self._create_state("num_label_chunks", "int64", [1])
        self.num_correct_chunks = self._create_state("num_correct_chunks", "int64", [1])
        precision, recall, f1, n_infer, n_label, n_correct = layers.chunk_eval(
            input, label, chunk_scheme, num_chunk_types, excluded_chunk_types
        )
        for state, batch in zip(self.states, (n_infer, n_label, n_correct)):
            self._accumulate(state, batch)
        self.metrics += [precision, recall, f1]

    def eval(self, executor: Any, eval_program: Any = None) -> tuple:
        """(precision, recall, f1) over the accumulated batches, float32 arrays [1]."""
        n_infer, n_label, n_correct = (
            float(v.ravel()[0]) for v in self._values(executor, eval_program)
        )
        precision = _ratio(n_correct, n_infer)
        recall = _ratio(n_correct, n_label)
        p, r = float(precision[0]), float(recall[0])
        f1 = np.array([2 * p * r / (p + r) if n_correct else 0.0], dtype="float32")
        return precision, recall, f1


class EditDistance(Evaluator):
    """Accumulated edit distance (op ``edit_distance``, normalised by the label's length) of
    sequences after dropping ``ignored_tokens``: ``metrics`` are the batch's total distance and
    number of wrong sequences; ``eval`` gives (mean distance, fraction of wrong sequences)
    since the last ``reset``."""

    def __init__(self, input: Any, label: Any, ignored_tokens: Any = None, **kwargs: Any) -> None:
        from oar import layers

        super().__init__("edit_distance", **kwargs)
        check_variable("EditDistance", "input", input)
        check_variable("EditDistance", "label", label)
        self.total_distance = self._create_state("total_distance", "float32", [1])
        self.seq_num = self._create_state("seq_num", "int64", [1])
        self.instance_error = self._create_state("instance_error", "int64", [1])
        distances, seq_num = layers.edit_distance(input, label, ignored_tokens=ignored_tokens)
        zero = layers.fill_constant([1], distances.dtype, 0.0)
        right = layers.reduce_sum(layers.cast(layers.equal(distances, zero), "int64"))
        errors = layers.elementwise_sub(layers.cast(seq_num, "int64"), right)
        total = layers.reduce_sum(distances)
        for state, batch in zip(self.states, (total, seq_num, errors)):
            self._accumulate(state, batch)
        self.metrics += [total, errors]

    def eval(self, executor: Any, eval_program: Any = None) -> tuple:
        """(mean distance, fraction of sequences with a non-zero distance), float32 arrays [1]."""
        total, seqs, errors = (float(v.ravel()[0]) for v in self._values(executor, eval_program))
        return _ratio(total, seqs), _ratio(errors, seqs)


class DetectionMAP(Evaluator):
    """Mean average precision of a detector (as ``fluid.metrics.DetectionMAP``):
    ``get_map_var()`` gives (mAP of the batch, mAP accumulated since the last ``reset``)."""

    def __init__(
        self,
        input: Any,
        gt_label: Any,
        gt_box: Any,
        gt_difficult: Any = None,
        class_num: Any = None,
        background_label: int = 0,
        overlap_threshold: float = 0.5,
        evaluate_difficult: bool = True,
        ap_version: str = "integral",
    ) -> None:
        from oar.metrics.detection_map import DetectionMAP as _MAP

        super().__init__("map_eval")
        if class_num is None:
            raise ArgumentError("DetectionMAP", "class_num is required (the number of classes)")
        self._map = _MAP(
            input, gt_label, gt_box, gt_difficult, class_num, background_label,
            overlap_threshold, evaluate_difficult, ap_version,
        )  # fmt: skip
        self.cur_map, self.accum_map = self._map.get_map_var()

    def get_map_var(self) -> tuple:
        """(mAP of the current batch, mAP accumulated since the last reset)."""
        return self.cur_map, self.accum_map

    def reset(self, executor: Any, reset_program: Any = None) -> None:
        """Forget the accumulated batches."""
        self._map.reset(executor, reset_program)

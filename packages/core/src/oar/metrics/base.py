"""The classic Fluid metrics: MetricBase and the accumulators built on it."""

from __future__ import annotations

import copy
import numbers
from typing import Any

import numpy as np

from oar.errors import ArgumentError, ArgumentTypeError


def _is_number_or_array(value: Any) -> bool:
    return isinstance(value, (numbers.Number, np.ndarray, np.generic))


def _check_arrays(metric: str, **arrays: Any) -> None:
    for name, value in arrays.items():
        if not isinstance(value, np.ndarray):
            raise ArgumentTypeError(
                metric,
                f"{name} must be a numpy.ndarray (a fetched value), given {type(value).__name__}",
            )


class MetricBase:
    """Base of the host-side metrics.

    State is every public attribute (a name not starting with ``_``); ``reset``
    sets numbers back to zero and arrays to zeros, ``get_config`` lists them.
    """

    def __init__(self, name: str | None) -> None:
        self._name = str(name) if name is not None else self.__class__.__name__

    def __str__(self) -> str:
        return self._name

    def _states(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if not k.startswith("_")}

    def reset(self) -> None:
        """Clear the accumulated state."""
        for attr, value in self._states().items():
            if isinstance(value, bool):
                setattr(self, attr, False)
            elif isinstance(value, int):
                setattr(self, attr, 0)
            elif isinstance(value, float):
                setattr(self, attr, 0.0)
            elif isinstance(value, (np.ndarray, np.generic)):
                setattr(self, attr, np.zeros_like(value))
            else:
                setattr(self, attr, None)

    def get_config(self) -> dict:
        """``{"name": ..., "states": {state: value}}`` (a deep copy)."""
        return {"name": self._name, "states": copy.deepcopy(self._states())}

    def update(self, preds: Any, labels: Any) -> None:
        raise NotImplementedError(f"{type(self).__name__} does not implement update")

    def eval(self) -> Any:
        raise NotImplementedError(f"{type(self).__name__} does not implement eval")


class CompositeMetric(MetricBase):
    """Several metrics updated with the same ``(preds, labels)``."""

    def __init__(self, name: str | None = None) -> None:
        super().__init__(name)
        self._metrics: list = []

    def add_metric(self, metric: MetricBase) -> None:
        if not isinstance(metric, MetricBase):
            raise ArgumentTypeError(
                "CompositeMetric", f"metric must be a MetricBase, given {type(metric).__name__}"
            )
        self._metrics.append(metric)

    def reset(self) -> None:
        for m in self._metrics:
            m.reset()

    def update(self, preds: Any, labels: Any) -> None:
        for m in self._metrics:
            m.update(preds, labels)

    def eval(self) -> list:
        return [m.eval() for m in self._metrics]


def _binary(metric: str, preds: Any, labels: Any) -> tuple:
    _check_arrays(metric, preds=preds, labels=labels)
    p = np.rint(preds).astype("int32").reshape(-1)
    lab = np.asarray(labels).astype("int32").reshape(-1)
    if p.shape != lab.shape:
        raise ArgumentError(
            metric, f"preds and labels must hold as many values, given {p.size} and {lab.size}"
        )
    return p, lab


class Precision(MetricBase):
    """Binary precision tp / (tp + fp); ``preds`` are rounded to 0/1."""

    def __init__(self, name: str | None = None) -> None:
        super().__init__(name)
        self.tp = 0
        self.fp = 0

    def update(self, preds: np.ndarray, labels: np.ndarray) -> None:
        p, lab = _binary("Precision", preds, labels)
        pos = p == 1
        self.tp += int(np.sum(pos & (lab == 1)))
        self.fp += int(np.sum(pos & (lab != 1)))

    def eval(self) -> float:
        ap = self.tp + self.fp
        return float(self.tp) / ap if ap != 0 else 0.0


class Recall(MetricBase):
    """Binary recall tp / (tp + fn); ``preds`` are rounded to 0/1."""

    def __init__(self, name: str | None = None) -> None:
        super().__init__(name)
        self.tp = 0
        self.fn = 0

    def update(self, preds: np.ndarray, labels: np.ndarray) -> None:
        p, lab = _binary("Recall", preds, labels)
        pos = lab == 1
        self.tp += int(np.sum(pos & (p == 1)))
        self.fn += int(np.sum(pos & (p != 1)))

    def eval(self) -> float:
        recall = self.tp + self.fn
        return float(self.tp) / recall if recall != 0 else 0.0


class Accuracy(MetricBase):
    """Weighted mean of minibatch accuracies: ``update(value, weight)``."""

    def __init__(self, name: str | None = None) -> None:
        super().__init__(name)
        self.value = 0.0
        self.weight = 0.0

    def update(self, value: Any, weight: Any) -> None:
        if not _is_number_or_array(value):
            raise ArgumentTypeError(
                "Accuracy", f"value must be a number or numpy.ndarray, given {type(value).__name__}"
            )
        if not _is_number_or_array(weight):
            raise ArgumentTypeError(
                "Accuracy",
                f"weight must be a number or numpy.ndarray, given {type(weight).__name__}",
            )
        self.value += value * weight
        self.weight += weight

    def eval(self) -> Any:
        if np.all(np.asarray(self.weight) == 0):
            raise ArgumentError(
                "Accuracy",
                "there is no data in the Accuracy metric: update it with the output of "
                "layers.accuracy before eval",
            )
        return self.value / self.weight


class ChunkEvaluator(MetricBase):
    """Precision, recall and F1 of chunks from ``layers.chunk_eval``'s counts."""

    def __init__(self, name: str | None = None) -> None:
        super().__init__(name)
        self.num_infer_chunks = 0
        self.num_label_chunks = 0
        self.num_correct_chunks = 0

    def update(self, num_infer_chunks: Any, num_label_chunks: Any, num_correct_chunks: Any) -> None:
        for name, v in (
            ("num_infer_chunks", num_infer_chunks),
            ("num_label_chunks", num_label_chunks),
            ("num_correct_chunks", num_correct_chunks),
        ):
            if not _is_number_or_array(v):
                raise ArgumentTypeError(
                    "ChunkEvaluator",
                    f"{name} must be a number or numpy.ndarray, given {type(v).__name__}",
                )
        self.num_infer_chunks += num_infer_chunks
        self.num_label_chunks += num_label_chunks
        self.num_correct_chunks += num_correct_chunks

    def eval(self) -> tuple:
        correct = self.num_correct_chunks
        precision = float(correct) / self.num_infer_chunks if self.num_infer_chunks else 0
        recall = float(correct) / self.num_label_chunks if self.num_label_chunks else 0
        f1 = float(2 * precision * recall) / (precision + recall) if correct else 0
        return precision, recall, f1


class EditDistance(MetricBase):
    """Average edit distance and instance error rate from ``layers.edit_distance``."""

    def __init__(self, name: str | None = None) -> None:
        super().__init__(name)
        self.total_distance = 0.0
        self.seq_num = 0
        self.instance_error = 0

    def update(self, distances: np.ndarray, seq_num: Any) -> None:
        _check_arrays("EditDistance", distances=distances)
        if not _is_number_or_array(seq_num):
            raise ArgumentTypeError(
                "EditDistance",
                f"seq_num must be a number or numpy.ndarray, given {type(seq_num).__name__}",
            )
        seq_num = int(np.asarray(seq_num).reshape(-1)[0])
        right = int(np.sum(distances == 0))
        self.total_distance += float(np.sum(distances))
        self.seq_num += seq_num
        self.instance_error += seq_num - right

    def eval(self) -> tuple:
        if self.seq_num == 0:
            raise ArgumentError(
                "EditDistance",
                "there is no data in the EditDistance metric: update it with the output of "
                "layers.edit_distance before eval",
            )
        return self.total_distance / self.seq_num, self.instance_error / float(self.seq_num)


class Auc(MetricBase):
    """Area under the ROC curve from bucketed positive/negative counts.

    ``preds`` is ``[N, 2]`` (the second column the positive probability),
    ``labels`` ``[N]`` or ``[N, 1]``; each prediction falls into one of
    ``num_thresholds + 1`` buckets. ``curve="PR"`` gives the same area, as in Fluid 1.8.5.
    """

    def __init__(self, name: str, curve: str = "ROC", num_thresholds: int = 4095) -> None:
        super().__init__(name)
        if curve not in ("ROC", "PR"):
            raise ArgumentError("Auc", f"curve must be 'ROC' or 'PR', given {curve!r}")
        self._curve = curve
        self._num_thresholds = int(num_thresholds)
        self._stat_pos = np.zeros(self._num_thresholds + 1, np.int64)
        self._stat_neg = np.zeros(self._num_thresholds + 1, np.int64)

    def reset(self) -> None:
        self._stat_pos[:] = 0
        self._stat_neg[:] = 0

    def update(self, preds: np.ndarray, labels: np.ndarray) -> None:
        _check_arrays("Auc", preds=preds, labels=labels)
        if preds.ndim != 2 or preds.shape[1] < 2:
            raise ArgumentError(
                "Auc", f"preds must be [N, 2] (negative, positive), given shape {preds.shape}"
            )
        lab = np.asarray(labels).reshape(-1)
        if lab.shape[0] != preds.shape[0]:
            raise ArgumentError(
                "Auc", f"labels must have {preds.shape[0]} rows like preds, given {lab.shape[0]}"
            )
        bins = (preds[:, 1] * self._num_thresholds).astype(np.int64)
        bins = np.clip(bins, 0, self._num_thresholds)
        n = self._num_thresholds + 1
        pos = lab.astype(bool)
        self._stat_pos += np.bincount(bins[pos], minlength=n)
        self._stat_neg += np.bincount(bins[~pos], minlength=n)

    @staticmethod
    def trapezoid_area(x1: float, x2: float, y1: float, y2: float) -> float:
        return abs(x1 - x2) * (y1 + y2) / 2.0

    def eval(self) -> float:
        pos = np.cumsum(self._stat_pos[::-1]).astype(np.float64)
        neg = np.cumsum(self._stat_neg[::-1]).astype(np.float64)
        tot_pos, tot_neg = pos[-1], neg[-1]
        if tot_pos <= 0 or tot_neg <= 0:
            return 0.0
        prev_pos = np.concatenate([[0.0], pos[:-1]])
        prev_neg = np.concatenate([[0.0], neg[:-1]])
        area = np.sum((neg - prev_neg) * (pos + prev_pos) / 2.0)
        return float(area / tot_pos / tot_neg)

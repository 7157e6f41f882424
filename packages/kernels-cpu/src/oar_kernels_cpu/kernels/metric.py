"""numpy kernels for top_k and accuracy."""

from __future__ import annotations

import numpy as np

from oar_kernels_cpu.kernels import array_module, kernel

xp = array_module(__name__)


@kernel("top_k")
def top_k(inputs, attrs):
    x = inputs["X"]
    k = int(xp.asarray(inputs["K"]).reshape(-1)[0]) if inputs.get("K") is not None else attrs["k"]
    if not 1 <= k <= x.shape[-1]:
        raise ValueError(
            f"top_k: k={k} must be in [1, {x.shape[-1]}] (X's last dim), X has shape {list(x.shape)}"
        )
    idx = _partial_top(x, k) if 4 * k < x.shape[-1] else None
    if idx is None:
        idx = xp.argsort(-x, axis=-1, kind="stable")[..., :k]
    return {"Out": xp.take_along_axis(x, idx, -1), "Indices": idx.astype(np.int64)}


def _partial_top(x, k):
    """The stable top-k through argpartition (O(n) per row), or None when a tie straddles the
    k-th place (then only the full stable sort says which equal entries come first)."""
    part = xp.argpartition(-x, k - 1, axis=-1)[..., :k]
    vals = xp.take_along_axis(x, part, -1)
    kth = vals.min(axis=-1, keepdims=True)
    if bool(((x >= kth).sum(axis=-1) != k).any()):
        return None
    part = xp.sort(part, axis=-1)  # equal values inside the top k: lower index first
    order = xp.argsort(-xp.take_along_axis(x, part, -1), axis=-1, kind="stable")
    return xp.take_along_axis(part, order, -1)


@kernel("top_k_grad")
def top_k_grad(inputs, attrs):
    x, idx, d = inputs["X"], inputs["Indices"], inputs["Out@GRAD"]
    dx = xp.zeros_like(x)
    xp.put_along_axis(dx, idx, d, -1)
    return {"X@GRAD": dx}


@kernel("accuracy")
def accuracy(inputs, attrs):
    idx, label = inputs["Indices"], inputs["Label"]
    total = idx.shape[0]
    if label.size != total:
        raise ValueError(
            f"accuracy: Label of shape {list(label.shape)} must hold one class id per row of "
            f"Indices {list(idx.shape)} ({total} rows)"
        )
    correct = int((idx == label.reshape(-1, 1)).any(axis=1).sum())
    acc = correct / total if total else 0.0
    return {
        "Accuracy": xp.array([acc], dtype=np.float32),
        "Correct": xp.array([correct], dtype=np.int32),
        "Total": xp.array([total], dtype=np.int32),
    }

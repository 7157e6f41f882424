"""Per-device feeds (split one batch, or check a list) and Fluid's merge of per-device fetches."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from oar.api import LoDTensor, user_array
from oar.errors import FeedError


def device_feeds(feed: Any, n: int, where: str) -> list:
    """``n`` feed dicts: a list is taken as one dict per device, a dict is split evenly."""
    if feed is None:
        return [{} for _ in range(n)]
    if isinstance(feed, (list, tuple)):
        if len(feed) != n:
            raise FeedError(
                f"{where}: the feed list has {len(feed)} dicts but the program runs on {n} places; "
                f"give one feed dict per place (or one dict, which is split evenly)"
            )
        for i, f in enumerate(feed):
            if not isinstance(f, Mapping):
                raise TypeError(
                    f"{where}: feed[{i}] must be a dict of name -> array, given {type(f).__name__}"
                )
        return [dict(f) for f in feed]
    if not isinstance(feed, Mapping):
        raise TypeError(
            f"{where}: feed must be a dict or a list of dicts, given {type(feed).__name__}"
        )
    parts: list = [{} for _ in range(n)]
    for key, value in feed.items():
        name = key if isinstance(key, str) else getattr(key, "name", key)
        for i, piece in enumerate(split_value(name, value, n, where)):
            parts[i][key] = piece
    return parts


def split_value(name: str, value: Any, n: int, where: str) -> list:
    """``value`` cut into ``n`` equal parts along axis 0 (by sequences when it has a LoD)."""
    lod = value.recursive_sequence_lengths() if isinstance(value, LoDTensor) else []
    arr = np.asarray(value._array if isinstance(value, LoDTensor) else value)
    if lod:
        seqs = lod[0]
        if len(seqs) < n or len(seqs) % n:
            raise FeedError(
                f"{where}: feed '{name}' holds {len(seqs)} sequences, which do not split evenly over "
                f"{n} places; feed a multiple of {n} sequences or a list of {n} feed dicts"
            )
        if len(lod) > 1:
            raise FeedError(
                f"{where}: feed '{name}' has a {len(lod)}-level LoD; split it yourself and feed a "
                f"list of {n} feed dicts"
            )
        k = len(seqs) // n
        out = []
        start = 0
        for i in range(n):
            lens = list(seqs[i * k : (i + 1) * k])
            stop = start + sum(lens)
            t = LoDTensor(arr[start:stop])
            t.set_recursive_sequence_lengths([lens])
            out.append(t)
            start = stop
        return out
    if arr.ndim == 0 or arr.shape[0] < n or arr.shape[0] % n:
        given = "a scalar" if arr.ndim == 0 else f"batch size {arr.shape[0]}"
        raise FeedError(
            f"{where}: feed '{name}' has {given}, which does not split evenly over {n} places "
            f"(CPU_NUM or places); give a batch size that is a multiple of {n}, or a list of "
            f"{n} feed dicts"
        )
    return np.split(arr, n)


def merge_fetches(per_device: Sequence[list], return_numpy: bool, return_merged: bool) -> list:
    """Fluid's result: each fetch concatenated over devices along axis 0 (or per device if not merged)."""
    n_fetch = len(per_device[0]) if per_device else 0
    out = []
    for j in range(n_fetch):
        values = [dev[j] for dev in per_device]
        if not return_merged:
            out.append([user_array(v) if return_numpy else v for v in values])
            continue
        arrays = [np.asarray(v._array if isinstance(v, LoDTensor) else v) for v in values]
        if any(a.ndim == 0 for a in arrays):
            merged = np.stack(arrays)
        else:
            merged = np.concatenate(arrays)
        if return_numpy:
            out.append(user_array(merged))  # size-1: float(loss) on NumPy 2 too
            continue
        lods = [v.recursive_sequence_lengths() if isinstance(v, LoDTensor) else [] for v in values]
        t = LoDTensor(merged)
        if all(lods) and all(len(x) == 1 for x in lods):
            t.set_recursive_sequence_lengths([[s for x in lods for s in x[0]]])
        out.append(t)
    return out

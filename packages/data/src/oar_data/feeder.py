"""``fluid.DataFeeder``: minibatches of sample tuples -> feed dicts for ``exe.run``."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from oar_data.convert import samples_to_feed, specs_for


def _default_num_places(place: Any) -> int:
    from oar.api import cpu_places, cuda_places

    if place is not None and getattr(place, "is_gpu_place", lambda: False)():
        return len(cuda_places())
    return len(cpu_places())


class DataFeeder:
    """Converts a list of sample tuples into ``{data layer name: array or LoDTensor}``.

    Each sample holds one value per data layer of ``feed_list`` (Variables or
    names looked up in ``program``, default the main program). Values are
    checked against their layer's shape and dtype; layers with
    ``lod_level > 0`` get LoDTensors built from the sequence lengths.
    """

    def __init__(self, feed_list: Sequence, place: Any, program: Any = None) -> None:
        if not isinstance(feed_list, (list, tuple)) or not feed_list:
            raise ValueError(
                "DataFeeder: feed_list must be a non-empty list of data Variables or names"
            )
        self._specs = specs_for(feed_list, program)
        self.place = place
        self.feed_names = [s.name for s in self._specs]
        self.feed_dtypes = [s.dtype.name for s in self._specs]
        self.feed_shapes = [s.shape for s in self._specs]
        self.feed_lod_level = [s.lod_level for s in self._specs]

    def feed(self, iterable: Iterable) -> dict:
        """One feed dict from a minibatch (a list of sample tuples)."""
        return samples_to_feed(self._specs, list(iterable), "DataFeeder.feed")

    def feed_parallel(self, iterable: Iterable, num_places: int | None = None):
        """One feed dict per device, from one minibatch per device."""
        batches = list(iterable)
        if num_places is None:
            num_places = _default_num_places(self.place)
        if len(batches) != num_places:
            raise ValueError(
                f"DataFeeder.feed_parallel: given {len(batches)} minibatches for {num_places} devices; "
                f"pass exactly one minibatch per device"
            )
        for b in batches:
            yield samples_to_feed(self._specs, list(b), "DataFeeder.feed_parallel")

    def decorate_reader(
        self,
        reader: Callable,
        multi_devices: bool,
        num_places: int | None = None,
        drop_last: bool = True,
    ) -> Callable:
        """A reader of feed dicts (or, with ``multi_devices``, of lists with one dict per device)."""
        if not multi_devices:

            def single():
                for item in reader():
                    yield self.feed(item)

            return single
        n = num_places if num_places is not None else _default_num_places(self.place)

        def multi():
            group = []
            for item in reader():
                group.append(item)
                if len(group) == n:
                    yield list(self.feed_parallel(group, n))
                    group = []
            if group and not drop_last:
                raise ValueError(
                    f"DataFeeder.decorate_reader: {len(group)} minibatches are left over for {n} devices; "
                    f"only drop_last=True is supported for an incomplete last group"
                )

        return multi

"""LETOR 4.0 MQ2007 learning-to-rank data (``paddle.dataset.mq2007``).

Lines are ``relevance qid:<id> 1:<v> ... 46:<v> #description``. ``load_from_text``
groups them into one :class:`QueryList` per query (in file order), features
absent from a line set to ``fill_missing``. ``query_filter`` drops queries with
no relevant document. Readers over Fold1's ``train.txt`` / ``test.txt`` yield,
per query with a relevant document, with documents by relevance (highest first):
``pointwise``: ``(relevance, features)`` per document; ``pairwise`` (default):
``(array([1]), better features, worse features)`` per pair of different
relevance; ``listwise``: ``(relevances [n, 1], features [n, 46])``.

The archive is a RAR file: extracting it needs the ``rarfile`` package and an
``unrar`` tool; files already extracted under ``<home>/MQ2007/MQ2007/`` are used
as they are. (Fluid 1.8.5's pointwise reader yields only each query's first
document, and its parser rejects lines with missing features; oar yields every
document and fills missing features.)
"""

from __future__ import annotations

import functools
import random
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from oar_data.dataset.common import data_home, download

URL = (
    "http://www.bigdatalab.ac.cn/benchmark/upload/download_source/"
    "7b6dbbe2-842c-11e4-a536-bcaec51b9163_MQ2007.rar"
)
MD5 = "7be1640ae95c6408dab0ae7207bdc706"
FEATURES = 46

__all__ = ["train", "test", "load_from_text", "query_filter", "gen_point", "gen_pair", "gen_list", "gen_plain_txt", "fetch"]  # fmt: skip


class Query:
    """One judged document of a query."""

    def __init__(
        self,
        query_id: int = -1,
        relevance_score: int = -1,
        feature_vector: list | None = None,
        description: str = "",
    ) -> None:
        self.query_id = query_id
        self.relevance_score = relevance_score
        self.feature_vector = feature_vector if feature_vector is not None else []
        self.description = description

    def __str__(self) -> str:
        feats = " ".join(f"{i + 1}:{v}" for i, v in enumerate(self.feature_vector))
        return f"{self.relevance_score} qid:{self.query_id} {feats} #{self.description}"

    def _parse_(self, text: str, fill_missing: float = -1) -> Query:
        body, _, description = text.partition("#")
        parts = body.split()
        if len(parts) < 2 or not parts[1].startswith("qid:"):
            raise ValueError(
                f"mq2007: expected 'relevance qid:<id> <index>:<value>...', got {text!r}"
            )
        features = [float(fill_missing)] * FEATURES
        for part in parts[2:]:
            index, _, value = part.partition(":")
            i = int(index) - 1
            if not 0 <= i < FEATURES:
                raise ValueError(f"mq2007: feature index {index} outside 1..{FEATURES} in {text!r}")
            features[i] = float(value)
        self.relevance_score = int(parts[0])
        self.query_id = int(parts[1][4:])
        self.feature_vector = features
        self.description = description.strip()
        return self


class QueryList:
    """The documents of one query."""

    def __init__(self, querylist: list | None = None) -> None:
        self.querylist = list(querylist or [])
        self.query_id = self.querylist[0].query_id if self.querylist else -1

    def __iter__(self) -> Iterator[Query]:
        return iter(self.querylist)

    def __len__(self) -> int:
        return len(self.querylist)

    def __getitem__(self, i: int) -> Query:
        return self.querylist[i]

    def _correct_ranking_(self) -> None:
        self.querylist.sort(key=lambda q: -q.relevance_score)

    def _add_query(self, query: Query) -> None:
        if self.query_id == -1:
            self.query_id = query.query_id
        elif self.query_id != query.query_id:
            raise ValueError(f"mq2007: query {query.query_id} added to the list of {self.query_id}")
        self.querylist.append(query)


def gen_plain_txt(querylist: QueryList) -> Iterator[tuple]:
    querylist._correct_ranking_()
    for q in querylist:
        yield querylist.query_id, q.relevance_score, np.array(q.feature_vector)


def gen_point(querylist: QueryList) -> Iterator[tuple]:
    querylist._correct_ranking_()
    for q in querylist:
        yield q.relevance_score, np.array(q.feature_vector)


def gen_pair(querylist: QueryList, partial_order: str = "full") -> Iterator[tuple]:
    """Pairs of documents of different relevance (``partial_order``: 'full' or 'neighbour',
    which give the same pairs, as in Fluid 1.8.5)."""
    if partial_order not in ("full", "neighbour"):
        raise ValueError(
            f"mq2007: partial_order must be 'full' or 'neighbour', given {partial_order!r}"
        )
    querylist._correct_ranking_()
    docs = list(querylist)
    for i, better in enumerate(docs):
        for worse in docs[i + 1 :]:
            if better.relevance_score > worse.relevance_score:
                yield np.array([1]), np.array(better.feature_vector), np.array(worse.feature_vector)


def gen_list(querylist: QueryList) -> Iterator[tuple]:
    querylist._correct_ranking_()
    relevance = np.array([[q.relevance_score] for q in querylist])
    features = np.array([q.feature_vector for q in querylist])
    yield relevance, features


def query_filter(querylists: list) -> list:
    """The queries with at least one relevant document."""
    return [ql for ql in querylists if any(q.relevance_score > 0 for q in ql)]


def load_from_text(filepath: str, shuffle: bool = False, fill_missing: float = -1) -> list:
    """One QueryList per query of the file (optionally shuffled)."""
    lists: list = []
    current: QueryList | None = None
    with open(filepath, encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            query = Query()._parse_(line, fill_missing)
            if current is None or current.query_id != query.query_id:
                current = QueryList()
                lists.append(current)
            current._add_query(query)
    if shuffle:
        random.shuffle(lists)
    return lists


def _extracted(relative: str) -> str:
    root = data_home() / "MQ2007"
    path = root / relative
    if path.exists():
        return str(path)
    archive = download(URL, "MQ2007", MD5)
    try:
        import rarfile
    except ImportError:
        raise RuntimeError(
            f"mq2007: {archive} is a RAR archive; pip install rarfile (and an unrar tool), or "
            f"extract it yourself into {root}"
        ) from None
    rarfile.RarFile(archive).extractall(root)
    return str(path)


def _reader(
    filepath: str, format: str = "pairwise", shuffle: bool = False, fill_missing: float = -1
) -> Iterator:
    gens = {
        "pointwise": gen_point,
        "pairwise": gen_pair,
        "listwise": gen_list,
        "plain_txt": gen_plain_txt,
    }
    if format not in gens:
        raise ValueError(f"mq2007: format must be one of {sorted(gens)}, given {format!r}")
    path = filepath if Path(filepath).is_absolute() else _extracted(filepath)
    for querylist in query_filter(load_from_text(path, shuffle, fill_missing)):
        yield from gens[format](querylist)


train = functools.partial(_reader, filepath="MQ2007/Fold1/train.txt")
test = functools.partial(_reader, filepath="MQ2007/Fold1/test.txt")


def fetch() -> None:
    download(URL, "MQ2007", MD5)

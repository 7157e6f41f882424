"""NLTK's movie_reviews polarity corpus (``paddle.dataset.sentiment``).

Reads ``movie_reviews.zip`` directly (no NLTK needed): ``movie_reviews/neg/*.txt``
and ``movie_reviews/pos/*.txt``, tokenised as NLTK's corpus reader does
(``\\w+|[^\\w\\s]+``). ``get_word_dict()`` is a list of ``(word, id)``, most frequent
first (ties in order of first appearance, negative files first). Samples are
``(word ids, label)`` with label 0 for negative and 1 for positive reviews, the
files alternating negative/positive in name order; ``train`` yields the first
1600, ``test`` the rest of the 2000. ``train`` and ``test`` are readers (call
them for the samples), as in Paddle.
"""

from __future__ import annotations

import collections
import re
import zipfile
from collections.abc import Iterator

from oar_data.dataset.common import download

URL = "https://corpora.bj.bcebos.com/movie_reviews%2Fmovie_reviews.zip"
MD5 = "155de2b77c6834dd8eea7cbe88e93acb"
NUM_TRAINING_INSTANCES = 1600
NUM_TOTAL_INSTANCES = 2000
_TOKEN = re.compile(r"\w+|[^\w\s]+")

__all__ = ["train", "test", "get_word_dict", "fetch"]


def download_data_if_not_yet() -> str:
    return download(URL, "corpora", MD5, save_name="movie_reviews.zip")


def _files(package: zipfile.ZipFile, category: str) -> list:
    prefix = f"movie_reviews/{category}/"
    return sorted(n for n in package.namelist() if n.startswith(prefix) and n.endswith(".txt"))


def _words(package: zipfile.ZipFile, name: str) -> list:
    return _TOKEN.findall(package.read(name).decode("utf-8", errors="replace"))


def get_word_dict() -> list:
    """``[(word, id), ...]``, most frequent first."""
    counts: collections.Counter = collections.Counter()
    with zipfile.ZipFile(download_data_if_not_yet()) as package:
        for category in ("neg", "pos"):
            for name in _files(package, category):
                counts.update(w.lower() for w in _words(package, name))
    ranked = sorted(counts.items(), key=lambda wc: -wc[1])  # stable: first appearance
    return [(w, i) for i, (w, _) in enumerate(ranked)]


def sort_files() -> list:
    """File ids alternating negative and positive, in name order."""
    with zipfile.ZipFile(download_data_if_not_yet()) as package:
        neg = [n.split("/", 1)[1] for n in _files(package, "neg")]
        pos = [n.split("/", 1)[1] for n in _files(package, "pos")]
    out = []
    for n, p in zip(neg, pos):
        out += [n, p]
    return out


def load_sentiment_data() -> list:
    word_ids = dict(get_word_dict())
    with zipfile.ZipFile(download_data_if_not_yet()) as package:
        return [
            (
                [word_ids[w.lower()] for w in _words(package, f"movie_reviews/{fid}")],
                0 if fid.startswith("neg") else 1,
            )
            for fid in sort_files()
        ]


def reader_creator(data: list) -> Iterator[tuple]:
    yield from data


def train() -> Iterator[tuple]:
    return reader_creator(load_sentiment_data()[:NUM_TRAINING_INSTANCES])


def test() -> Iterator[tuple]:
    return reader_creator(load_sentiment_data()[NUM_TRAINING_INSTANCES:NUM_TOTAL_INSTANCES])


def fetch() -> None:
    download_data_if_not_yet()

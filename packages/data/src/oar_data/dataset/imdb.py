"""IMDB movie reviews for sentiment classification (``paddle.dataset.imdb``).

Reads ``aclImdb_v1.tar.gz`` directly. Tokens are Paddle's: the review's
bytes without trailing newlines, ASCII punctuation removed, lower-cased,
split on whitespace (so words are ``bytes``). ``word_dict()`` keeps words
seen more than 150 times, most frequent first (ties by word), then
``'<unk>'``; readers yield ``(list of word ids, label)`` with label 0 for
positive and 1 for negative reviews, positives first.
"""

from __future__ import annotations

import collections
import re
import string
import tarfile
from collections.abc import Iterator

from oar_data.dataset.common import download

URL = "https://dataset.bj.bcebos.com/imdb%2FaclImdb_v1.tar.gz"
MD5 = "7c2ac02c03563afcf9b574c7e56c153a"

_PUNCT = string.punctuation.encode()
_ALL = re.compile(r"aclImdb/((train)|(test))/((pos)|(neg))/.*\.txt$")


def tokenize(pattern: re.Pattern) -> Iterator[list]:
    """The token lists of the archive's files whose names match ``pattern``, in archive order."""
    with tarfile.open(download(URL, "imdb", MD5)) as tar:
        for member in tar:
            if member.isfile() and pattern.match(member.name):
                text = tar.extractfile(member).read().rstrip(b"\n\r")
                yield text.translate(None, _PUNCT).lower().split()


def build_dict(pattern: re.Pattern, cutoff: int) -> dict:
    """Word -> id for words occurring more than ``cutoff`` times; ``'<unk>'`` gets the last id."""
    freq: collections.Counter = collections.Counter()
    for doc in tokenize(pattern):
        freq.update(doc)
    kept = sorted((item for item in freq.items() if item[1] > cutoff), key=lambda x: (-x[1], x[0]))
    word_idx = {w: i for i, (w, _) in enumerate(kept)}
    word_idx["<unk>"] = len(kept)
    return word_idx


def reader_creator(pos_pattern: re.Pattern, neg_pattern: re.Pattern, word_idx: dict):
    """A reader of ``(ids, label)``; the archive is read once, when this is called."""
    unk = word_idx["<unk>"]
    samples = [
        ([word_idx.get(w, unk) for w in doc], label)
        for pattern, label in ((pos_pattern, 0), (neg_pattern, 1))
        for doc in tokenize(pattern)
    ]

    def reader():
        yield from samples

    return reader


def train(word_idx: dict):
    return reader_creator(
        re.compile(r"aclImdb/train/pos/.*\.txt$"),
        re.compile(r"aclImdb/train/neg/.*\.txt$"),
        word_idx,
    )


def test(word_idx: dict):
    return reader_creator(
        re.compile(r"aclImdb/test/pos/.*\.txt$"), re.compile(r"aclImdb/test/neg/.*\.txt$"), word_idx
    )


def word_dict() -> dict:
    """The vocabulary of the train and test reviews (words seen more than 150 times)."""
    return build_dict(_ALL, 150)


def fetch() -> None:
    download(URL, "imdb", MD5)

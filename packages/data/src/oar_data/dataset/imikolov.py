"""The Penn Treebank language-model data of Mikolov's RNNLM toolkit (``paddle.dataset.imikolov``).

Reads ``simple-examples.tgz`` directly (``./simple-examples/data/ptb.train.txt``
for ``train``, ``ptb.valid.txt`` for ``test``). Words are ``bytes`` as in
Paddle; ``'<s>'`` and ``'<e>'`` (one per line) are ``str``. ``build_dict``
keeps words seen more than ``min_word_freq`` times in both files, most frequent
first (ties by word), then ``'<unk>'``. ``DataType.NGRAM`` readers yield the
n-grams of ``<s> line <e>`` as id tuples; ``DataType.SEQ`` readers yield
``(<s> + line, line + <e>)`` id lists, skipping sources longer than ``n``
when ``n > 0``.
"""

from __future__ import annotations

import collections
import tarfile
from collections.abc import Callable, Iterator

from oar_data.dataset.common import download

URL = "https://dataset.bj.bcebos.com/imikolov%2Fsimple-examples.tgz"
MD5 = "30177ea32e27c525793142b6bf2c8e2d"
TRAIN_FILE = "./simple-examples/data/ptb.train.txt"
TEST_FILE = "./simple-examples/data/ptb.valid.txt"

__all__ = ["DataType", "build_dict", "train", "test", "fetch"]


class DataType:
    NGRAM = 1
    SEQ = 2


def _lines(name: str) -> Iterator[bytes]:
    with tarfile.open(download(URL, "imikolov", MD5)) as tar:
        member = tar.extractfile(name)
        if member is None:
            raise ValueError(f"imikolov: {name} is missing from {URL}")
        yield from member


def word_count(
    lines: Iterator[bytes], word_freq: collections.Counter | None = None
) -> collections.Counter:
    freq = word_freq if word_freq is not None else collections.Counter()
    for line in lines:
        for w in line.strip().split():
            freq[w] += 1
        freq["<s>"] += 1
        freq["<e>"] += 1
    return freq


def build_dict(min_word_freq: int = 50) -> dict:
    """Word -> id for words seen more than ``min_word_freq`` times; ``'<unk>'`` last."""
    freq = word_count(_lines(TEST_FILE), word_count(_lines(TRAIN_FILE)))
    freq.pop("<unk>", None)
    kept = [(w, c) for w, c in freq.items() if c > min_word_freq]
    # '<s>'/'<e>' are str and the words bytes: order ties by the text, str before bytes
    kept.sort(key=lambda wc: (-wc[1], isinstance(wc[0], bytes), wc[0]))
    word_idx = {w: i for i, (w, _) in enumerate(kept)}
    word_idx["<unk>"] = len(kept)
    return word_idx


def reader_creator(filename: str, word_idx: dict, n: int, data_type: int) -> Callable:
    def reader() -> Iterator:
        unk = word_idx["<unk>"]
        for line in _lines(filename):
            if data_type == DataType.NGRAM:
                if n <= 0:
                    raise ValueError(f"imikolov: an NGRAM reader needs n > 0, given {n}")
                words = ["<s>", *line.strip().split(), "<e>"]
                if len(words) >= n:
                    ids = [word_idx.get(w, unk) for w in words]
                    for i in range(n, len(ids) + 1):
                        yield tuple(ids[i - n : i])
            elif data_type == DataType.SEQ:
                ids = [word_idx.get(w, unk) for w in line.strip().split()]
                src = [word_idx["<s>"], *ids]
                trg = [*ids, word_idx["<e>"]]
                if n > 0 and len(src) > n:
                    continue
                yield src, trg
            else:
                raise ValueError(
                    f"imikolov: unknown data_type {data_type!r} (DataType.NGRAM or SEQ)"
                )

    return reader


def train(word_idx: dict, n: int, data_type: int = DataType.NGRAM) -> Callable:
    return reader_creator(TRAIN_FILE, word_idx, n, data_type)


def test(word_idx: dict, n: int, data_type: int = DataType.NGRAM) -> Callable:
    return reader_creator(TEST_FILE, word_idx, n, data_type)


def fetch() -> None:
    download(URL, "imikolov", MD5)

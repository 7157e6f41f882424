"""WMT16 English-German translation (Multi30k subset) (``paddle.dataset.wmt16``).

Reads ``wmt16.tar.gz`` (members ``wmt16/train``, ``wmt16/val``, ``wmt16/test``: one
``english<TAB>german`` pair per line). The dictionary of a language is built from
the training file and cached as ``<home>/wmt16/<lang>_<dict_size>.dict``: ``<s>``,
``<e>``, ``<unk>``, then the most frequent words (ties in order of first
appearance) up to ``dict_size`` entries. Readers yield ``(source ids with <s>
and <e>, <s> + target ids, target ids + <e>)``; unknown words get ``<unk>``'s id.
"""

from __future__ import annotations

import collections
import tarfile
from collections.abc import Callable, Iterator
from pathlib import Path

from oar_data.dataset.common import data_home, download

DATA_URL = "http://paddlemodels.bj.bcebos.com/wmt/wmt16.tar.gz"
DATA_MD5 = "0c38be43600334966403524a40dcd81e"
TOTAL_EN_WORDS = 11250
TOTAL_DE_WORDS = 19220
START_MARK = "<s>"
END_MARK = "<e>"
UNK_MARK = "<unk>"

__all__ = ["train", "test", "validation", "get_dict", "fetch"]


def _tar() -> str:
    return download(DATA_URL, "wmt16", DATA_MD5)


def _pairs(tar_file: str, member: str) -> Iterator[list]:
    with tarfile.open(tar_file) as tar:
        f = tar.extractfile(member)
        if f is None:
            raise ValueError(f"wmt16: {member} is missing from {tar_file}")
        for raw in f:
            cols = raw.decode("utf-8").strip().split("\t")
            if len(cols) == 2:
                yield cols


def _check(lang: str, dict_size: int) -> int:
    if lang not in ("en", "de"):
        raise ValueError(f"wmt16: lang must be 'en' or 'de', given {lang!r}")
    total = TOTAL_EN_WORDS if lang == "en" else TOTAL_DE_WORDS
    if isinstance(dict_size, bool) or not isinstance(dict_size, int) or dict_size <= 3:
        raise ValueError(f"wmt16: dict_size must be an int > 3, given {dict_size!r}")
    return min(dict_size, total)


def _dict_path(lang: str, dict_size: int) -> Path:
    return data_home() / "wmt16" / f"{lang}_{dict_size}.dict"


def _build_dict(tar_file: str, dict_size: int, path: Path, lang: str) -> None:
    counts: collections.Counter = collections.Counter()
    col = 0 if lang == "en" else 1
    for pair in _pairs(tar_file, "wmt16/train"):
        counts.update(pair[col].split())
    words = [w for w, _ in sorted(counts.items(), key=lambda wc: -wc[1])]  # stable: first seen
    words = words[: dict_size - 3]
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text("".join(f"{w}\n" for w in [START_MARK, END_MARK, UNK_MARK, *words]))
    tmp.replace(path)


def _load_dict(tar_file: str, dict_size: int, lang: str, reverse: bool = False) -> dict:
    path = _dict_path(lang, dict_size)
    if not path.exists() or len(path.read_text().splitlines()) != dict_size:
        _build_dict(tar_file, dict_size, path, lang)
    words = path.read_text().splitlines()
    return dict(enumerate(words)) if reverse else {w: i for i, w in enumerate(words)}


def reader_creator(
    tar_file: str, file_name: str, src_dict_size: int, trg_dict_size: int, src_lang: str
) -> Callable:
    def reader() -> Iterator[tuple]:
        trg_lang = "de" if src_lang == "en" else "en"
        src_dict = _load_dict(tar_file, src_dict_size, src_lang)
        trg_dict = _load_dict(tar_file, trg_dict_size, trg_lang)
        start, end = src_dict[START_MARK], src_dict[END_MARK]
        src_unk, trg_unk = src_dict[UNK_MARK], trg_dict[UNK_MARK]
        src_col = 0 if src_lang == "en" else 1
        for pair in _pairs(tar_file, file_name):
            src = [start] + [src_dict.get(w, src_unk) for w in pair[src_col].split()] + [end]
            trg = [trg_dict.get(w, trg_unk) for w in pair[1 - src_col].split()]
            yield src, [trg_dict[START_MARK], *trg], [*trg, trg_dict[END_MARK]]

    return reader


def _reader(member: str, src_dict_size: int, trg_dict_size: int, src_lang: str) -> Callable:
    if src_lang not in ("en", "de"):
        raise ValueError(f"wmt16: src_lang must be 'en' or 'de', given {src_lang!r}")
    trg_lang = "de" if src_lang == "en" else "en"
    return reader_creator(
        _tar(),
        member,
        _check(src_lang, src_dict_size),
        _check(trg_lang, trg_dict_size),
        src_lang,
    )


def train(src_dict_size: int, trg_dict_size: int, src_lang: str = "en") -> Callable:
    return _reader("wmt16/train", src_dict_size, trg_dict_size, src_lang)


def test(src_dict_size: int, trg_dict_size: int, src_lang: str = "en") -> Callable:
    return _reader("wmt16/test", src_dict_size, trg_dict_size, src_lang)


def validation(src_dict_size: int, trg_dict_size: int, src_lang: str = "en") -> Callable:
    return _reader("wmt16/val", src_dict_size, trg_dict_size, src_lang)


def get_dict(lang: str, dict_size: int, reverse: bool = False) -> dict:
    """Word -> id (id -> word with ``reverse``) of ``lang``'s dictionary."""
    return _load_dict(_tar(), _check(lang, dict_size), lang, reverse)


def fetch() -> None:
    _tar()

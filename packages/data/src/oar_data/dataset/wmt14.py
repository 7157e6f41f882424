"""WMT14 French-English translation, Paddle's preprocessed subset (``paddle.dataset.wmt14``).

Reads ``wmt14.tgz``: ``src.dict`` / ``trg.dict`` (one word per line, the first
``dict_size`` kept) and ``train/train``, ``test/test``, ``gen/gen``
(``french<TAB>english`` per line; other lines skipped). Readers yield
``(<s> + source ids + <e>, <s> + target ids, target ids + <e>)``; unknown words
get id 2 (``<unk>``); pairs with more than 80 ids on a side are skipped.
"""

from __future__ import annotations

import tarfile
from collections.abc import Callable, Iterator

from oar_data.dataset.common import download

URL_DEV_TEST = "http://www-lium.univ-lemans.fr/~schwenk/cslm_joint_paper/data/dev+test.tgz"
MD5_DEV_TEST = "7d7897317ddd8ba0ae5c5fa7248d3ff5"
URL_TRAIN = "http://paddlemodels.bj.bcebos.com/wmt/wmt14.tgz"
MD5_TRAIN = "0791583d57d5beb693b9414c5b36798c"
URL_MODEL = "http://paddlemodels.bj.bcebos.com/wmt%2Fwmt14.tgz"
MD5_MODEL = "0cb4a5366189b6acba876491c8724fa3"
START = "<s>"
END = "<e>"
UNK = "<unk>"
UNK_IDX = 2
MAX_LEN = 80

__all__ = ["train", "test", "gen", "get_dict", "fetch"]


def _read_dicts(tar: tarfile.TarFile, dict_size: int) -> tuple:
    dicts = {}
    for member in tar.getmembers():
        for kind in ("src", "trg"):
            if member.name.endswith(f"{kind}.dict"):
                lines = tar.extractfile(member).read().decode("utf-8").splitlines()  # type: ignore[union-attr]
                dicts[kind] = {w.strip(): i for i, w in enumerate(lines[:dict_size])}
    if set(dicts) != {"src", "trg"}:
        raise ValueError("wmt14: the archive must hold src.dict and trg.dict")
    return dicts["src"], dicts["trg"]


def reader_creator(tar_file: str, file_name: str, dict_size: int) -> Callable:
    def reader() -> Iterator[tuple]:
        with tarfile.open(tar_file) as tar:
            src_dict, trg_dict = _read_dicts(tar, dict_size)
            for member in tar.getmembers():
                if not member.name.endswith(file_name) or not member.isfile():
                    continue
                for raw in tar.extractfile(member):  # type: ignore[union-attr]
                    cols = raw.decode("utf-8").strip().split("\t")
                    if len(cols) != 2:
                        continue
                    src = [src_dict.get(w, UNK_IDX) for w in [START, *cols[0].split(), END]]
                    trg = [trg_dict.get(w, UNK_IDX) for w in cols[1].split()]
                    if len(src) > MAX_LEN or len(trg) > MAX_LEN:
                        continue
                    yield src, [trg_dict[START], *trg], [*trg, trg_dict[END]]

    return reader


def _tar() -> str:
    return download(URL_TRAIN, "wmt14", MD5_TRAIN)


def train(dict_size: int) -> Callable:
    return reader_creator(_tar(), "train/train", dict_size)


def test(dict_size: int) -> Callable:
    return reader_creator(_tar(), "test/test", dict_size)


def gen(dict_size: int) -> Callable:
    return reader_creator(_tar(), "gen/gen", dict_size)


def get_dict(dict_size: int, reverse: bool = True) -> tuple:
    """``(source dict, target dict)``: id -> word (word -> id with ``reverse=False``)."""
    with tarfile.open(_tar()) as tar:
        src, trg = _read_dicts(tar, dict_size)
    if reverse:
        return {i: w for w, i in src.items()}, {i: w for w, i in trg.items()}
    return src, trg


def fetch() -> None:
    _tar()

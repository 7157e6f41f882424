"""CoNLL-2005 semantic role labelling, test.wsj part (``paddle.dataset.conll05``).

Reads ``conll05st-tests.tar.gz`` (gzipped ``words`` and ``props`` files,
sentences separated by blank lines; props: the predicate lemma or ``-`` in the
first column, one bracketed argument column per predicate) and the word, verb
and label dictionaries (one entry per line). Each predicate of a sentence gives
one sample of nine id lists, as Paddle: words, the five context words around the
predicate (``bos``/``eos`` beyond the sentence) repeated per word, the
predicate, the context mark, and the BIO labels.

The label ids: ``B-X``, ``I-X`` pairs for the argument types in sorted order,
then ``O`` (Paddle numbers the pairs in ``set`` order, which changes with
Python's hash seed).
"""

from __future__ import annotations

import gzip
import tarfile
from collections.abc import Callable, Iterator

from oar_data.dataset.common import download

DATA_URL = "http://paddlemodels.bj.bcebos.com/conll05st/conll05st-tests.tar.gz"
DATA_MD5 = "387719152ae52d60422c016e92a742fc"
WORDDICT_URL = "http://paddlemodels.bj.bcebos.com/conll05st%2FwordDict.txt"
WORDDICT_MD5 = "ea7fb7d4c75cc6254716f0177a506baa"
VERBDICT_URL = "http://paddlemodels.bj.bcebos.com/conll05st%2FverbDict.txt"
VERBDICT_MD5 = "0d2977293bbb6cbefab5b0f97db1e77c"
TRGDICT_URL = "http://paddlemodels.bj.bcebos.com/conll05st%2FtargetDict.txt"
TRGDICT_MD5 = "d8c7f03ceb5fc2e5a0fa7503a4353751"
EMB_URL = "http://paddlemodels.bj.bcebos.com/conll05st%2Femb"
EMB_MD5 = "bf436eb0faa1f6f9103017f8be57cdb7"
UNK_IDX = 0
WORDS = "conll05st-release/test.wsj/words/test.wsj.words.gz"
PROPS = "conll05st-release/test.wsj/props/test.wsj.props.gz"

__all__ = ["test", "get_dict", "get_embedding", "fetch"]


def load_dict(filename: str) -> dict:
    with open(filename, encoding="utf-8") as f:
        return {line.strip(): i for i, line in enumerate(f)}


def load_label_dict(filename: str) -> dict:
    tags = set()
    with open(filename, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line.startswith(("B-", "I-")):
                tags.add(line[2:])
    out = {}
    for i, tag in enumerate(sorted(tags)):
        out[f"B-{tag}"] = 2 * i
        out[f"I-{tag}"] = 2 * i + 1
    out["O"] = 2 * len(tags)
    return out


def _sentences(tar: tarfile.TarFile, name: str) -> Iterator[list]:
    with gzip.GzipFile(fileobj=tar.extractfile(name)) as f:
        rows: list = []
        for raw in f:
            line = raw.decode("utf-8").strip()
            if line:
                rows.append(line.split())
            elif rows:
                yield rows
                rows = []
        if rows:
            yield rows


def _bio(column: list) -> list:
    labels, current = [], None
    for cell in column:
        if cell.startswith("("):
            tag = cell[1:].split("*")[0]
            labels.append(f"B-{tag}")
            current = None if cell.endswith(")") else tag
        elif current is not None:
            labels.append(f"I-{current}")
            if cell.endswith(")"):
                current = None
        else:
            labels.append("O")
    return labels


def corpus_reader(data_path: str, words_name: str, props_name: str) -> Callable:
    """``(words, predicate lemma, BIO labels)`` for every predicate of every sentence."""

    def reader() -> Iterator[tuple]:
        with tarfile.open(data_path) as tar:
            for words, props in zip(
                _sentences(tar, words_name), _sentences(tar, props_name), strict=True
            ):
                sentence = [w[0] for w in words]
                verbs = [row[0] for row in props if row[0] != "-"]
                for j, verb in enumerate(verbs):
                    yield sentence, verb, _bio([row[j + 1] for row in props])

    return reader


def reader_creator(
    corpus_reader: Callable,
    word_dict: dict | None = None,
    predicate_dict: dict | None = None,
    label_dict: dict | None = None,
) -> Callable:
    def reader() -> Iterator[tuple]:
        for sentence, predicate, labels in corpus_reader():
            n = len(sentence)
            v = labels.index("B-V")
            mark = [0] * n
            words = []
            for offset, edge in ((-2, "bos"), (-1, "bos"), (0, ""), (1, "eos"), (2, "eos")):
                i = v + offset
                if 0 <= i < n:
                    mark[i] = 1
                    words.append(sentence[i])
                else:
                    words.append(edge)
            word_idx = [word_dict.get(w, UNK_IDX) for w in sentence]  # type: ignore[union-attr]
            contexts = [[word_dict.get(w, UNK_IDX)] * n for w in words]  # type: ignore[union-attr]
            pred_idx = [predicate_dict.get(predicate)] * n  # type: ignore[union-attr]
            label_idx = [label_dict.get(w) for w in labels]  # type: ignore[union-attr]
            yield (word_idx, *contexts, pred_idx, mark, label_idx)

    return reader


def get_dict() -> tuple:
    """``(word_dict, verb_dict, label_dict)``."""
    word_dict = load_dict(download(WORDDICT_URL, "conll05st", WORDDICT_MD5))
    verb_dict = load_dict(download(VERBDICT_URL, "conll05st", VERBDICT_MD5))
    label_dict = load_label_dict(download(TRGDICT_URL, "conll05st", TRGDICT_MD5))
    return word_dict, verb_dict, label_dict


def get_embedding() -> str:
    """The path of the pretrained word embedding file."""
    return download(EMB_URL, "conll05st", EMB_MD5)


def test() -> Callable:
    word_dict, verb_dict, label_dict = get_dict()
    reader = corpus_reader(download(DATA_URL, "conll05st", DATA_MD5), WORDS, PROPS)
    return reader_creator(reader, word_dict, verb_dict, label_dict)


def fetch() -> None:
    for url, md5 in (
        (WORDDICT_URL, WORDDICT_MD5),
        (VERBDICT_URL, VERBDICT_MD5),
        (TRGDICT_URL, TRGDICT_MD5),
        (EMB_URL, EMB_MD5),
        (DATA_URL, DATA_MD5),
    ):
        download(url, "conll05st", md5)

"""``oar.dataset``: the classic Paddle datasets, downloaded and cached on first use."""

from oar_data.dataset import (
    cifar,
    common,
    conll05,
    flowers,
    image,
    imdb,
    imikolov,
    mnist,
    movielens,
    mq2007,
    sentiment,
    uci_housing,
    voc2012,
    wmt14,
    wmt16,
)

__all__ = [
    "cifar",
    "common",
    "conll05",
    "flowers",
    "image",
    "imdb",
    "imikolov",
    "mnist",
    "movielens",
    "mq2007",
    "sentiment",
    "uci_housing",
    "voc2012",
    "wmt14",
    "wmt16",
]

"""``oar.dataset``: the classic Paddle datasets, downloaded and cached on first use."""

from oar_data.dataset import (
    cifar,
    common,
    image,
    imdb,
    imikolov,
    mnist,
    movielens,
    uci_housing,
    wmt16,
)

__all__ = [
    "cifar",
    "common",
    "image",
    "imdb",
    "imikolov",
    "mnist",
    "movielens",
    "uci_housing",
    "wmt16",
]

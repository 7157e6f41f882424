"""``oar.dataset``: the classic Paddle datasets, downloaded and cached on first use."""

from oar_data.dataset import cifar, common, imdb, mnist, uci_housing

__all__ = ["cifar", "common", "imdb", "mnist", "uci_housing"]

"""MovieLens 1M ratings (``paddle.dataset.movielens``).

Reads ``ml-1m.zip`` directly (``movies.dat``, ``users.dat``, ``ratings.dat``,
latin-1, ``::``-separated). A sample is ``user.value() + movie.value() +
[[rating * 2 - 5]]``: ``[user id, 1 if female else 0, age bucket, job id,
movie id, [category ids], [title word ids], [score]]``. Ratings go to ``test``
with probability ``test_ratio`` (``random.Random(rand_seed)``, one draw per
rating line), to ``train`` otherwise, as Paddle splits them.

Category and title-word ids are given in sorted order (Paddle numbers them in
``set`` order, which changes from run to run with Python's hash seed).
"""

from __future__ import annotations

import functools
import random
import re
import zipfile
from collections.abc import Callable, Iterator

from oar_data.dataset.common import download

URL = "https://dataset.bj.bcebos.com/movielens%2Fml-1m.zip"
MD5 = "c4d9eecfca2ab87c1945afe126590906"

__all__ = [
    "train",
    "test",
    "get_movie_title_dict",
    "max_movie_id",
    "max_user_id",
    "age_table",
    "movie_categories",
    "max_job_id",
    "user_info",
    "movie_info",
    "fetch",
]

age_table = [1, 18, 25, 35, 45, 50, 56]
_TITLE = re.compile(r"^(.*)\((\d+)\)$")


class MovieInfo:
    """A movie: id, categories and title; ``value()`` is its part of a sample."""

    def __init__(self, index: int, categories: list, title: str) -> None:
        self.index = int(index)
        self.categories = categories
        self.title = title

    def value(self) -> list:
        meta = _meta()
        return [
            self.index,
            [meta["categories"][c] for c in self.categories],
            [meta["titles"][w.lower()] for w in self.title.split()],
        ]

    def __repr__(self) -> str:
        return f"<MovieInfo id({self.index}), title({self.title}), categories({self.categories})>"


class UserInfo:
    """A user: id, gender, age bucket, job; ``value()`` is their part of a sample."""

    def __init__(self, index: str, gender: str, age: str, job_id: str) -> None:
        self.index = int(index)
        self.is_male = gender == "M"
        self.age = age_table.index(int(age))
        self.job_id = int(job_id)

    def value(self) -> list:
        return [self.index, 0 if self.is_male else 1, self.age, self.job_id]

    def __repr__(self) -> str:
        gender = "M" if self.is_male else "F"
        return f"<UserInfo id({self.index}), gender({gender}), age({age_table[self.age]}), job({self.job_id})>"


def _lines(package: zipfile.ZipFile, name: str) -> Iterator[str]:
    with package.open(f"ml-1m/{name}") as f:
        for raw in f:
            line = raw.decode("latin-1").strip()
            if line:
                yield line


@functools.cache
def _meta_for(path: str) -> dict:
    movies, users = {}, {}
    categories, words = set(), set()
    with zipfile.ZipFile(path) as package:
        for line in _lines(package, "movies.dat"):
            movie_id, title, cats = line.split("::")
            cat_list = cats.split("|")
            match = _TITLE.match(title)
            title = match.group(1) if match else title
            categories.update(cat_list)
            words.update(w.lower() for w in title.split())
            movies[int(movie_id)] = MovieInfo(movie_id, cat_list, title)
        for line in _lines(package, "users.dat"):
            uid, gender, age, job, _zip = line.split("::")
            users[int(uid)] = UserInfo(uid, gender, age, job)
    return {
        "movies": movies,
        "users": users,
        "categories": {c: i for i, c in enumerate(sorted(categories))},
        "titles": {w: i for i, w in enumerate(sorted(words))},
    }


def _meta() -> dict:
    return _meta_for(download(URL, "movielens", MD5))


def _reader(rand_seed: int = 0, test_ratio: float = 0.1, is_test: bool = False) -> Iterator[list]:
    meta = _meta()
    rand = random.Random(rand_seed)
    with zipfile.ZipFile(download(URL, "movielens", MD5)) as package:
        for line in _lines(package, "ratings.dat"):
            if (rand.random() < test_ratio) != is_test:
                continue
            uid, movie_id, rating, _ = line.split("::")
            user = meta["users"][int(uid)]
            movie = meta["movies"][int(movie_id)]
            yield user.value() + movie.value() + [[float(rating) * 2 - 5.0]]


def train() -> Callable:
    return functools.partial(_reader, is_test=False)


def test() -> Callable:
    return functools.partial(_reader, is_test=True)


def get_movie_title_dict() -> dict:
    return dict(_meta()["titles"])


def movie_categories() -> dict:
    return dict(_meta()["categories"])


def max_movie_id() -> int:
    return max(_meta()["movies"])


def max_user_id() -> int:
    return max(_meta()["users"])


def max_job_id() -> int:
    return max(u.job_id for u in _meta()["users"].values())


def user_info() -> dict:
    return dict(_meta()["users"])


def movie_info() -> dict:
    return dict(_meta()["movies"])


def fetch() -> None:
    download(URL, "movielens", MD5)

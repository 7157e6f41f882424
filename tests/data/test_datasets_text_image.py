"""imikolov on a test-made archive (expected ids from Fluid 1.8.5 on the same archive); image helpers."""

import hashlib
import io
import tarfile

import numpy as np
import pytest

pytest.importorskip("oar_data")

try:  # the image helpers (and datasets of images) decode with Pillow, an optional dependency
    import PIL  # noqa: F401

    HAVE_PIL = True
except ImportError:
    HAVE_PIL = False
needs_pil = pytest.mark.skipif(not HAVE_PIL, reason="Pillow is not installed (pip install Pillow)")

TRAIN = b"the cat sat on the mat\nthe dog sat\na cat and a dog\n"
VALID = b"the cat ran\nzebra sat on a mat today\n"


@pytest.fixture
def imikolov(home, tmp_path, monkeypatch):
    import oar.dataset.imikolov as imikolov

    d = tmp_path / "imikolov"
    d.mkdir()
    path = d / imikolov.URL.split("/")[-1]
    with tarfile.open(path, "w:gz") as tar:
        for name, data in (("ptb.train.txt", TRAIN), ("ptb.valid.txt", VALID)):
            info = tarfile.TarInfo(f"./simple-examples/data/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    monkeypatch.setattr(imikolov, "MD5", hashlib.md5(path.read_bytes()).hexdigest())
    return imikolov


def test_imikolov_matches_fluid(imikolov):
    word_idx = imikolov.build_dict(min_word_freq=1)
    assert sorted(word_idx.items(), key=lambda kv: kv[1]) == [
        ("<e>", 0),
        ("<s>", 1),
        (b"the", 2),
        (b"a", 3),
        (b"cat", 4),
        (b"sat", 5),
        (b"dog", 6),
        (b"mat", 7),
        (b"on", 8),
        ("<unk>", 9),
    ]
    assert list(imikolov.train(word_idx, 3)()) == [
        (1, 2, 4), (2, 4, 5), (4, 5, 8), (5, 8, 2), (8, 2, 7), (2, 7, 0), (1, 2, 6),
        (2, 6, 5), (6, 5, 0), (1, 3, 4), (3, 4, 9), (4, 9, 3), (9, 3, 6), (3, 6, 0),
    ]  # fmt: skip
    assert list(imikolov.test(word_idx, 3)()) == [
        (1, 2, 4), (2, 4, 9), (4, 9, 0), (1, 9, 5), (9, 5, 8), (5, 8, 3), (8, 3, 7),
        (3, 7, 9), (7, 9, 0),
    ]  # fmt: skip
    seq = imikolov.DataType.SEQ
    assert list(imikolov.train(word_idx, 5, seq)()) == [([1, 2, 6, 5], [2, 6, 5, 0])]
    assert list(imikolov.test(word_idx, -1, seq)()) == [
        ([1, 2, 4, 9], [2, 4, 9, 0]),
        ([1, 9, 5, 8, 3, 7, 9], [9, 5, 8, 3, 7, 9, 0]),
    ]
    with pytest.raises(ValueError, match="n > 0"):
        list(imikolov.train(word_idx, 0)())


@needs_pil
def test_image_helpers(tmp_path):
    import oar.dataset.image as image
    from PIL import Image

    rgb = np.zeros((40, 60, 3), np.uint8)
    rgb[..., 0] = 200  # red in RGB
    path = tmp_path / "red.png"
    Image.fromarray(rgb).save(path)
    im = image.load_image(str(path))
    assert im.shape == (40, 60, 3) and im[0, 0].tolist() == [0, 0, 200]  # BGR
    assert image.load_image(str(path), is_color=False).shape == (40, 60)
    assert image.load_image_bytes(path.read_bytes()).shape == (40, 60, 3)
    small = image.resize_short(im, 20)
    assert small.shape == (20, 30, 3)
    assert image.resize_short(np.zeros((60, 40), np.uint8), 20).shape == (30, 20)
    grid = np.arange(5 * 6 * 3).reshape(5, 6, 3)
    np.testing.assert_array_equal(image.center_crop(grid, 3), grid[1:4, 1:4])
    np.testing.assert_array_equal(image.left_right_flip(grid), grid[:, ::-1])
    assert image.to_chw(grid).shape == (3, 5, 6)
    assert image.random_crop(grid, 4).shape == (4, 4, 3)
    out = image.simple_transform(im, 20, 16, is_train=False, mean=[1.0, 2.0, 3.0])
    assert out.shape == (3, 16, 16) and out.dtype == np.float32
    np.testing.assert_allclose(out[:, 0, 0], [-1.0, -2.0, 197.0], atol=1.0)
    assert image.load_and_transform(str(path), 20, 16, is_train=True).shape == (3, 16, 16)
    with pytest.raises(ValueError, match="exceeds"):
        image.center_crop(grid, 9)


MOVIES = "1::Toy Story (1995)::Animation|Children's|Comedy\n2::Jumanji (1995)::Adventure|Children's|Fantasy\n3::Grumpier Old Men (1995)::Comedy|Romance\n"
USERS = "1::F::1::10::48067\n2::M::56::16::70072\n3::M::25::15::55117\n"
RATINGS = {
    (1, 1): 2,
    (1, 2): 5,
    (1, 3): 1,
    (2, 1): 3,
    (2, 2): 1,
    (2, 3): 4,
    (3, 1): 4,
    (3, 2): 4,
    (3, 3): 4,
}


@pytest.fixture
def movielens(home, tmp_path, monkeypatch):
    import zipfile

    import oar.dataset.movielens as movielens

    d = tmp_path / "movielens"
    d.mkdir()
    path = d / movielens.URL.split("/")[-1]
    ratings = "".join(f"{u}::{m}::{r}::97830{u}{m}\n" for (u, m), r in RATINGS.items())
    with zipfile.ZipFile(path, "w") as z:
        for name, text in (("movies.dat", MOVIES), ("users.dat", USERS), ("ratings.dat", ratings)):
            z.writestr(f"ml-1m/{name}", text)
    monkeypatch.setattr(movielens, "MD5", hashlib.md5(path.read_bytes()).hexdigest())
    return movielens


def test_movielens_matches_fluid(movielens):
    """Fluid 1.8.5 on the same archive, with its category / title ids decoded to words
    (its ids follow Python's set order, oar's are sorted)."""
    cats = {v: k for k, v in movielens.movie_categories().items()}
    words = {v: k for k, v in movielens.get_movie_title_dict().items()}
    decoded = [
        (s[:5], [cats[c] for c in s[5]], [words[w] for w in s[6]], s[7])
        for s in movielens.train()()
    ]
    movie = {
        1: (["Animation", "Children's", "Comedy"], ["toy", "story"]),
        2: (["Adventure", "Children's", "Fantasy"], ["jumanji"]),
        3: (["Comedy", "Romance"], ["grumpier", "old", "men"]),
    }
    user = {1: [1, 1, 0, 10], 2: [2, 0, 6, 16], 3: [3, 0, 2, 15]}
    scores = {1: [-1.0, 5.0, -3.0], 2: [1.0, -3.0, 3.0], 3: [3.0, 3.0, 3.0]}
    expected = [
        ([*user[u], m], *movie[m], [scores[u][m - 1]]) for u in (1, 2, 3) for m in (1, 2, 3)
    ]
    assert decoded == expected
    assert list(movielens.test()()) == []  # random.Random(0) sends none of 9 lines to test
    assert (movielens.max_movie_id(), movielens.max_user_id(), movielens.max_job_id()) == (3, 3, 16)
    assert movielens.movie_info()[1].title == "Toy Story "
    assert movielens.user_info()[2].age == 6


WMT16 = {
    "train": "a cat sits\teine katze sitzt\nthe cat runs\tdie katze rennt\na dog\tein hund\n",
    "val": "the dog sits\tder hund sitzt\n",
    "test": "a bird\tein vogel\n",
}


@pytest.fixture
def wmt16(home, tmp_path, monkeypatch):
    import oar.dataset.wmt16 as wmt16

    d = tmp_path / "wmt16"
    d.mkdir()
    path = d / wmt16.DATA_URL.split("/")[-1]
    with tarfile.open(path, "w:gz") as tar:
        for name, text in WMT16.items():
            data = text.encode()
            info = tarfile.TarInfo(f"wmt16/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    monkeypatch.setattr(wmt16, "DATA_MD5", hashlib.md5(path.read_bytes()).hexdigest())
    return wmt16


def test_wmt16_matches_fluid(wmt16, tmp_path):
    """Samples and the cached dictionary files as Fluid 1.8.5 makes them from this archive."""
    assert list(wmt16.train(10, 8)()) == [
        ([0, 3, 4, 5, 1], [0, 4, 3, 5], [4, 3, 5, 1]),
        ([0, 6, 4, 7, 1], [0, 6, 3, 7], [6, 3, 7, 1]),
        ([0, 3, 8, 1], [0, 2, 2], [2, 2, 1]),
    ]
    assert list(wmt16.test(10, 8)()) == [([0, 3, 2, 1], [0, 2, 2], [2, 2, 1])]
    assert list(wmt16.validation(10, 8, src_lang="de")()) == [
        ([0, 2, 9, 5, 1], [0, 6, 2, 5], [6, 2, 5, 1])
    ]
    assert (tmp_path / "wmt16" / "en_10.dict").read_text().split() == [
        "<s>", "<e>", "<unk>", "a", "cat", "sits", "the", "runs", "dog",
    ]  # fmt: skip
    assert (tmp_path / "wmt16" / "de_8.dict").read_text().split() == [
        "<s>", "<e>", "<unk>", "katze", "eine", "sitzt", "die", "rennt",
    ]  # fmt: skip
    assert wmt16.get_dict("de", 8, reverse=True)[3] == "katze"
    with pytest.raises(ValueError, match="src_lang"):
        wmt16.train(10, 8, src_lang="fr")


WMT14 = {
    "wmt14/src.dict": "<s>\n<e>\n<unk>\nle\nchat\nchien\n",
    "wmt14/trg.dict": "<s>\n<e>\n<unk>\nthe\ncat\ndog\n",
    "wmt14/train/train": "le chat\tthe cat\nle chien noir\tthe black dog\n\nbad line\n",
    "wmt14/test/test": "chat\tcat\n",
    "wmt14/gen/gen": "chien\tdog\n",
}


def test_wmt14_matches_fluid(home, tmp_path, monkeypatch):
    import oar.dataset.wmt14 as wmt14

    d = tmp_path / "wmt14"
    d.mkdir()
    path = d / wmt14.URL_TRAIN.split("/")[-1]
    with tarfile.open(path, "w:gz") as tar:
        for name, text in WMT14.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    monkeypatch.setattr(wmt14, "MD5_TRAIN", hashlib.md5(path.read_bytes()).hexdigest())
    assert list(wmt14.train(5)()) == [
        ([0, 3, 4, 1], [0, 3, 4], [3, 4, 1]),
        ([0, 3, 2, 2, 1], [0, 3, 2, 2], [3, 2, 2, 1]),
    ]
    assert list(wmt14.test(6)()) == [([0, 4, 1], [0, 4], [4, 1])]
    assert list(wmt14.gen(6)()) == [([0, 5, 1], [0, 5], [5, 1])]
    src, trg = wmt14.get_dict(5)
    assert src == {0: "<s>", 1: "<e>", 2: "<unk>", 3: "le", 4: "chat"}
    assert wmt14.get_dict(5, reverse=False)[1]["cat"] == 4


def test_conll05_matches_fluid(home, tmp_path, monkeypatch):
    """Fluid 1.8.5 on the same files (labels decoded: its label ids follow set order)."""
    import gzip

    import oar.dataset.conll05 as conll05

    d = tmp_path / "conll05st"
    d.mkdir()
    files = {
        conll05.WORDDICT_URL: "<unk>\nthe\ncat\nsat\ndown\ndogs\nbark\nloudly\nbos\neos\n",
        conll05.VERBDICT_URL: "sit\nbark\n",
        conll05.TRGDICT_URL: "B-A0\nI-A0\nB-V\nI-V\nB-AM-DIR\nI-AM-DIR\nB-AM-MNR\nI-AM-MNR\nO\n",
    }
    for url, text in files.items():
        path = d / url.split("/")[-1]
        path.write_text(text)
        const = {conll05.WORDDICT_URL: "WORDDICT_MD5", conll05.VERBDICT_URL: "VERBDICT_MD5"}.get(
            url, "TRGDICT_MD5"
        )
        monkeypatch.setattr(conll05, const, hashlib.md5(path.read_bytes()).hexdigest())
    words = b"The\ncat\nsat\ndown\n\nDogs\nbark\nloudly\n\n"
    props = b"-\t(A0*\n-\t*)\nsit\t(V*)\n-\t(AM-DIR*)\n\n-\t(A0*)\nbark\t(V*)\n-\t(AM-MNR*)\n\n"
    tar_path = d / conll05.DATA_URL.split("/")[-1]
    with tarfile.open(tar_path, "w:gz") as tar:
        for name, data in ((conll05.WORDS, words), (conll05.PROPS, props)):
            blob = gzip.compress(data)
            info = tarfile.TarInfo(name)
            info.size = len(blob)
            tar.addfile(info, io.BytesIO(blob))
    monkeypatch.setattr(conll05, "DATA_MD5", hashlib.md5(tar_path.read_bytes()).hexdigest())
    word_dict, verb_dict, label_dict = conll05.get_dict()
    names = {v: k for k, v in label_dict.items()}
    samples = list(conll05.test()())
    assert [s[:8] for s in samples] == [
        ([0, 2, 3, 4], [0] * 4, [2] * 4, [3] * 4, [4] * 4, [9] * 4, [0] * 4, [1] * 4),
        ([0, 6, 7], [8] * 3, [0] * 3, [6] * 3, [7] * 3, [9] * 3, [1] * 3, [1] * 3),
    ]
    assert [[names[i] for i in s[8]] for s in samples] == [
        ["B-A0", "I-A0", "B-V", "B-AM-DIR"],
        ["B-A0", "B-V", "B-AM-MNR"],
    ]
    assert label_dict["O"] == 8 and sorted(label_dict.values()) == list(range(9))


def _mq_lines():
    rows = [(2, 10, "GX1"), (0, 10, "GX2"), (1, 10, "GX3"), (0, 11, "GX4"), (0, 11, "GX5"), (1, 12, "GX6"), (1, 12, "GX7")]  # fmt: skip
    out = []
    for k, (rel, q, doc) in enumerate(rows):
        feats = " ".join(f"{i}:{round((k * 7 + i) % 10 / 10, 1)}" for i in range(1, 47))
        out.append(f"{rel} qid:{q} {feats} #docid = {doc} inc = 1 prob = 0.5")
    return "\n".join(out) + "\n"


def test_mq2007_matches_fluid(home, tmp_path, monkeypatch):
    """Fluid 1.8.5 on the same file: grouping, filter, orders, pair/list layouts, dtypes."""
    import oar.dataset.mq2007 as mq

    fold = tmp_path / "MQ2007" / "MQ2007" / "Fold1"
    fold.mkdir(parents=True)
    (fold / "train.txt").write_text(_mq_lines())
    lists = mq.load_from_text(str(fold / "train.txt"))
    assert [(q.query_id, len(q)) for q in lists] == [(10, 3), (11, 2), (12, 2)]
    assert lists[0][0].description == "docid = GX1 inc = 1 prob = 0.5"
    assert [q.query_id for q in mq.query_filter(lists)] == [10, 12]
    points = list(mq.gen_point(lists[0]))
    assert [p[0] for p in points] == [2, 1, 0]
    assert [round(float(p[1][0]), 1) for p in points] == [0.1, 0.5, 0.8]
    pairs = list(mq.gen_pair(lists[0]))
    assert [(int(p[0][0]), round(float(p[1][0]), 1), round(float(p[2][0]), 1)) for p in pairs] == [
        (1, 0.1, 0.5), (1, 0.1, 0.8), (1, 0.5, 0.8),
    ]  # fmt: skip
    assert pairs[0][0].dtype == np.int64 and pairs[0][1].dtype == np.float64
    listwise = list(mq.train(format="listwise"))
    assert [(r.ravel().tolist(), f.shape) for r, f in listwise] == [
        ([2, 1, 0], (3, 46)),
        ([1, 1], (2, 46)),
    ]
    assert len(list(mq.train())) == 3  # pairwise: q12's equal relevances give no pair
    assert len(list(mq.train(format="pointwise"))) == 5  # every document (see the module doc)
    missing = tmp_path / "missing.txt"
    missing.write_text("1 qid:5 1:0.5 3:0.25 #d\n")
    assert mq.load_from_text(str(missing), fill_missing=-7)[0][0].feature_vector[:4] == [
        0.5,
        -7.0,
        0.25,
        -7.0,
    ]


@needs_pil
def test_voc2012_reads_images_and_class_labels(home, tmp_path, monkeypatch):
    import oar.dataset.voc2012 as voc
    from PIL import Image

    def png(img):
        buf = io.BytesIO()
        img.save(buf, format="PNG")
        return buf.getvalue()

    label = Image.fromarray(np.arange(20, dtype=np.uint8).reshape(4, 5), mode="P")
    label.putpalette([c for i in range(256) for c in (i, 255 - i, i // 2)])  # VOC-style palette
    files = {
        voc.SET_FILE.format(s): t.encode()
        for s, t in (("trainval", "a\nb\n"), ("train", "a\n"), ("val", "b\n"))
    }
    for name, value in (("a", 100), ("b", 200)):
        rgb = np.zeros((4, 5, 3), np.uint8)
        rgb[..., 2] = value  # blue
        files[voc.DATA_FILE.format(name)] = png(
            Image.fromarray(rgb)
        )  # PNG bytes decode like a JPEG
        files[voc.LABEL_FILE.format(name)] = png(label)
    d = tmp_path / voc.CACHE_DIR
    d.mkdir()
    path = d / voc.VOC_URL.split("/")[-1]
    with tarfile.open(path, "w") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    monkeypatch.setattr(voc, "VOC_MD5", hashlib.md5(path.read_bytes()).hexdigest())
    samples = list(voc.train()())
    assert len(samples) == 2 and len(list(voc.test()())) == 1 and len(list(voc.val()())) == 1
    image, labels = samples[1]
    assert image.shape == (4, 5, 3) and image[0, 0].tolist() == [200, 0, 0]  # BGR
    np.testing.assert_array_equal(labels, np.arange(20).reshape(4, 5))


@needs_pil
def test_flowers_matches_fluid(home, tmp_path, monkeypatch):
    """Fluid 1.8.5 on the same files: splits (train = 'tstid'), 0-based labels, archive order,
    and the default mapper's flattened mean-subtracted 224 x 224 crop."""
    scipy_io = pytest.importorskip("scipy.io")
    import oar.dataset.flowers as flowers
    from PIL import Image

    d = tmp_path / "flowers"
    d.mkdir()
    scipy_io.savemat(d / "imagelabels.mat", {"labels": np.array([[3, 1, 2, 3]])})
    scipy_io.savemat(
        d / "setid.mat",
        {"trnid": np.array([[1, 2]]), "valid": np.array([[3]]), "tstid": np.array([[4]])},
    )
    with tarfile.open(d / "102flowers.tgz", "w:gz") as tar:
        for i in (2, 1, 4, 3):  # archive order, as the tgz lists them
            buf = io.BytesIO()
            Image.fromarray(np.full((40, 30, 3), i * 40, np.uint8)).save(buf, format="PNG")
            info = tarfile.TarInfo(f"jpg/image_{i:05d}.jpg")
            info.size = len(buf.getvalue())
            tar.addfile(info, io.BytesIO(buf.getvalue()))
    for const, name in (
        ("DATA_MD5", "102flowers.tgz"),
        ("LABEL_MD5", "imagelabels.mat"),
        ("SETID_MD5", "setid.mat"),
    ):
        monkeypatch.setattr(flowers, const, hashlib.md5((d / name).read_bytes()).hexdigest())

    def summary(reader):
        return [(x.shape, x.dtype, round(float(x.mean()), 1), label) for x, label in reader()]

    f32 = np.dtype("float32")
    assert summary(flowers.train(use_xmap=False)) == [((150528,), f32, 45.2, 2)]
    assert summary(flowers.test()) == [((150528,), f32, -34.8, 0), ((150528,), f32, -74.8, 2)]
    assert summary(flowers.valid(use_xmap=False)) == [((150528,), f32, 5.2, 1)]


def test_sentiment_matches_fluid(home, tmp_path, monkeypatch):
    """Fluid 1.8.5 (with NLTK) on the same zip, with 3 training and 4 total instances."""
    import zipfile

    import oar.dataset.sentiment as sentiment

    d = tmp_path / "corpora"
    d.mkdir()
    path = d / "movie_reviews.zip"
    texts = {
        "neg/cv000_1.txt": "bad movie , really bad .\nno-one liked it\n",
        "neg/cv001_2.txt": "boring film\n",
        "pos/cv000_3.txt": "great movie !\nloved it's style\n",
        "pos/cv001_4.txt": "good film , good cast\n",
    }
    with zipfile.ZipFile(path, "w") as z:
        for name, text in texts.items():
            z.writestr(f"movie_reviews/{name}", text)
    monkeypatch.setattr(sentiment, "MD5", hashlib.md5(path.read_bytes()).hexdigest())
    monkeypatch.setattr(sentiment, "NUM_TRAINING_INSTANCES", 3)
    monkeypatch.setattr(sentiment, "NUM_TOTAL_INSTANCES", 4)
    assert [w for w, _ in sentiment.get_word_dict()] == [
        "bad", "movie", ",", "it", "film", "good", "really", ".", "no", "-", "one", "liked",
        "boring", "great", "!", "loved", "'", "s", "style", "cast",
    ]  # fmt: skip
    assert sentiment.sort_files() == [
        "neg/cv000_1.txt",
        "pos/cv000_3.txt",
        "neg/cv001_2.txt",
        "pos/cv001_4.txt",
    ]
    assert list(sentiment.train()) == [
        ([0, 1, 2, 6, 0, 7, 8, 9, 10, 11, 3], 0),
        ([13, 1, 14, 15, 3, 16, 17, 18], 1),
        ([12, 4], 0),
    ]
    assert list(sentiment.test()) == [([5, 4, 2, 5, 19], 1)]


def test_common_split_and_cluster_files_reader(tmp_path):
    from oar.dataset import common

    common.split(lambda: iter(range(7)), 3, suffix=str(tmp_path / "part-%05d.pickle"))
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"part-0000{i}.pickle" for i in range(3)]
    pattern = str(tmp_path / "part-*.pickle")
    assert list(common.cluster_files_reader(pattern, 2, 0)()) == [0, 1, 2, 6]
    assert list(common.cluster_files_reader(pattern, 2, 1)()) == [3, 4, 5]

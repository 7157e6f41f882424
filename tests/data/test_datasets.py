"""Datasets on test-made files in the upstream formats: parsing, cache location, md5, offline errors."""

import gzip
import hashlib
import io
import pickle
import struct
import tarfile

import numpy as np
import pytest

pytest.importorskip("oar_data")


def _md5(path):
    return hashlib.md5(path.read_bytes()).hexdigest()


def write_idx_images(path, images):
    n, rows, cols = images.shape
    with gzip.open(path, "wb") as f:
        f.write(struct.pack(">IIII", 2051, n, rows, cols) + images.astype(np.uint8).tobytes())


def write_idx_labels(path, labels):
    with gzip.open(path, "wb") as f:
        f.write(struct.pack(">II", 2049, len(labels)) + np.asarray(labels, np.uint8).tobytes())


@pytest.fixture
def fake_mnist(home, monkeypatch):
    import oar.dataset.mnist as mnist

    rng = np.random.default_rng(0)
    d = home / "mnist"
    d.mkdir()
    data = {}
    for part, n in (("train", 12), ("t10k", 5)):
        images = rng.integers(0, 256, (n, 28, 28))
        labels = rng.integers(0, 10, n)
        write_idx_images(d / f"{part}-images-idx3-ubyte.gz", images)
        write_idx_labels(d / f"{part}-labels-idx1-ubyte.gz", labels)
        data[part] = (images, labels)
    # the real md5s belong to the real files: point the module at these files' md5s
    for const, name in (
        ("TRAIN_IMAGE_MD5", "train-images"),
        ("TRAIN_LABEL_MD5", "train-labels"),
        ("TEST_IMAGE_MD5", "t10k-images"),
        ("TEST_LABEL_MD5", "t10k-labels"),
    ):
        kind = name.split("-")[1]
        monkeypatch.setattr(
            mnist,
            const,
            _md5(d / f"{name.split('-')[0]}-{kind}-idx{3 if kind == 'images' else 1}-ubyte.gz"),
        )
    return mnist, data


def test_mnist_samples_match_paddle(fake_mnist):
    mnist, data = fake_mnist
    train = list(mnist.train()())
    assert len(train) == 12
    images, labels = data["train"]
    for (img, lab), ref_img, ref_lab in zip(train, images, labels):
        assert img.dtype == np.float32 and img.shape == (784,)
        np.testing.assert_allclose(img, ref_img.reshape(-1) / 255.0 * 2.0 - 1.0, atol=1e-6)
        assert type(lab) is int and lab == ref_lab
    assert all(-1.0 <= s[0].min() and s[0].max() <= 1.0 for s in train)
    assert [lab for _, lab in mnist.test()()] == data["t10k"][1].tolist()


def test_import_forms(fake_mnist):
    import oar
    import oar.dataset.mnist as mnist2

    assert mnist2 is fake_mnist[0] and oar.dataset.mnist is mnist2
    assert oar.dataset.uci_housing.feature_names[0] == "CRIM"


def test_corrupted_file_is_caught_by_md5(fake_mnist, home):
    mnist, _ = fake_mnist
    path = home / "mnist" / "train-labels-idx1-ubyte.gz"
    path.write_bytes(path.read_bytes()[:-3] + b"xyz")
    with pytest.raises(
        RuntimeError,
        match=r"train-labels-idx1-ubyte.gz is corrupted.*md5 is [0-9a-f]{32}, expected",
    ):
        mnist.train()


def test_missing_file_says_where_to_put_it(home):
    import oar.dataset.uci_housing as uci

    with pytest.raises(RuntimeError) as info:
        uci.train()
    msg = str(info.value)
    assert (
        str(home / "uci_housing" / "housing.data") in msg
        and uci.URL in msg
        and "does not exist" in msg
    )


def test_failed_download_gives_the_same_advice(home, monkeypatch):
    import oar.dataset.mnist as mnist
    from oar_data.dataset import common

    monkeypatch.delenv("OAR_DATA_OFFLINE")
    monkeypatch.setattr(mnist, "TRAIN_IMAGE_URL", "http://127.0.0.1:9/nothing-here.gz")
    monkeypatch.setattr(common, "RETRIES", 1)
    with pytest.raises(
        RuntimeError, match=r"downloading http://127.0.0.1:9/nothing-here.gz failed.*put it at"
    ):
        mnist.train()


def test_uci_housing_normalisation_and_split(home, monkeypatch):
    import oar.dataset.uci_housing as uci

    rng = np.random.default_rng(0)
    table = np.round(rng.uniform(0, 10, (20, 14)), 3)
    path = home / "uci_housing" / "housing.data"
    path.parent.mkdir()
    path.write_text("\n".join(" ".join(f"{v:.3f}" for v in row) for row in table))
    monkeypatch.setattr(uci, "MD5", _md5(path))
    # reference: features centred on the mean and divided by the range; first 80% train
    ref = table.copy()
    span = table.max(0) - table.min(0)
    ref[:, :13] = (table[:, :13] - table.mean(0)[:13]) / span[:13]
    train, test = list(uci.train()()), list(uci.test()())
    assert len(train) == 16 and len(test) == 4
    np.testing.assert_allclose(np.stack([x for x, _ in train]), ref[:16, :13], rtol=1e-12)
    np.testing.assert_allclose(np.stack([y for _, y in test]), ref[16:, 13:])
    assert train[0][0].shape == (13,) and train[0][1].shape == (1,)


def test_cifar10_from_a_made_tarball(home, monkeypatch):
    import oar.dataset.cifar as cifar

    rng = np.random.default_rng(0)
    path = home / "cifar" / "cifar-10-python.tar.gz"
    path.parent.mkdir()
    batches = {}
    with tarfile.open(path, "w:gz") as tar:
        for name, n in (("data_batch_1", 3), ("data_batch_2", 2), ("test_batch", 2)):
            b = {
                b"data": rng.integers(0, 256, (n, 3072)).astype(np.uint8),
                b"labels": rng.integers(0, 10, n).tolist(),
            }
            batches[name] = b
            raw = pickle.dumps(b)
            info = tarfile.TarInfo(f"cifar-10-batches-py/{name}")
            info.size = len(raw)
            tar.addfile(info, io.BytesIO(raw))
    monkeypatch.setattr(cifar, "CIFAR10_MD5", _md5(path))
    train = list(cifar.train10()())
    assert (
        len(train) == 5
        and [t[1] for t in train]
        == batches["data_batch_1"][b"labels"] + batches["data_batch_2"][b"labels"]
    )
    np.testing.assert_allclose(train[0][0], batches["data_batch_1"][b"data"][0] / 255.0, rtol=1e-6)
    assert train[0][0].dtype == np.float32
    assert len(list(cifar.test10()())) == 2


def test_bad_idx_file_is_reported(home, monkeypatch):
    import oar.dataset.mnist as mnist

    d = home / "mnist"
    d.mkdir()
    write_idx_labels(d / "bad.gz", list(range(20)))
    with pytest.raises(RuntimeError, match="not an idx image file"):
        mnist.read_idx_images(str(d / "bad.gz"))


IMDB_DOCS = {
    "aclImdb/train/pos/0_9.txt": b"A great movie! Great acting, great story.\n",
    "aclImdb/train/pos/1_8.txt": b"I loved it. Loved the music; the story was fine.\r\n",
    "aclImdb/train/neg/0_2.txt": b"Terrible movie. The acting was bad, bad, bad.",
    "aclImdb/test/pos/0_10.txt": b"great great fun",
    "aclImdb/test/neg/0_1.txt": b"Bad. <br /><br />Not fun at all... the end",
    "aclImdb/train/unsup/0_0.txt": b"unlabelled text great",
    "aclImdb/README": b"readme great",
}


def test_imdb_from_a_made_tarball(home, monkeypatch):
    """Expected values checked with Fluid 1.8.5's paddle.dataset.imdb on the same archive."""
    import re

    import oar.dataset.imdb as imdb

    path = home / "imdb" / "imdb%2FaclImdb_v1.tar.gz"
    path.parent.mkdir()
    with tarfile.open(path, "w:gz") as tar:
        for name, data in IMDB_DOCS.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    monkeypatch.setattr(imdb, "MD5", _md5(path))
    wd = imdb.build_dict(re.compile(r"aclImdb/((train)|(test))/((pos)|(neg))/.*\.txt$"), 0)
    assert [w for w, _ in sorted(wd.items(), key=lambda x: x[1])][:6] == [
        b"great",
        b"bad",
        b"the",
        b"acting",
        b"br",
        b"fun",
    ]
    assert wd["<unk>"] == len(wd) - 1 == 20 and b"unlabelled" not in wd and b"readme" not in wd
    assert list(imdb.train(wd)()) == [
        ([10, 0, 7, 0, 3, 0, 8], 0),
        ([15, 6, 16, 6, 2, 17, 2, 8, 9, 14], 0),
        ([19, 7, 2, 3, 9, 1, 1, 1], 1),
    ]
    assert list(imdb.test(wd)()) == [([0, 0, 5], 0), ([1, 4, 4, 18, 5, 12, 11, 2, 13], 1)]
    # the real cutoff (150) keeps none of these words: everything maps to <unk>
    small = imdb.word_dict()
    assert small == {"<unk>": 0}
    assert list(imdb.test(small)())[0] == ([0, 0, 0], 0)


def test_uci_housing_through_shuffle_batch_and_datafeeder(home, monkeypatch):
    """The data part of the seed's dist_train.py: uci_housing -> shuffle -> batch -> DataFeeder -> exe.run."""
    import oar
    import oar.dataset.uci_housing as uci
    from oar import fluid

    rng = np.random.default_rng(2)
    path = home / "uci_housing" / "housing.data"
    path.parent.mkdir()
    path.write_text(
        "\n".join(" ".join(f"{v:.3f}" for v in row) for row in rng.uniform(0, 10, (50, 14)))
    )
    monkeypatch.setattr(uci, "MD5", _md5(path))
    train_reader = oar.batch(
        oar.reader.shuffle(oar.dataset.uci_housing.train(), buf_size=500), batch_size=8
    )
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        y = fluid.layers.data(name="y", shape=[1], dtype="float32")
        x = fluid.layers.data(name="x", shape=[13], dtype="float32")
        avg_loss = fluid.layers.mean(
            fluid.layers.square_error_cost(input=fluid.layers.fc(input=x, size=1), label=y)
        )
        fluid.optimizer.SGD(learning_rate=0.001).minimize(avg_loss)
    feeder = fluid.DataFeeder(place=fluid.CPUPlace(), feed_list=[x, y])
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    sizes = []
    for batch_data in train_reader():
        feed = feeder.feed(batch_data)
        assert feed["x"].dtype == np.float32 and feed["y"].shape == (len(batch_data), 1)
        (loss,) = exe.run(main, feed=feed, fetch_list=[avg_loss], scope=scope)
        assert np.isfinite(loss).all()
        sizes.append(len(batch_data))
    assert sizes == [8] * 5  # 40 training rows (80% of 50)

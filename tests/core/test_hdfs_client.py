"""fluid.contrib.HDFSClient / multi_download / multi_upload over a fake ``hadoop`` executable
that maps ``hadoop fs`` commands onto a temporary directory and logs every call."""

from __future__ import annotations

import json
import os
import stat
import sys
import textwrap

import pytest
from oar import fluid
from oar.errors import ArgumentError

C = fluid.contrib

FAKE = textwrap.dedent(
    """\
    #!{python}
    import json, os, shutil, sys, time
    ROOT, LOG = {root!r}, {log!r}
    args = sys.argv[1:]
    with open(LOG, "a") as f:
        f.write(json.dumps(args) + "\\n")
    assert args[0] == "fs"
    args = [a for a in args[1:] if not a.startswith("-D")]
    cmd, rest = args[0], args[1:]
    def p(h):
        return os.path.join(ROOT, h.lstrip("/"))
    def row(path):
        full = p(path)
        d = os.path.isdir(full)
        t = time.strftime("%Y-%m-%d %H:%M", time.gmtime(os.path.getmtime(full)))
        size = 0 if d else os.path.getsize(full)
        return f"{{'d' if d else '-'}}rw-r--r--   3 u g {{size}} {{t}} {{path}}"
    if os.environ.get("FAKE_HADOOP_FAIL") == cmd:
        sys.exit(255)
    if os.environ.get("FAKE_HADOOP_SLEEP") == cmd:
        time.sleep(30)
    if cmd == "-test":
        full = p(rest[1])
        sys.exit(0 if (os.path.isdir(full) if rest[0] == "-d" else os.path.exists(full)) else 1)
    if cmd == "-mkdir":
        os.makedirs(p(rest[-1]), exist_ok=True)
    elif cmd in ("-rm", "-rmr"):
        full = p(rest[0])
        shutil.rmtree(full) if os.path.isdir(full) else os.remove(full)
    elif cmd == "-mv":
        os.rename(p(rest[0]), p(rest[1]))
    elif cmd == "-put":
        shutil.copy(rest[0], p(rest[1]))
    elif cmd == "-get":
        if not os.path.exists(p(rest[0])):
            sys.exit(1)
        shutil.copy(p(rest[0]), rest[1])
    elif cmd == "-ls":
        for n in sorted(os.listdir(p(rest[0]))):
            print(row(rest[0].rstrip("/") + "/" + n))
    elif cmd == "-lsr":
        for top, dirs, files in os.walk(p(rest[0])):
            for n in sorted(dirs + files):
                print(row("/" + os.path.relpath(os.path.join(top, n), ROOT)))
    else:
        sys.exit(2)
    """
)


@pytest.fixture
def hdfs(tmp_path):
    home, root, log = tmp_path / "hadoop", tmp_path / "hdfs", tmp_path / "calls.log"
    (home / "bin").mkdir(parents=True)
    root.mkdir()
    exe = home / "bin" / "hadoop"
    exe.write_text(FAKE.format(python=sys.executable, root=str(root), log=str(log)))
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    client = C.HDFSClient(str(home), {"fs.default.name": "hdfs://nn:9000", "hadoop.job.ugi": "u,p"})
    client.retry_delay_s = 0.0
    return client, root, log, tmp_path


def _calls(log):
    return [json.loads(line) for line in log.read_text().splitlines()]


def test_signatures_match_fluid():
    import inspect

    assert (
        str(inspect.signature(C.HDFSClient)) == "(hadoop_home: 'str', configs: 'Mapping') -> 'None'"
    )
    assert list(inspect.signature(C.multi_download).parameters) == [
        "client", "hdfs_path", "local_path", "trainer_id", "trainers", "multi_processes",
    ]  # fmt: skip
    assert list(inspect.signature(C.multi_upload).parameters) == [
        "client", "hdfs_path", "local_path", "multi_processes", "overwrite", "sync",
    ]  # fmt: skip


def test_client_operations_run_hadoop_fs_with_the_configs(hdfs):
    client, root, log, tmp = hdfs
    src = tmp / "a.txt"
    src.write_text("hello")
    assert not client.is_exist("/data/a.txt")
    assert client.upload("/data/a.txt", str(src))
    assert (root / "data" / "a.txt").read_text() == "hello"
    assert client.is_exist("/data/a.txt") and not client.is_dir("/data/a.txt")
    assert client.is_dir("/data")
    assert not client.upload("/data/a.txt", str(src))  # exists, overwrite=False
    src.write_text("again")
    assert client.upload("/data/a.txt", str(src), overwrite=True)
    assert client.ls("/data") == ["/data/a.txt"]
    assert client.rename("/data/a.txt", "/data/b.txt")
    assert client.lsr("/") == ["/data/b.txt"]
    assert client.lsr("/", only_file=False) == ["/data", "/data/b.txt"]
    out = tmp / "down" / "b.txt"
    assert client.download("/data/b.txt", str(out)) and out.read_text() == "again"
    assert not client.download("/data/b.txt", str(out))  # exists locally
    assert not client.download("/nope", str(tmp / "x"))
    assert client.makedirs("/x/y/z") and (root / "x" / "y" / "z").is_dir()
    assert client.delete("/data") and not (root / "data").exists()
    assert client.delete("/data")  # already gone
    calls = _calls(log)
    assert all(
        c[:3] == ["fs", "-Dfs.default.name=hdfs://nn:9000", "-Dhadoop.job.ugi=u,p"] for c in calls
    )
    assert ["-put", str(src), "/data/a.txt"] in [c[3:] for c in calls]
    assert ["-rmr", "/data"] in [c[3:] for c in calls]


def test_failures_retry_then_report_false(hdfs, monkeypatch):
    client, _root, log, tmp = hdfs
    src = tmp / "a.txt"
    src.write_text("x")
    monkeypatch.setenv("FAKE_HADOOP_FAIL", "-put")
    assert not client.upload("/a.txt", str(src), retry_times=2)
    assert sum(c[3] == "-put" for c in _calls(log)) == 3
    monkeypatch.setenv("FAKE_HADOOP_FAIL", "")
    monkeypatch.setenv("FAKE_HADOOP_SLEEP", "-ls")
    client.timeout_s = 0.5
    assert client._run(["-ls", "/"], retry_times=0)[0] == 124
    missing = C.HDFSClient(str(tmp / "no_hadoop"), {})
    assert missing._run(["-ls", "/"])[0] == 127
    with pytest.raises(ArgumentError, match="configs"):
        C.HDFSClient(str(tmp), ["fs.default.name"])


def test_multi_upload_then_multi_download_split_between_trainers(hdfs):
    client, root, _log, tmp = hdfs
    local = tmp / "local"
    (local / "sub").mkdir(parents=True)
    names = ["f0", "f1", "sub/f2", "sub/f3", "f4"]
    for n in names:
        (local / n).write_text(n)
    assert C.multi_upload(client, "/up", str(local), multi_processes=2) is None
    assert sorted(
        os.path.relpath(os.path.join(t, f), root / "up")
        for t, _d, fs in os.walk(root / "up")
        for f in fs
    ) == sorted(names)
    got = []
    for trainer in range(2):
        paths = C.multi_download(
            client, "/up", str(tmp / f"t{trainer}"), trainer, 2, multi_processes=3
        )
        got.append(paths)
        for path in paths:
            assert open(path).read() == os.path.relpath(path, tmp / f"t{trainer}")
    assert sorted(len(g) for g in got) == [2, 3]
    assert sorted(
        os.path.relpath(p, tmp / f"t{i}") for i, g in enumerate(got) for p in g
    ) == sorted(names)
    with pytest.raises(ArgumentError, match="trainer_id"):
        C.multi_download(client, "/up", str(tmp / "t"), 2, 2)

"""The dataset downloader stages bytes, verifies them before they reach the final name,
sets bad files aside, cleans what a killed download left, and keeps to a deadline."""

import hashlib
import http.server
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest
from oar_data.dataset import common

PAYLOAD = os.urandom(300_000)
MD5 = hashlib.md5(PAYLOAD).hexdigest()


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("OAR_DATA_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("OAR_DATA_OFFLINE", raising=False)
    src = tmp_path / "src.bin"
    src.write_bytes(PAYLOAD)
    return tmp_path / "home", src.as_uri()


def _leftovers(folder):
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def test_download_verifies_and_leaves_no_staging_file(home):
    root, url = home
    path = common.download(url, "demo", MD5)
    assert open(path, "rb").read() == PAYLOAD
    assert _leftovers(root / "demo") == ["src.bin"]


def test_md5_mismatch_never_reaches_the_final_name(home):
    root, url = home
    with pytest.raises(common.DatasetError, match="md5 .* expected 0{32}"):
        common.download(url, "demo", "0" * 32)
    names = _leftovers(root / "demo")
    assert "src.bin" not in names
    assert any(n.endswith(".md5-mismatch") for n in names)
    assert not any(n.endswith(".part") for n in names)


def test_a_corrupted_cached_file_is_set_aside_and_fetched_again(home):
    root, url = home
    (root / "demo").mkdir(parents=True)
    (root / "demo" / "src.bin").write_bytes(b"truncated")
    path = common.download(url, "demo", MD5)
    assert open(path, "rb").read() == PAYLOAD
    assert (root / "demo" / "src.bin.md5-mismatch").read_bytes() == b"truncated"


def test_deadline_bounds_the_whole_download(home, monkeypatch):
    _, url = home
    monkeypatch.setenv("OAR_DATA_DEADLINE", "0")
    with pytest.raises(common.DatasetError, match="deadline"):
        common.download(url, "demo", MD5)


class _Slow(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Length", str(len(PAYLOAD)))
        self.end_headers()
        for i in range(0, len(PAYLOAD), 10_000):
            self.wfile.write(PAYLOAD[i : i + 10_000])
            self.wfile.flush()
            time.sleep(0.05)

    def log_message(self, *args):
        pass


def test_a_killed_download_leaves_no_file_at_the_final_name_and_is_cleaned_next_time(home):
    root, file_url = home
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Slow)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/src.bin"
        script = textwrap.dedent(f"""
            from oar_data.dataset import common
            common.CHUNK = 4096
            common.download({url!r}, "demo", {MD5!r})
        """)
        env = dict(os.environ, OAR_DATA_HOME=str(root))
        child = subprocess.Popen([sys.executable, "-c", script], env=env)
        folder = root / "demo"
        end = time.monotonic() + 20
        while time.monotonic() < end and not any(n.endswith(".part") for n in _leftovers(folder)):
            time.sleep(0.02)
        time.sleep(0.2)
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=10)
    finally:
        server.shutdown()
    names = _leftovers(folder)
    assert "src.bin" not in names
    assert any(n.endswith(".part") for n in names)
    path = common.download(file_url, "demo", MD5)
    assert open(path, "rb").read() == PAYLOAD
    assert _leftovers(folder) == ["src.bin"]

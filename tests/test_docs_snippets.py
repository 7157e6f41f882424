"""Every ```python block of the docs and READMEs runs (so a snippet cannot rot unnoticed).

The blocks of one page run in order in one namespace, like a reader pasting them into one
session. A page can give hidden set-up code (building the `exe`, `main`, `feed` a fragment
uses) in an HTML comment placed right before the block::

    <!-- doc-test setup
    from oar import fluid
    ...
    -->

Set-up code finds the repository (test data, examples) through ``OAR_DOCS_REPO``: the
packages may be installed elsewhere than the checkout. A block that cannot run on one machine (several processes, a GPU) is marked with
``<!-- doc-test: skip (why) -->`` on the line before it; one that needs an optional extra
with ``<!-- doc-test: requires module -->`` (it runs where the module is installed).
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted([*ROOT.glob("docs/*.md"), ROOT / "README.md", *ROOT.glob("packages/*/README.md")])
BLOCK = re.compile(
    r"(?:<!-- doc-test setup\n(?P<setup>.*?)-->\s*\n)?"
    r"(?:<!-- doc-test: skip \((?P<skip>[^)]*)\) -->\s*\n)?"
    r"(?:<!-- doc-test: requires (?P<requires>[\w.]+) -->\s*\n)?"
    r"(?P<indent>[ \t]*)```python\n(?P<code>.*?)(?P=indent)```",
    re.S,
)


def blocks(page: Path) -> list:
    found = []
    for m in BLOCK.finditer(page.read_text()):
        code = textwrap.dedent(m.group("code"))
        setup = textwrap.dedent(m.group("setup") or "")
        skip = m.group("skip")
        needs = m.group("requires")
        if skip is None and needs and importlib.util.find_spec(needs) is None:
            skip = f"needs {needs}"  # an optional extra that is not installed here
        found.append((setup, code, skip))
    return found


def test_the_pattern_finds_every_python_block():
    for page in PAGES:
        assert len(blocks(page)) == page.read_text().count("```python"), page


# a page's test_* functions (a snippet showing how to test a plugin) are called too
CALL_TESTS = """
for _name, _fn in list(globals().items()):
    if _name.startswith("test_") and callable(_fn):
        _fn()
"""


def _runnable(page: Path) -> list:
    return [(s, c) for s, c, skip in blocks(page) if skip is None]


@pytest.mark.parametrize(
    "page", [p for p in PAGES if _runnable(p)], ids=lambda p: str(p.relative_to(ROOT))
)
def test_snippets_run(page, tmp_path):
    script = "\n".join(f"{setup}\n{code}" for setup, code in _runnable(page)) + CALL_TESTS
    path = tmp_path / "snippets.py"
    path.write_text(script)
    env = {k: v for k, v in os.environ.items() if not k.startswith("OAR_DISABLE")}
    env["OAR_DOCS_REPO"] = str(ROOT)  # hidden set-up may read the repository's files from here
    r = subprocess.run(
        [sys.executable, str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env=env,
    )
    assert r.returncode == 0, f"{page.name}:\n{r.stderr[-3000:]}"

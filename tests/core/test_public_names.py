"""Every Fluid 1.8.5 public name resolves in oar, or says why it is not provided.

The names come from tools/data/fluid18_public_names.json (made once with the
Fluid 1.8.5 oracle by tools/fluid18_public_names.py). A name that exists is
fine whether or not the table in ``oar._names`` still lists it (stale entries are
reported by tools/public_names_report.py, not here).
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest
from oar import fluid
from oar._names import INDEX, NOT_PROVIDED, PENDING, why_missing
from oar.errors import MissingPluginError, NotProvidedError

ROOT = Path(__file__).resolve().parents[2]
DATA = json.loads((ROOT / "tools" / "data" / "fluid18_public_names.json").read_text())


def oar_path(path: str) -> str:
    """``paddle.fluid.layers`` -> ``oar.fluid.layers``; ``paddle.dataset`` -> ``oar.dataset``."""
    if path.startswith("paddle.fluid"):
        return "oar.fluid" + path[len("paddle.fluid") :]
    return "oar" + path[len("paddle") :]


def key_of(path: str) -> str:
    """The facade key of a namespace (``"layers"``, ``""`` for fluid, ``"oar.dataset"``)."""
    p = oar_path(path)
    if p.startswith("oar.fluid"):
        return p[len("oar.fluid") :].lstrip(".")
    return p


def join(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


def unresolved(path: str, names: list) -> list:
    """Names of ``path`` that neither resolve nor are listed/explained as not provided."""
    prefix = key_of(path)
    try:
        module = importlib.import_module(oar_path(path))
    except ModuleNotFoundError as e:
        if why_missing(prefix) is not None and "not provided" in str(e):
            return []
        return [f"{path} (module: {e})"]
    bad = []
    for name in names:
        try:
            getattr(module, name)
        except (NotProvidedError, MissingPluginError):
            continue
        except AttributeError as e:
            if why_missing(join(prefix, name)) is None:
                bad.append(f"{path}.{name} ({e})")
    return bad


@pytest.mark.parametrize("path", sorted(DATA["namespaces"]))
def test_every_public_name_resolves_or_says_why(path):
    assert unresolved(path, list(DATA["namespaces"][path])) == []


def test_module_paths_import_as_in_fluid():
    bad = []
    for path, names in sorted(DATA["modules"].items()):
        bad += unresolved(path, names)
    assert bad == []


def test_listed_names_raise_not_provided_with_the_reason(monkeypatch):
    """A listed name raises NotProvidedError (an AttributeError) that gives the reason."""
    assert not hasattr(fluid, "ComplexVariable")
    with pytest.raises(NotProvidedError, match="complex"):
        fluid.ComplexVariable  # noqa: B018
    monkeypatch.setitem(INDEX, "layers.zz_listed", "not provided yet: issue 99 (testing)")
    monkeypatch.setitem(INDEX, "zz_listed_module", "not provided yet: issue 98 (testing)")
    with pytest.raises(
        NotProvidedError, match=r"fluid\.layers\.zz_listed is not provided yet: issue 99"
    ):
        fluid.layers.zz_listed  # noqa: B018
    with pytest.raises(ModuleNotFoundError, match="issue 98"):
        importlib.import_module("oar.fluid.zz_listed_module")


def test_unknown_names_get_a_hint():
    with pytest.raises(AttributeError, match="did you mean 'fc'"):
        fluid.layers.fcc  # noqa: B018
    with pytest.raises(AttributeError, match=r"fluid\.dygraph\.Linear exists"):
        fluid.layers.Linear  # noqa: B018
    with pytest.raises(AttributeError) as info:
        fluid.no_such_name_at_all  # noqa: B018
    assert not isinstance(info.value, NotProvidedError)


def test_thin_module_paths_reexport():
    import oar.fluid.layers.nn as nn
    import oar.fluid.layers.tensor as tensor

    assert nn.fc is fluid.layers.fc
    assert tensor.argmax is fluid.layers.argmax
    assert fluid.executor.global_scope is fluid.global_scope
    assert fluid.framework.cpu_places is fluid.cpu_places


def test_deliberately_not_provided_is_a_small_share():
    total = sum(len(v) for v in DATA["namespaces"].values())
    assert len(NOT_PROVIDED) / total <= 0.03, (len(NOT_PROVIDED), total)


def test_the_docs_table_lists_every_entry():
    text = (ROOT / "docs" / "public-names.md").read_text()
    keys = [k for keys in PENDING.values() for k in keys] + list(NOT_PROVIDED)
    assert [k for k in keys if f"`{k}`" not in text] == []

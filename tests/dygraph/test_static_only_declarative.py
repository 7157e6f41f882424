"""``fluid.dygraph.nn.RowConv`` / ``SequenceConv`` under ``@declarative`` (dygraph-to-static),
against Fluid 1.8.5 facts (data/fluid18_static_only_declarative.py, run on both).

Fluid 1.8.5 refuses to build them in dygraph mode, so a dygraph-to-static Layer holding one
cannot be built there either; oar refuses the same way. Built under ``program_guard``, Fluid
1.8.5's declarative forward fails inside its converter ("No Input(X) found for row_conv
operator"), while oar's appends the same ops as the plain forward and gives Fluid's plain
output: a deliberate difference (a Fluid bug, not a behaviour to copy)."""

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
from oar import fluid
from oar.errors import OarError

DATA = Path(__file__).parent / "data"
GOLDEN = json.loads((DATA / "fluid18_static_only_declarative.json").read_text())
_spec = importlib.util.spec_from_file_location(
    "fluid18_static_only_declarative", DATA / "fluid18_static_only_declarative.py"
)
probe_module = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(probe_module)


@pytest.fixture(scope="module")
def oar_facts():
    return probe_module.probe()


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_declarative_static_only_layers_match_fluid18(name, oar_facts):
    want, got = GOLDEN[name], oar_facts[name]
    assert got["refused_in_dygraph"] is want["refused_in_dygraph"] is True
    assert got["plain"]["ops"] == want["plain"]["ops"]
    np.testing.assert_allclose(got["plain"]["out"], want["plain"]["out"], rtol=1e-5, atol=1e-5)
    # Fluid 1.8.5's converter loses the input; oar runs the forward as written
    assert want["declarative"]["error"] == "EnforceNotMet"
    assert "No Input(X)" in want["declarative"]["message"]
    assert got["declarative"]["ops"] == want["plain"]["ops"]
    np.testing.assert_allclose(
        got["declarative"]["out"], want["plain"]["out"], rtol=1e-5, atol=1e-5
    )


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_building_the_declarative_layer_in_dygraph_mode_names_the_layer(name):
    with fluid.dygraph.guard(), pytest.raises(OarError, match=f"{name}.*dygraph mode"):
        probe_module.NETS[name]()

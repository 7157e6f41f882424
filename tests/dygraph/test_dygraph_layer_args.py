"""Every dygraph layer class built with Fluid 1.8.5's documented arguments (and some variants
and some bad ones), then called once: oar accepts what Fluid 1.8.5 accepts, with the same
parameters (structured name and shape) and output shape, and refuses what it refuses with
oar's own error. The facts come from data/fluid18_dygraph_layer_args.py run on Fluid 1.8.5;
the same ``probe`` runs here on oar."""

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
from oar import fluid
from oar.errors import OarError

DATA = Path(__file__).parent / "data"
GOLDEN = json.loads((DATA / "fluid18_dygraph_layer_args.json").read_text())
STATIC_ONLY = GOLDEN.pop("static_only")
_spec = importlib.util.spec_from_file_location(
    "fluid18_dygraph_layer_args", DATA / "fluid18_dygraph_layer_args.py"
)
probe_module = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(probe_module)

# Fluid 1.8.5 accepts these, oar refuses them with a clear error (deliberate differences).
REFUSED_BY_OAR_ONLY: set[str] = set()
# Fluid 1.8.5's dygraph GroupNorm refuses NHWC ("unsupported data layout"), though its static
# group_norm takes it; oar's dygraph GroupNorm takes it too.
ACCEPTED_BY_OAR_ONLY = {"GroupNorm_NHWC"}


def _accepted(fact):
    return fact["built"] and fact.get("out_shape", ()) is not None


@pytest.fixture(scope="module")
def oar_facts():
    return probe_module.probe(fluid)


def test_the_probe_covers_every_dygraph_layer_class():
    built = {name.split("_")[0] for name in GOLDEN if _accepted(GOLDEN[name])}
    layers = {
        n
        for n in dir(fluid.dygraph)
        if isinstance(getattr(fluid.dygraph, n), type)
        and issubclass(getattr(fluid.dygraph, n), fluid.dygraph.Layer)
    }
    # DataParallel (oar-dist) wraps a layer: tested with the collective training;
    # StaticModelRunner loads a saved model: tests/dygraph/test_static_runner.py
    containers = {"Layer", "LayerList", "ParameterList", "Sequential", "DataParallel"}
    containers |= {"StaticModelRunner"}
    assert layers - containers <= built


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_layer_arguments_match_fluid18(name, oar_facts):
    want, got = GOLDEN[name], oar_facts[name]
    if name in REFUSED_BY_OAR_ONLY:
        assert _accepted(want) and not _accepted(got)
    elif name in ACCEPTED_BY_OAR_ONLY:
        assert not _accepted(want) and _accepted(got)
    elif _accepted(want):
        want = {k: v for k, v in want.items() if k != "error"}
        assert got == want
    else:
        # Fluid refuses (at construction or at the first call); oar may refuse earlier
        assert not _accepted(got), got
    if not _accepted(got):
        make, inputs = probe_module.cases(fluid)[name]
        with fluid.dygraph.guard(), pytest.raises((OarError, TypeError)):
            make()(*[fluid.dygraph.to_variable(a) for a in inputs])


def test_nce_defaults_draw_ten_negatives_with_replacement_and_no_bias():
    x = np.linspace(-1, 1, 12).reshape(3, 4).astype("float32")
    lab = np.array([[1], [2], [3]], "int64")
    with fluid.dygraph.guard():
        nce = fluid.dygraph.NCE(10, 4)
        assert nce.bias is None and [p.shape for p in nce.parameters()] == [[10, 4]]
        few = fluid.dygraph.NCE(3, 4, num_neg_samples=20, bias_attr=True)
        cost = fluid.layers.reduce_sum(
            few(fluid.dygraph.to_variable(x), fluid.dygraph.to_variable(lab % 3))
        )
        cost.backward()
        assert np.isfinite(cost.numpy()).all() and few.bias.gradient().shape == (3, 1)
        zero = fluid.dygraph.NCE(10, 4, num_neg_samples=0)
        np.testing.assert_array_equal(
            zero(fluid.dygraph.to_variable(x), fluid.dygraph.to_variable(lab)).numpy(),
            np.zeros((3, 1)),
        )
        with pytest.raises(OarError, match="num_neg_samples"):
            fluid.dygraph.NCE(10, 4, num_neg_samples=-1)


def test_static_only_layers_are_refused_in_dygraph_and_work_in_a_program():
    got = probe_module.static_probe(fluid)
    assert sorted(got) == sorted(STATIC_ONLY)
    for name, want in STATIC_ONLY.items():
        have = got[name]
        np.testing.assert_allclose(have.pop("out"), want["out"], rtol=1e-5, atol=1e-5, err_msg=name)
        assert have == {k: v for k, v in want.items() if k != "out"}, name
    assert not hasattr(fluid.dygraph, "RowConv")  # fluid.dygraph.nn only, as in Fluid 1.8.5
    with fluid.dygraph.guard(), pytest.raises(OarError, match="RowConv.*dygraph mode"):
        fluid.dygraph.nn.RowConv("rc", 2)

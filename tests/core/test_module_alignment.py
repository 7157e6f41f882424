"""An op family has one name in every tree: ops/, the CPU kernels, layers/ and the tests.

So an op's definition, kernel, layer and test are found from its family's name in seconds.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OPS = ROOT / "packages/core/src/oar/ops"
KERNELS = ROOT / "packages/kernels-cpu/src/oar_kernels_cpu/kernels"
LAYERS = ROOT / "packages/core/src/oar/layers"
KERNEL_TESTS = ROOT / "tests/kernels_cpu"

# layer modules that build on several op families (or none) and so have no family name
LAYER_ONLY = {
    "fc": "fc appends mul + elementwise_add + activation ops",
    "io": "data layers declare feed variables; no op",
    "tensor": "create_tensor / fill_constant / assign ... span the creation and math families",
    "learning_rate_scheduler": "schedules compose arithmetic ops on the step counter",
    "control_flow_ifelse": "IfElse builds conditional blocks around split/merge_lod_tensor",
    "control_flow_rnn": "StaticRNN builds a While loop (gather, tensor arrays) over its step block",
    "clip_ops": "clip / clip_by_norm: a submodule named `clip` would shadow fluid.layers.clip",
    "rnn": "the 1.8 cell API (RNNCell, GRUCell, LSTMCell, rnn) composes existing ops",
    "rnn_decode": "Decoder, BeamSearchDecoder, dynamic_decode compose existing ops",
    "rnn_helpers": "decoding helpers and BasicDecoder compose existing ops",
    "rnn_padded": "fluid.layers.lstm (Fluid's cudnn_lstm) composes existing ops",
    "distributions": "fluid.layers.distributions: Normal, Uniform... compose existing ops",
}


def _modules(folder: Path) -> set:
    return {p.stem for p in folder.glob("*.py") if not p.stem.startswith("_")}


def test_every_op_family_has_a_cpu_kernel_module_of_the_same_name():
    assert _modules(OPS) == _modules(KERNELS)


def test_every_layer_module_is_named_after_an_op_family():
    strays = _modules(LAYERS) - _modules(OPS) - set(LAYER_ONLY)
    assert not strays, f"layer modules without an op family of that name: {sorted(strays)}"
    assert set(LAYER_ONLY) <= _modules(LAYERS), "LAYER_ONLY names a module that is gone"


def test_every_op_family_has_kernel_tests_of_its_name():
    tests = {p.stem for p in KERNEL_TESTS.glob("test_*.py")}
    missing = [
        f
        for f in sorted(_modules(OPS))
        if not any(t == f"test_{f}" or t.startswith(f"test_{f}_") for t in tests)
    ]
    assert not missing, f"op families without tests/kernels_cpu/test_<family>.py: {missing}"

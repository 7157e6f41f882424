"""Every registered op is exercised by some op test, and every differentiable one is gradient-checked.

The test modules of this directory each list their cases in ``CASES``; this
module collects them all, so a new op family only needs its own
``test_<family>.py`` with a ``CASES`` list to be counted.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from oar.plugins import registries
from oar.testing import OpCase

HERE = Path(__file__).parent


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(f"_oar_op_coverage_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def collect_cases() -> list:
    cases = []
    for path in sorted(HERE.glob("test_*.py")):
        if path.name == Path(__file__).name:
            continue
        cases.extend(c for c in getattr(_load(path), "CASES", ()) if isinstance(c, OpCase))
    return cases


@pytest.fixture(scope="module")
def cases():
    return collect_cases()


def _installed_plugins() -> set:
    """Plugins that came from an installed distribution (not ones tests registered by hand)."""
    from oar.plugins import plugin_infos

    return {
        p.name for p in plugin_infos() if p.distribution != "(registered by hand)" and not p.error
    }


# ops whose inputs are sub-blocks, tensor arrays or SelectedRows, which an OpCase cannot express:
# they are checked (forward and numeric gradients) by whole programs or kernel calls in the named
# test module
PROGRAM_TESTED = {
    "while": "test_control_flow.py",
    "conditional_block": "test_control_flow.py",
    "write_to_array": "test_tensor_array.py",
    "read_from_array": "test_tensor_array.py",
    "lod_array_length": "test_tensor_array.py",
    "tensor_array_to_tensor": "test_tensor_array.py",
    "lod_rank_table": "test_lod_rank.py",
    "max_sequence_len": "test_lod_rank.py",
    "lod_tensor_to_array": "test_lod_rank.py",
    "array_to_lod_tensor": "test_lod_rank.py",
    "shrink_rnn_memory": "test_lod_rank.py",
    "reorder_lod_tensor_by_rank": "test_lod_rank.py",
    "split_selected_rows": "test_pserver_tables.py",
    "shard_selected_rows": "test_pserver_tables.py",
    "scale_selected_rows": "test_pserver_tables.py",
    "table_shard_zeros": "test_pserver_tables.py",
}
# oar-dist's: absent without that plugin
OPTIONAL = {
    "split_selected_rows",
    "shard_selected_rows",
    "scale_selected_rows",
    "table_shard_zeros",
}


def _forward_ops() -> dict:
    ops = registries().ops
    installed = _installed_plugins()
    return {
        t: ops.get(t)
        for t in ops.types()
        if not t.endswith("_grad") and ops.owner(t) in installed and t not in PROGRAM_TESTED
    }


def test_program_tested_ops_have_their_tests():
    for op_type, module in PROGRAM_TESTED.items():
        assert op_type in registries().ops or op_type in OPTIONAL, op_type
        assert (HERE / module).exists(), module


def _is_generated_grad(op_type: str) -> bool:
    """``x_grad`` ops registered from a GradSpec: checked through their forward op's gradient check."""
    opdef = registries().ops.get(op_type)
    return op_type.endswith("_grad") and opdef.doc.startswith("gradient of ")


def test_cases_were_found(cases):
    assert len(cases) > 50, "expected the CASES of every tests/kernels_cpu/test_*.py module"


def test_every_op_has_a_case(cases):
    covered = {c.op_type for c in cases}
    missing = sorted(t for t in _forward_ops() if t not in covered)
    assert not missing, (
        "ops registered without any OpCase in tests/kernels_cpu/test_<family>.py CASES: "
        + ", ".join(f"'{t}' (defined by {registries().ops.owner(t)})" for t in missing)
    )


def test_every_differentiable_op_has_a_gradient_check(cases):
    checked = {c.op_type for c in cases if c.grad}
    missing = sorted(
        t for t, d in _forward_ops().items() if d.grad is not None and t not in checked
    )
    assert not missing, (
        "ops with a grad maker but no OpCase with grad=[...] (numeric gradient check): "
        + ", ".join(f"'{t}'" for t in missing)
    )


def test_grad_ops_are_reachable_from_a_forward_op():
    """A hand-registered ``*_grad`` op (not made from a GradSpec) must belong to a forward op."""
    ops = registries().ops
    orphans = [
        t
        for t in ops.types()
        if t.endswith("_grad") and not _is_generated_grad(t) and t[: -len("_grad")] not in ops
    ]
    assert not orphans, f"grad ops whose forward op is not registered: {orphans}"


def test_every_case_names_a_registered_op(cases):
    unknown = sorted({c.op_type for c in cases} - set(registries().ops.types()))
    assert not unknown, f"OpCases name op types no plugin registers: {unknown}"


def test_grad_slots_exist(cases):
    bad = []
    for c in cases:
        opdef = registries().ops.get(c.op_type)
        for slot in c.grad:
            if slot not in opdef.input_names or slot not in c.inputs:
                bad.append(f"{c}: grad slot '{slot}'")
    assert not bad, "OpCase.grad names slots the op or the case lacks: " + "; ".join(bad)

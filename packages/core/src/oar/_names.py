"""Fluid 1.8 public names that oar does not provide (yet), and why: the one table.

Keys are facade keys as in ``oar._facade.OWNERS``: relative to ``oar.fluid``
(``"layers.While"``, ``"contrib.HDFSClient"``) or ``"oar."``-prefixed for the
``paddle.*`` namespaces (``"oar.dataset.wmt16"``).  A key may name a whole
namespace (``"metrics"``): every name below it is covered.

``PENDING`` groups names by the feature whose work will add them; once a name
exists, its entry is stale but harmless (``python tools/public_names_report.py``
lists stale entries).  ``NOT_PROVIDED`` holds names left out on purpose, each
with its reason.  Touching a listed name raises ``NotProvidedError`` (an
``AttributeError``) that says which.  docs/public-names.md is generated from
this module (``python tools/public_names_report.py --write-docs``).
"""

from __future__ import annotations

PENDING: dict[str, list[str]] = {}

NOT_PROVIDED: dict[str, str] = {
    "ComplexVariable": "Fluid 1.8's complex-number preview (paddle.complex) is out of scope; "
    "no op of oar takes complex tensors",
    "framework.ComplexVariable": "see fluid.ComplexVariable: complex tensors are out of scope",
    "contrib.Compressor": "the PaddleSlim compression framework (contrib.slim) is out of scope; "
    "use the standalone PaddleSlim project's ideas on top of oar programs",
    "contrib.QuantizeTranspiler": "quantization-aware training transpiles to int8 kernels that "
    "oar's CPU plugin does not have",
    "contrib.convert_dist_to_sparse_program": "rewrites pslib (Baidu-internal parameter server) "
    "lookup tables; oar's parameter server is the transpiler's",
    "contrib.search_pyramid_hash": "contrib op tied to Baidu's search white/black lists; "
    "not provided",
    "contrib.rank_attention": "contrib op for Baidu's ranking models (GPU-only in Fluid 1.8.5)",
}


def _index() -> dict[str, str]:
    out = {}
    for reason, keys in PENDING.items():
        for key in keys:
            out[key] = f"not provided yet: {reason}"
    for key, why in NOT_PROVIDED.items():
        out[key] = f"not provided: {why}"
    return out


INDEX = _index()


def why_missing(key: str) -> str | None:
    """The table's reason for ``key`` (or for a namespace above it), or None."""
    parts = key.split(".")
    for i in range(len(parts), 0, -1):
        reason = INDEX.get(".".join(parts[:i]))
        if reason is not None:
            return reason
    return None

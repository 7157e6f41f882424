"""List Fluid 1.8.5's public names per namespace, and its module paths (run with the oracle).

    $FLUID18_PYTHON tools/fluid18_public_names.py > tools/data/fluid18_public_names.json

Runs under Fluid 1.8.5's own interpreter (Python 3.7), imports each namespace and
records, for every name in its ``__all__`` (or in a curated list where the
namespace has none, e.g. ``fluid.core``), what kind of object it is and, for
callables, the parameter names and default reprs.  The output is checked in;
tests/core/test_public_names.py reads it and never needs the oracle.
``python tools/public_names_report.py`` compares it with oar.
"""

import importlib
import inspect
import json
import sys

# namespaces whose ``__all__`` is the public list
NAMESPACES = [
    "paddle.fluid",
    "paddle.fluid.layers",
    "paddle.fluid.dygraph",
    "paddle.fluid.io",
    "paddle.fluid.optimizer",
    "paddle.fluid.initializer",
    "paddle.fluid.regularizer",
    "paddle.fluid.clip",
    "paddle.fluid.contrib",
    "paddle.fluid.contrib.mixed_precision",
    "paddle.fluid.metrics",
    "paddle.fluid.nets",
    "paddle.fluid.unique_name",
    "paddle.fluid.profiler",
    "paddle.fluid.transpiler",
    "paddle.fluid.backward",
    "paddle.fluid.executor",
    "paddle.fluid.framework",
    "paddle.fluid.data_feeder",
    "paddle.fluid.lod_tensor",
    "paddle.fluid.param_attr",
    "paddle.fluid.compiler",
    "paddle.fluid.dataset",
    "paddle.fluid.average",
    "paddle.fluid.evaluator",
    "paddle.fluid.install_check",
    "paddle.fluid.dygraph.base",
    "paddle.dataset",
    "paddle.reader",
]

# namespaces without ``__all__``: the names 1.8 programs touch
CURATED = {
    "paddle": ["batch", "reader", "dataset", "compat", "fluid", "distributed"],
    "paddle.fluid.core": [
        "LoDTensor",
        "LoDTensorArray",
        "SelectedRows",
        "Scope",
        "Place",
        "CPUPlace",
        "CUDAPlace",
        "CUDAPinnedPlace",
        "VarBase",
        "VarDesc",
        "EnforceNotMet",
        "EOFException",
        "globals",
        "op_support_gpu",
        "is_compiled_with_cuda",
        "get_cuda_device_count",
    ],
    "paddle.fluid.incubate.data_generator": [
        "MultiSlotDataGenerator",
        "MultiSlotStringDataGenerator",
    ],
    "paddle.fluid.contrib.model_stat": ["summary"],
    "paddle.compat": ["to_text", "to_bytes", "round", "floor_division", "get_exception_message"],
}

# module paths a 1.8 program imports (``import paddle.fluid.layers.nn as nn``)
MODULES = [
    "paddle.compat",
    "paddle.dataset",
    "paddle.dataset.cifar",
    "paddle.dataset.common",
    "paddle.dataset.conll05",
    "paddle.dataset.flowers",
    "paddle.dataset.image",
    "paddle.dataset.imdb",
    "paddle.dataset.imikolov",
    "paddle.dataset.mnist",
    "paddle.dataset.movielens",
    "paddle.dataset.mq2007",
    "paddle.dataset.sentiment",
    "paddle.dataset.uci_housing",
    "paddle.dataset.voc2012",
    "paddle.dataset.wmt14",
    "paddle.dataset.wmt16",
    "paddle.reader",
    "paddle.reader.decorator",
    "paddle.fluid",
    "paddle.fluid.average",
    "paddle.fluid.backward",
    "paddle.fluid.clip",
    "paddle.fluid.compiler",
    "paddle.fluid.contrib",
    "paddle.fluid.contrib.memory_usage_calc",
    "paddle.fluid.contrib.mixed_precision",
    "paddle.fluid.contrib.model_stat",
    "paddle.fluid.contrib.op_frequence",
    "paddle.fluid.contrib.reader",
    "paddle.fluid.core",
    "paddle.fluid.data_feeder",
    "paddle.fluid.dataset",
    "paddle.fluid.dygraph",
    "paddle.fluid.dygraph.base",
    "paddle.fluid.dygraph.checkpoint",
    "paddle.fluid.dygraph.container",
    "paddle.fluid.dygraph.jit",
    "paddle.fluid.dygraph.layers",
    "paddle.fluid.dygraph.learning_rate_scheduler",
    "paddle.fluid.dygraph.nn",
    "paddle.fluid.dygraph.parallel",
    "paddle.fluid.evaluator",
    "paddle.fluid.executor",
    "paddle.fluid.framework",
    "paddle.fluid.incubate",
    "paddle.fluid.incubate.data_generator",
    "paddle.fluid.incubate.fleet",
    "paddle.fluid.incubate.fleet.base",
    "paddle.fluid.incubate.fleet.base.role_maker",
    "paddle.fluid.incubate.fleet.collective",
    "paddle.fluid.incubate.fleet.parameter_server",
    "paddle.fluid.incubate.fleet.parameter_server.distribute_transpiler",
    "paddle.fluid.initializer",
    "paddle.fluid.install_check",
    "paddle.fluid.io",
    "paddle.fluid.layer_helper",
    "paddle.fluid.layers",
    "paddle.fluid.layers.control_flow",
    "paddle.fluid.layers.detection",
    "paddle.fluid.layers.distributions",
    "paddle.fluid.layers.io",
    "paddle.fluid.layers.learning_rate_scheduler",
    "paddle.fluid.layers.loss",
    "paddle.fluid.layers.metric_op",
    "paddle.fluid.layers.nn",
    "paddle.fluid.layers.ops",
    "paddle.fluid.layers.rnn",
    "paddle.fluid.layers.sequence_lod",
    "paddle.fluid.layers.tensor",
    "paddle.fluid.lod_tensor",
    "paddle.fluid.metrics",
    "paddle.fluid.nets",
    "paddle.fluid.optimizer",
    "paddle.fluid.param_attr",
    "paddle.fluid.profiler",
    "paddle.fluid.reader",
    "paddle.fluid.regularizer",
    "paddle.fluid.transpiler",
    "paddle.fluid.unique_name",
]


def kind(obj):
    if inspect.ismodule(obj):
        return "module"
    if inspect.isclass(obj):
        return "class"
    if callable(obj):
        return "function"
    return "other"


def params(obj):
    target = obj.__init__ if inspect.isclass(obj) else obj
    try:
        sig = inspect.signature(target)
    except (TypeError, ValueError):
        return None
    out = []
    for p in sig.parameters.values():
        if p.name == "self" and inspect.isclass(obj):
            continue
        default = None if p.default is inspect.Parameter.empty else repr(p.default)
        out.append([p.name, str(p.kind), default])
    return out


def describe(mod, names):
    entries = {}
    for name in sorted(set(names)):
        if not hasattr(mod, name):
            continue  # listed in __all__ but absent in 1.8.5 itself
        obj = getattr(mod, name)
        entry = {"kind": kind(obj)}
        if entry["kind"] in ("class", "function"):
            entry["params"] = params(obj)
        entries[name] = entry
    return entries


def main():
    import paddle

    namespaces = {}
    for path in NAMESPACES:
        mod = importlib.import_module(path)
        namespaces[path] = describe(mod, list(mod.__all__))
    for path, names in CURATED.items():
        namespaces[path] = describe(importlib.import_module(path), names)
    modules = {}
    for path in MODULES:
        mod = importlib.import_module(path)
        modules[path] = sorted(n for n in getattr(mod, "__all__", []) or [] if hasattr(mod, n))
    json.dump(
        {
            "generator": "tools/fluid18_public_names.py",
            "paddle_version": paddle.__version__,
            "namespaces": namespaces,
            "modules": modules,
        },
        sys.stdout,
        indent=1,
        sort_keys=True,
    )
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()

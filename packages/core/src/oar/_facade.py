"""Names that plugins contribute to the public facade, and the error when one is missing.

Core knows which distribution owns each plugin-provided name, so touching
``fluid.io.PyReader`` without ``oar-data`` says exactly what to install.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import types
from typing import Any

from oar.errors import MissingPluginError

# dotted name (relative to oar.fluid, or "oar."-prefixed) -> distribution that provides it.
# Core needs this table for plugins that are NOT installed (to name the pip command);
# tests/core/test_plugins.py::test_facade_owner_table_matches_what_plugins_contribute checks
# it entry for entry against the oar_fluid_api hooks of the installed plugins.
OWNERS = {
    "DataFeeder": "oar-data",
    "contrib.reader": "oar-data",
    "contrib.distributed_batch_reader": "oar-data",
    "oar.reader.decorator": "oar-data",
    "io.ComposeNotAligned": "oar-data",
    "io.DataLoader": "oar-data",
    "io.Dataset": "oar-data",
    "io.BatchSampler": "oar-data",
    "io.default_collate_fn": "oar-data",
    "DatasetFactory": "oar-data",
    "DataFeedDesc": "oar-data",
    "dataset": "oar-data",
    "incubate.data_generator": "oar-data",
    "io.PyReader": "oar-data",
    "io.batch": "oar-data",
    "io.buffered": "oar-data",
    "io.cache": "oar-data",
    "io.chain": "oar-data",
    "io.compose": "oar-data",
    "io.firstn": "oar-data",
    "io.map_readers": "oar-data",
    "io.multiprocess_reader": "oar-data",
    "io.shuffle": "oar-data",
    "io.xmap_readers": "oar-data",
    "oar.batch": "oar-data",
    "oar.dataset": "oar-data",
    "oar.reader": "oar-data",
    "reader": "oar-data",
    "DistributeTranspiler": "oar-dist",
    "DistributeTranspilerConfig": "oar-dist",
    "dygraph.DataParallel": "oar-dist",
    "dygraph.ParallelEnv": "oar-dist",
    "dygraph.parallel": "oar-dist",
    "dygraph.prepare_context": "oar-dist",
    "incubate": "oar-dist",
    "contrib.load_persistables_for_increment": "oar-dist",
    "contrib.load_persistables_for_inference": "oar-dist",
    "oar.distributed.launch": "oar-dist",
    "transpiler": "oar-dist",
    "dygraph.load_dygraph": "oar-io",
    "dygraph.save_dygraph": "oar-io",
    "io.get_program_parameter": "oar-io",
    "io.get_program_persistable_vars": "oar-io",
    "io.is_parameter": "oar-io",
    "io.is_persistable": "oar-io",
    "io.load": "oar-io",
    "io.load_inference_model": "oar-io",
    "io.load_params": "oar-io",
    "io.load_persistables": "oar-io",
    "io.load_program_state": "oar-io",
    "io.load_vars": "oar-io",
    "io.save": "oar-io",
    "io.save_inference_model": "oar-io",
    "io.save_params": "oar-io",
    "io.save_persistables": "oar-io",
    "io.save_vars": "oar-io",
    "io.set_program_state": "oar-io",
    "load": "oar-io",
    "load_dygraph": "oar-io",
    "load_program_state": "oar-io",
    "save": "oar-io",
    "save_dygraph": "oar-io",
    "set_program_state": "oar-io",
    "core.AnalysisConfig": "oar-deploy",
    "core.AnalysisPredictor": "oar-deploy",
    "core.PaddleBuf": "oar-deploy",
    "core.PaddleDType": "oar-deploy",
    "core.PaddleTensor": "oar-deploy",
    "core.ZeroCopyTensor": "oar-deploy",
    "core.create_paddle_predictor": "oar-deploy",
    "oar.onnx": "oar-deploy",
}


def lookup(key: str) -> Any:
    """The object a plugin contributed under ``key``; raises if none did."""
    from oar.plugins import registries

    api = registries().fluid_api
    if key in api:
        return api[key]
    owner = OWNERS.get(key)
    if owner is None:
        prefix = key.split(".")[0]
        owner = OWNERS.get(prefix)
    if owner is not None:
        public = key[4:] if key.startswith("oar.") else f"fluid.{key}"
        raise MissingPluginError(
            f"{public} is provided by the {owner} plugin, which is not installed: pip install {owner}"
        )
    raise AttributeError(key)


# Fluid 1.8 module paths with no module of that name in oar: a thin module that
# re-exports the namespace holding those names (``import paddle.fluid.layers.nn as nn``)
MODULE_ALIASES = {
    **{
        f"oar.fluid.layers.{_sub}": "oar.layers"
        for _sub in (
            "nn",
            "control_flow",
            "sequence_lod",
            "rnn",
            "detection",
            "metric_op",
            "loss",
            "ops",
            "distributions",
        )
    },
    "oar.fluid.dygraph.checkpoint": "oar.fluid.dygraph",
}


def public_name(key: str) -> str:
    """``"layers.fc"`` -> ``"fluid.layers.fc"``; ``"oar.dataset.x"`` stays."""
    return key if key.startswith("oar.") else f"fluid.{key}" if key else "fluid"


def _namespace_module(prefix: str) -> str:
    if prefix.startswith("oar."):
        return prefix.rstrip(".")
    return f"oar.fluid.{prefix.rstrip('.')}" if prefix else "oar.fluid"


def missing_name_error(prefix: str, name: str) -> AttributeError:
    """The error for ``<namespace>.<name>`` that does not exist: why, or what was probably meant."""
    from oar._names import why_missing
    from oar.errors import NotProvidedError

    key = prefix + name
    where = public_name(key)
    reason = why_missing(key)
    if reason is not None:
        return NotProvidedError(f"{where} is {reason} (see docs/public-names.md)")
    modname = _namespace_module(prefix)
    message = f"module '{public_name(prefix.rstrip('.'))}' has no attribute '{name}'"
    hints = []
    module = sys.modules.get(modname)
    if module is not None:
        import difflib

        names = [n for n in dir(module) if not n.startswith("_")]
        close = difflib.get_close_matches(name, names, n=3, cutoff=0.75)
        if close:
            hints.append("did you mean " + " or ".join(f"'{c}'" for c in close) + "?")
    for other in ("oar.fluid", "oar.fluid.layers", "oar.fluid.dygraph", "oar.fluid.io", "oar"):
        mod = sys.modules.get(other)
        if other != modname and mod is not None and name in getattr(mod, "__dict__", {}):
            hints.append(f"{other.replace('oar.fluid', 'fluid')}.{name} exists")
    if hints:
        message += f" ({'; '.join(hints)})"
    return AttributeError(message)


def module_getattr(prefix: str):
    """A module ``__getattr__`` that looks names up under ``prefix`` (e.g. ``"io."``).

    Order: what a plugin contributed (``MissingPluginError`` naming the pip command
    when its plugin is absent), then Fluid module paths (``fluid.layers.nn``), then
    an error that says why a Fluid name is not provided or what was probably meant.
    """

    from oar._names import why_missing

    def __getattr__(name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        try:
            return lookup(prefix + name)
        except AttributeError:
            pass
        path = f"{_namespace_module(prefix)}.{name}"
        if path in MODULE_ALIASES and why_missing(prefix + name) is None:
            return importlib.import_module(path)
        raise missing_name_error(prefix, name) from None

    return __getattr__


def module_dir(prefix: str, module: str, extra: Any = ()):
    """A module ``__dir__`` listing the module's own names, ``extra`` (names its
    ``__getattr__`` makes on demand) and what plugins contributed directly under ``prefix``
    (``dir(fluid.dygraph)`` shows oar-dist's ``DataParallel``)."""

    def __dir__() -> list:
        from oar.plugins import registries

        names = set(vars(sys.modules[module])) | set(extra)
        for key in registries().fluid_api:
            rest = key[len(prefix) :] if key.startswith(prefix) else None
            if rest and "." not in rest:
                names.add(rest)
        return sorted(names)

    return __dir__


def forward_getattr(module: types.ModuleType, parent: types.ModuleType) -> None:
    """Names a Fluid module path had (``fluid.layers.tensor.argmax``) that oar keeps in the parent.

    The module's own missing names are looked up on ``parent``, whose
    ``__getattr__`` says why a name is not provided.
    """
    if "__getattr__" in vars(module):
        return

    def __getattr__(name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(parent, name)

    setattr(module, "__getattr__", __getattr__)  # noqa: B010


class _ThinModule(types.ModuleType):
    """A Fluid module path that re-exports an oar namespace (attribute reads go to it)."""

    def __init__(self, name: str, target: types.ModuleType) -> None:
        super().__init__(name, target.__doc__)
        self.__dict__["_target"] = target
        self.__all__ = list(getattr(target, "__all__", []))

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.__dict__["_target"], name)

    def __dir__(self) -> list:
        return sorted(set(super().__dir__()) | set(dir(self.__dict__["_target"])))


class _ThinLoader(importlib.abc.Loader):
    def __init__(self, target: str) -> None:
        self.target = target

    def create_module(self, spec):
        return _ThinModule(spec.name, importlib.import_module(self.target))

    def exec_module(self, module):
        return None


class _AliasFinder(importlib.abc.MetaPathFinder):
    """Makes ``import oar.dataset.mnist`` import the module a plugin contributed as ``oar.dataset``."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None):
        parts = fullname.split(".")
        if parts[0] != "oar" or len(parts) < 2:
            return None
        if fullname in MODULE_ALIASES:
            return importlib.util.spec_from_loader(fullname, _ThinLoader(MODULE_ALIASES[fullname]))
        for i in range(len(parts), 1, -1):
            key = ".".join(parts[:i])
            if key.startswith("oar.fluid."):
                key = key[len("oar.fluid.") :]
            try:
                from oar.plugins import registries

                provided = registries().fluid_api.get(key)
            except Exception:
                return None
            if isinstance(provided, types.ModuleType):
                target_name = ".".join([provided.__name__] + parts[i:])
                spec = importlib.util.find_spec(target_name)
                if spec is None:
                    return _not_provided_module(fullname)
                return importlib.util.spec_from_loader(fullname, _AliasLoader(target_name, spec))
            if provided is None and key in OWNERS:
                # `import oar.dataset.mnist` without oar-data: say what to install
                lookup(key)
        return _not_provided_module(fullname)


def _not_provided_module(fullname: str) -> None:
    """A Fluid module path oar does not provide: say why instead of a bare ModuleNotFoundError."""
    from oar._names import why_missing

    key = fullname[len("oar.fluid.") :] if fullname.startswith("oar.fluid.") else fullname
    reason = why_missing(key)
    if reason is not None:
        raise ModuleNotFoundError(
            f"No module named '{fullname}': {public_name(key)} is {reason} (see docs/public-names.md)",
            name=fullname,
        )
    return None


class _NestedAliasFinder(importlib.abc.MetaPathFinder):
    """``import oar.fluid.incubate.fleet.base.role_maker`` gives the plugin's own module object.

    Below an alias, the parent's ``__path__`` is the plugin's directory, so the
    path finder would load a second copy of the module under the alias name
    (two classes of one name, two ``fleet`` singletons). Runs before the path
    finder, and only for names whose parent is an alias (no registry lookup).
    """

    def find_spec(self, fullname: str, path: Any = None, target: Any = None):
        parent, _, last = fullname.rpartition(".")
        if not parent.startswith("oar."):
            return None
        module = sys.modules.get(parent)
        real = getattr(module, "__name__", None)
        if module is None or real is None or real == parent:
            return None
        target_name = f"{real}.{last}"
        spec = importlib.util.find_spec(target_name)
        if spec is None:
            return None
        return importlib.util.spec_from_loader(fullname, _AliasLoader(target_name, spec))


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, target: str, spec: Any) -> None:
        self.target = target
        self.spec = spec

    def create_module(self, spec):
        return importlib.import_module(self.target)

    def exec_module(self, module):
        return None

    def get_code(self, fullname):  # for `python -m oar.<alias>`
        return self.spec.loader.get_code(self.target)

    def is_package(self, fullname):
        return self.spec.submodule_search_locations is not None


def install_alias_finder() -> None:
    if not any(isinstance(f, _AliasFinder) for f in sys.meta_path):
        sys.meta_path.append(_AliasFinder())
    if not any(isinstance(f, _NestedAliasFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _NestedAliasFinder())

"""The plugin manager: discovery through entry points, and the registries plugins fill.

Environment variables steer discovery:

- ``OAR_DISABLE_PLUGIN_AUTOLOAD=1``: load no entry-point plugins at all;
- ``OAR_DISABLE_PLUGINS=a,b``: skip the entry points (or distributions) named;
- ``OAR_TRACE_PLUGINS=1``: log every plugin loaded and every hook call.
"""

from __future__ import annotations

import importlib.metadata
import logging
import os
import sys
from typing import Any

import attrs
import pluggy

from oar import hookspecs
from oar.registry import DeviceRegistry, KernelRegistry, NamedRegistry, OpRegistry

log = logging.getLogger("oar.plugins")

ENTRY_POINT_GROUP = "oar"
ENV_DISABLE = "OAR_DISABLE_PLUGINS"
ENV_NO_AUTOLOAD = "OAR_DISABLE_PLUGIN_AUTOLOAD"
ENV_TRACE = "OAR_TRACE_PLUGINS"

# Core's own plugins, registered exactly like external ones (pytest's default_plugins).
DEFAULT_PLUGINS = ("oar.ops",)


@attrs.define
class PluginInfo:
    name: str
    distribution: str
    version: str
    module: str
    error: str | None = None


@attrs.define
class Registries:
    """Everything the plugins registered, one registry per hook."""

    ops: OpRegistry
    devices: DeviceRegistry
    kernels: KernelRegistry
    reader_decorators: NamedRegistry
    collective_backends: NamedRegistry
    pserver_transports: NamedRegistry
    formats: NamedRegistry
    _fluid_api: dict | None = None

    @property
    def fluid_api(self) -> dict:
        if self._fluid_api is None:
            api: dict = {}
            for impl in _manager().hook.oar_fluid_api.get_hookimpls():
                for key, value in (impl.function() or {}).items():
                    api.setdefault(key, value)
            self._fluid_api = api
        return self._fluid_api


_pm: pluggy.PluginManager | None = None
_reg: Registries | None = None
_infos: list = []
_named_hooks = {
    "oar_register_reader_decorators": "reader_decorators",
    "oar_register_collective_backends": "collective_backends",
    "oar_register_pserver_transports": "pserver_transports",
    "oar_register_formats": "formats",
}


def _manager() -> pluggy.PluginManager:
    global _pm
    if _pm is None:
        pm = pluggy.PluginManager(hookspecs.PROJECT)
        pm.add_hookspecs(hookspecs)
        if os.environ.get(ENV_TRACE):
            pm.trace.root.setwriter(lambda s: sys.stderr.write("[oar-plugins] " + s))
            pm.enable_tracing()
        _pm = pm
    return _pm


def _disabled() -> set:
    raw = os.environ.get(ENV_DISABLE, "")
    return {x.strip() for x in raw.split(",") if x.strip()}


def _load_entry_points(pm: pluggy.PluginManager) -> None:
    if os.environ.get(ENV_NO_AUTOLOAD):
        return
    disabled = _disabled()
    seen = set()
    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        if ep.name in seen:
            continue
        seen.add(ep.name)
        dist = ep.dist.name if ep.dist else "?"
        version = ep.dist.version if ep.dist else "?"
        if ep.name in disabled or dist in disabled:
            log.info("plugin %s (%s) disabled by %s", ep.name, dist, ENV_DISABLE)
            continue
        try:
            plugin = ep.load()
            pm.register(plugin, name=ep.name)
        except Exception as exc:  # one broken plugin must not break `import oar`
            log.warning("oar plugin %s from %s failed to load: %r", ep.name, dist, exc)
            _infos.append(PluginInfo(ep.name, dist, version, ep.value, error=repr(exc)))
            continue
        if os.environ.get(ENV_TRACE):
            sys.stderr.write(f"[oar-plugins] loaded {ep.name} from {dist} {version}\n")
        _infos.append(PluginInfo(ep.name, dist, version, ep.value))


def _call_registration(pm, hook_name: str, registry: Any, only: Any = None) -> None:
    hook = getattr(pm.hook, hook_name)
    for impl in reversed(hook.get_hookimpls()):  # registration order
        if only is not None and impl.plugin is not only:
            continue
        registry.current_plugin = impl.plugin_name
        try:
            impl.function(registry=registry)
        finally:
            registry.current_plugin = "?"


def _register_all(pm, reg: Registries, only: Any = None) -> None:
    _call_registration(pm, "oar_register_ops", reg.ops, only)
    _call_registration(pm, "oar_register_devices", reg.devices, only)
    _call_registration(pm, "oar_register_kernels", reg.kernels, only)
    for hook_name, attr in _named_hooks.items():
        _call_registration(pm, hook_name, getattr(reg, attr), only)
    reg._fluid_api = None


def registries() -> Registries:
    """The registries, setting up the plugin manager on first use."""
    global _reg
    if _reg is None:
        pm = _manager()
        import importlib

        for modname in DEFAULT_PLUGINS:
            mod = importlib.import_module(modname)
            if not pm.is_registered(mod):
                pm.register(mod, name=modname)
                _infos.append(PluginInfo(modname, "oar-core", _core_version(), modname))
        _load_entry_points(pm)
        pm.check_pending()
        ops = OpRegistry()
        reg = Registries(
            ops=ops,
            devices=DeviceRegistry(),
            kernels=KernelRegistry(ops),
            reader_decorators=NamedRegistry("reader decorator"),
            collective_backends=NamedRegistry("collective backend"),
            pserver_transports=NamedRegistry("pserver transport"),
            formats=NamedRegistry("format"),
        )
        _reg = reg
        try:
            _register_all(pm, reg)
        except Exception:
            _reg = None
            raise
    return _reg


def register(plugin: Any, name: str | None = None) -> None:
    """Register a plugin object by hand (tests, notebooks) and run its registration hooks."""
    reg = registries()
    pm = _manager()
    pm.register(plugin, name=name)
    pm.check_pending()
    _register_all(pm, reg, only=plugin)
    _infos.append(PluginInfo(name or repr(plugin), "(registered by hand)", "", repr(plugin)))


def plugin_infos() -> list:
    """Loaded (and failed) plugins, for ``oar plugins``."""
    registries()
    return list(_infos)


def _core_version() -> str:
    try:
        return importlib.metadata.version("oar-core")
    except importlib.metadata.PackageNotFoundError:
        return "0+unknown"

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
from oar.errors import RegistryError
from oar.fusion import FusionRegistry
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
    #: False when the plugin said what it needs is missing here (PluginUnavailableError)
    available: bool = True


@attrs.define
class Registries:
    """Everything the plugins registered, one registry per hook."""

    ops: OpRegistry
    devices: DeviceRegistry
    kernels: KernelRegistry
    fusions: FusionRegistry
    reader_decorators: NamedRegistry
    collective_backends: NamedRegistry
    pserver_transports: NamedRegistry
    formats: NamedRegistry
    inference_passes: NamedRegistry
    cli_commands: NamedRegistry
    _fluid_api: dict | None = None

    @property
    def fluid_api(self) -> dict:
        if self._fluid_api is None:
            api: dict = {}
            # through pm.hook (traced); pluggy answers last-registered first: the first wins
            for contributed in reversed(_manager().hook.oar_fluid_api()):
                for key, value in (contributed or {}).items():
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
    "oar_register_inference_passes": "inference_passes",
    "oar_register_cli_commands": "cli_commands",
}


def _manager() -> pluggy.PluginManager:
    global _pm
    if _pm is None:
        pm = pluggy.PluginManager(hookspecs.PROJECT)
        pm.add_hookspecs(hookspecs)
        if os.environ.get(ENV_TRACE):
            pm.trace.root.setwriter(lambda s: sys.stderr.write("[oar-plugins] " + s))
            pm.enable_tracing()  # every hook call through pm.hook, with its plugins and results
        _pm = pm
    return _pm


def _disabled() -> set:
    raw = os.environ.get(ENV_DISABLE, "")
    return {x.strip() for x in raw.split(",") if x.strip()}


def _unknown_hooks(pm: pluggy.PluginManager, plugin: Any) -> list:
    """Hook implementations of ``plugin`` that no hookspec declares (a misspelt hook name)."""
    return sorted(
        hc.name
        for hc in pm.get_hookcallers(plugin) or ()
        if not hc.has_spec()
        and not any(i.optionalhook for i in hc.get_hookimpls() if i.plugin is plugin)
    )


def _add_plugin(
    pm: pluggy.PluginManager, plugin: Any, name: str, dist: str, version: str, module: str
) -> PluginInfo:
    """Register ``plugin`` with pluggy; a plugin pluggy refuses is recorded as FAILED, not raised."""
    info = PluginInfo(name, dist, version, module)
    _infos.append(info)
    try:
        pm.register(plugin, name=name)
    except Exception as exc:  # PluginValidationError (bad hook signature), duplicate name
        info.error = f"{type(exc).__name__}: {exc}"
        log.warning("oar plugin %s from %s refused: %s", name, dist, info.error)
        return info
    unknown = _unknown_hooks(pm, plugin)
    if unknown:
        pm.unregister(plugin)
        pm.set_blocked(name)
        info.error = (
            f"unknown hook {', '.join(unknown)} (not an oar hookspec; misspelt? see oar.hookspecs)"
        )
        log.warning("oar plugin %s from %s: %s", name, dist, info.error)
    return info


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
            pm.set_blocked(ep.name)
            continue
        try:
            plugin = ep.load()
        except Exception as exc:  # one broken plugin must not break `import oar`
            log.warning("oar plugin %s from %s failed to load: %r", ep.name, dist, exc)
            _infos.append(PluginInfo(ep.name, dist, version, ep.value, error=repr(exc)))
            continue
        info = _add_plugin(pm, plugin, ep.name, dist, version, ep.value)
        if os.environ.get(ENV_TRACE) and info.error is None:
            sys.stderr.write(f"[oar-plugins] loaded {ep.name} from {dist} {version}\n")


# registration hooks in the order they run, and the Registries attribute each one fills
_REGISTRATION_HOOKS = (
    ("oar_register_ops", "ops"),
    ("oar_register_devices", "devices"),
    ("oar_register_kernels", "kernels"),
    ("oar_register_fusions", "fusions"),
) + tuple(_named_hooks.items())


def _rollback(reg: Registries, plugin_name: str) -> None:
    """Remove everything ``plugin_name`` registered (a plugin whose registration failed)."""
    reg.ops.remove_owned_by(plugin_name)
    reg.devices.remove_owned_by(plugin_name)
    reg.kernels.remove_owned_by(plugin_name)
    reg.fusions.remove_owned_by(plugin_name)
    for attr in _named_hooks.values():
        getattr(reg, attr).remove_owned_by(plugin_name)


def _register_all(pm: pluggy.PluginManager, reg: Registries, only: Any = None) -> None:
    """Run every registration hook through ``pm.hook``, one plugin at a time.

    One plugin's hook is called through ``pm.subset_hook_caller`` (so hook-call
    tracing and monitoring see it). A plugin whose hook raises (including a
    registry's duplicate-key error) has everything it registered rolled back,
    is unregistered and blocked, and is listed as FAILED; the others go on.
    """
    plugins = [only] if only is not None else [p for _, p in pm.list_name_plugin()]
    for hook_name, attr in _REGISTRATION_HOOKS:
        registry = getattr(reg, attr)
        impls = getattr(pm.hook, hook_name).get_hookimpls()
        for impl in reversed(impls):  # registration order
            if impl.plugin not in plugins or not pm.is_registered(impl.plugin):
                continue
            others = [p for _, p in pm.list_name_plugin() if p is not impl.plugin]
            caller = pm.subset_hook_caller(hook_name, remove_plugins=others)
            registry.current_plugin = impl.plugin_name
            try:
                caller(registry=registry)
            except Exception as exc:
                _fail(pm, reg, impl.plugin_name, hook_name, exc)
            finally:
                registry.current_plugin = "?"
    reg._fluid_api = None


def _fail(pm: pluggy.PluginManager, reg: Registries, name: str, hook_name: str, exc: Exception):
    _rollback(reg, name)
    plugin = pm.get_plugin(name)
    if plugin is not None:
        pm.unregister(plugin)
    pm.set_blocked(name)
    from oar.errors import PluginUnavailableError

    available = not isinstance(exc, PluginUnavailableError)
    if available:
        error = f"{hook_name} raised {type(exc).__name__}: {exc}"
        log.warning("oar plugin %s failed while registering (rolled back): %s", name, error)
    else:
        error = str(exc)
        log.info("oar plugin %s is not available here: %s", name, error)
    for info in _infos:
        if info.name == name and info.error is None:
            info.error, info.available = error, available
            return
    _infos.append(PluginInfo(name, "?", "?", "?", error=error, available=available))


def registries() -> Registries:
    """The registries, setting up the plugin manager on first use."""
    global _reg
    if _reg is None:
        pm = _manager()
        import importlib

        for modname in DEFAULT_PLUGINS:
            mod = importlib.import_module(modname)
            if not pm.is_registered(mod):
                _add_plugin(pm, mod, modname, "oar-core", _core_version(), modname)
        _load_entry_points(pm)
        ops = OpRegistry()
        reg = Registries(
            ops=ops,
            devices=DeviceRegistry(),
            kernels=KernelRegistry(ops),
            fusions=FusionRegistry(),
            reader_decorators=NamedRegistry("reader decorator"),
            collective_backends=NamedRegistry("collective backend"),
            pserver_transports=NamedRegistry("pserver transport"),
            formats=NamedRegistry("format"),
            inference_passes=NamedRegistry("inference pass"),
            cli_commands=NamedRegistry("cli command"),
        )
        _reg = reg
        _register_all(pm, reg)
    return _reg


def register(plugin: Any, name: str | None = None) -> None:
    """Register a plugin object by hand (tests, notebooks) and run its registration hooks.

    Unlike an entry-point plugin, a plugin registered by hand that fails
    raises (after its registrations are rolled back): the caller is right there.
    """
    reg = registries()
    pm = _manager()
    info = _add_plugin(pm, plugin, name or repr(plugin), "(registered by hand)", "", repr(plugin))
    if info.error is None:
        _register_all(pm, reg, only=plugin)
    if info.error is not None:
        raise RegistryError(f"plugin {info.name} failed: {info.error}")


def _copy_state(obj: Any) -> dict:
    state: dict[str, Any] = {}
    for key, value in vars(obj).items():
        if isinstance(value, dict):
            state[key] = {k: list(v) if isinstance(v, list) else v for k, v in value.items()}
        elif isinstance(value, list):
            state[key] = list(value)
        elif not callable(value) and not hasattr(value, "acquire"):  # plain fields, not locks
            state[key] = value
    return state


def snapshot() -> Any:
    """Every registration now (ops, devices, kernels, named registries), for :func:`restore`."""
    reg = registries()
    return {
        attr: _copy_state(getattr(reg, attr))
        for attr in ("ops", "devices", "kernels", "fusions", *_named_hooks.values())
    }


def restore(state: Any) -> None:
    """Put the registrations back as :func:`snapshot` saw them (tests that register ops)."""
    reg = registries()
    for attr, saved in state.items():
        target = getattr(reg, attr)
        for key, value in saved.items():
            if isinstance(value, dict):
                value = {k: list(v) if isinstance(v, list) else v for k, v in value.items()}
            setattr(target, key, value)
    reg._fluid_api = None


def plugin_infos() -> list:
    """Loaded (and failed) plugins, for ``oar plugins``."""
    registries()
    return list(_infos)


def _core_version() -> str:
    try:
        return importlib.metadata.version("oar-core")
    except importlib.metadata.PackageNotFoundError:
        return "0+unknown"

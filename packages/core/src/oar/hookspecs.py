"""The oar plugin spec: every hook a plugin may implement, grouped by stage.

This module is a leaf (it imports only pluggy) so a plugin can import the
markers while ``oar`` itself is still being initialised.

Registration hooks receive a registry object and add to it; they are called
through ``pm.hook`` one plugin at a time, once, when the plugin manager is
first set up at ``import oar`` (and again for a plugin registered later by
hand). None of them is ``firstresult`` or ``historic``: every plugin gets its
say, and a registry refuses duplicate keys with a clear error; a plugin whose
hook raises is rolled back and listed as FAILED by ``oar plugins``.
``oar_data_parallel_runner`` is the one ``firstresult`` hook.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:  # annotations only: at run time this module imports nothing of oar
    from oar.fusion import FusionRegistry
    from oar.registry import DeviceRegistry, KernelRegistry, NamedRegistry, OpRegistry

PROJECT = "oar"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


# --- stage 1: what can be computed -------------------------------------------------------


@hookspec
def oar_register_ops(registry: OpRegistry) -> None:
    """Add op definitions to ``registry`` (an :class:`oar.registry.OpRegistry`).

    Called once at start-up. An op definition is device-agnostic: slots, attrs
    with defaults, ``infer_shape`` and the grad maker. Use
    ``registry.register_op(OpDef(...))``.
    """


@hookspec
def oar_register_devices(registry: DeviceRegistry) -> None:
    """Add devices to ``registry`` (an :class:`oar.registry.DeviceRegistry`).

    Called once at start-up, before kernels. A device names itself (``cpu``,
    ``cuda``), reports availability and count cheaply (no GPU probing at
    import), and carries its array module and host<->device copies.
    """


@hookspec
def oar_register_kernels(registry: KernelRegistry) -> None:
    """Add kernels to ``registry`` (an :class:`oar.registry.KernelRegistry`).

    ``registry.register_kernel(op_type, device, dtypes, kernel, priority=0)``;
    a kernel is ``kernel(inputs, attrs) -> {output slot: array}``. The highest
    priority wins, so a third-party plugin can override a built-in kernel.
    """


@hookspec
def oar_register_fusions(registry: FusionRegistry) -> None:
    """Offer fused kernels for chains of ops (an :class:`oar.fusion.FusionRegistry`).

    Called once at start-up, after kernels.
    ``registry.register_fusion(name, op_types, device, make, priority=0)``: when a static
    plan is compiled, adjacent ops of those types whose intermediates nothing else reads
    may run as one call of ``make(ops, block)``'s kernel (None declines). Keyword options
    ``repeated`` (a run of independent ops of one type), ``keeps_intermediates``,
    ``selected_rows`` and ``inplace``: see :mod:`oar.fusion` for them and the fused kernel's
    slots and results.
    """


# --- stage 2: data, distribution, storage (implemented by oar-data, oar-dist, oar-io) -----


@hookspec
def oar_register_reader_decorators(registry: NamedRegistry) -> None:
    """Add reader decorators (``name -> callable``) exposed as ``oar.reader.<name>``.

    ``registry.register(name, fn)``; called once when ``oar.reader`` is first used.
    """


@hookspec
def oar_register_collective_backends(registry: NamedRegistry) -> None:
    """Add collective backends (``name -> factory``) such as ``mpi`` or ``nccl``.

    ``registry.register(name, factory)``; a factory returns an object with
    ``rank``, ``size``, ``allreduce``, ``broadcast``, ``barrier``.
    """


@hookspec(firstresult=True)
def oar_data_parallel_runner(compiled: Any, num_places: int) -> Any:
    """Return the runner of a data-parallel ``CompiledProgram`` over ``num_places`` places.

    Called (``firstresult``: the first non-None answer wins) the first time a
    program compiled ``with_data_parallel`` runs on more than one place or
    trainer. The runner has ``run(exe, feed, fetch_list, scope, return_numpy,
    return_merged) -> list`` with ``Executor.run``'s meaning. Core runs one
    place itself; without an implementation (oar-dist) more places are an error.
    """


@hookspec
def oar_executor_closed(executor: Any) -> None:
    """Called by ``Executor.close()`` after the executor dropped its plans.

    oar-dist tells the parameter servers this trainer is done (Fluid's
    ``exe.close()`` notifies the pservers). Every implementation is called;
    return values are ignored.
    """


@hookspec
def oar_register_pserver_transports(registry: NamedRegistry) -> None:
    """Add parameter-server transports (``name -> factory``), e.g. ``zmq``.

    ``registry.register(name, factory)``.
    """


@hookspec
def oar_register_formats(registry: NamedRegistry) -> None:
    """Add save/load formats (``name -> format object``) for tensors and programs.

    ``registry.register(name, fmt)``; selectable by name in the save/load API.
    """


@hookspec
def oar_register_inference_passes(registry: NamedRegistry) -> None:
    """Add inference passes (``name -> pass object``) that optimise a loaded inference program.

    ``registry.register(name, pass_)``; a pass has ``order`` (an int: passes run in
    ascending order, then by name), ``default`` (bool: in the predictor's default
    pass list) and ``apply(ctx) -> int`` (rewrites ``ctx.program`` in place, may
    read and write parameters in ``ctx.scope``, must not change ``ctx.feeds`` or
    ``ctx.fetches``; returns how many rewrites it made). Called once at start-up;
    used by ``AnalysisConfig.switch_ir_optim(True)`` (oar-deploy, ``docs/deployment.md``).
    """


@hookspec
def oar_register_cli_commands(registry: NamedRegistry) -> None:
    """Add ``oar`` sub-commands (``name -> command object``), e.g. ``model`` or ``export``.

    ``registry.register(name, cmd)``; a command has ``help`` (str),
    ``configure(parser)`` (adds its arguments to an ``argparse`` sub-parser) and
    ``run(args) -> int`` (the exit status). Called once at start-up; ``oar
    <name> ...`` dispatches to it.
    """


# --- stage 3: the public facade ------------------------------------------------------------


@hookspec
def oar_fluid_api() -> dict[str, Any]:
    """Return names this plugin contributes to the public facade.

    Keys are dotted paths relative to ``oar.fluid`` (``"io.PyReader"``,
    ``"DataFeeder"``) or, prefixed with ``"oar."``, relative to ``oar``
    itself (``"oar.batch"``, ``"oar.reader"``). Called lazily, the first time a
    facade name that core does not define itself is looked up.
    """

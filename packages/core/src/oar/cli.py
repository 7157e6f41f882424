"""The ``oar`` command line: ``oar --version``; ``oar plugins [--json] [--kernel OP]`` shows what is
installed and which plugin's kernel wins; ``oar program dot`` draws a program.

Plugins add sub-commands through the ``oar_register_cli_commands`` hook (a
command object with ``help``, ``configure(parser)`` and ``run(args) -> int``):
oar-deploy adds ``oar model show|run`` and ``oar export onnx``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence


def plugins_report() -> dict:
    """Plugins, devices and the op x device kernel coverage, as plain data."""
    from oar.plugins import plugin_infos, registries

    reg = registries()
    devices = [
        {
            "name": d.name,
            "plugin": d.plugin,
            "available": bool(d.available()),
            "count": int(d.count()) if d.available() else 0,
        }
        for d in reg.devices
    ]
    coverage = {}
    for op_type in reg.ops.types():
        coverage[op_type] = sorted(reg.kernels.devices_for(op_type))
    numpy_only: dict = {}  # kernels an array-generic family declared generic=False
    for e in reg.kernels.entries():
        if e.generic is False:
            numpy_only.setdefault(e.device, set()).add(e.op_type)
    return {
        "plugins": [
            {
                "name": p.name,
                "distribution": p.distribution,
                "version": p.version,
                "module": p.module,
                "error": p.error,
                "disabled": p.disabled,
                "available": p.available,
            }
            for p in plugin_infos()
        ],
        "devices": devices,
        "ops": {
            t: {"defined_by": reg.ops.owner(t), "kernels": coverage[t]} for t in reg.ops.types()
        },
        "numpy_only_kernels": {d: sorted(ts) for d, ts in sorted(numpy_only.items())},
        "fusions": [
            {"name": f.name, "ops": list(f.ops), "device": f.device, "plugin": f.plugin}
            for f in reg.fusions.for_all()
        ],
        "formats": reg.formats.names(),
        "reader_decorators": reg.reader_decorators.names(),
        "collective_backends": reg.collective_backends.names(),
        "pserver_transports": reg.pserver_transports.names(),
        "inference_passes": reg.inference_passes.names(),
        "cli_commands": reg.cli_commands.names(),
    }


def _status(p: dict) -> str:
    if p["disabled"]:
        return "  disabled (OAR_DISABLE_PLUGINS)"
    if not p.get("available", True):
        return f"  UNAVAILABLE: {p['error']}"
    return f"  FAILED: {p['error']}" if p["error"] else ""


def _device_line(d: dict) -> str:
    if not d["available"]:
        return "not available"
    count = d["count"]
    if d["name"] != "cpu":
        return f"available, {count} device{'s' if count != 1 else ''}"
    places = os.environ.get("CPU_NUM")
    return f"available, {count} core{'s' if count != 1 else ''}; " + (
        f"{places} places (CPU_NUM)" if places else f"{count} places (set CPU_NUM to change)"
    )


def _print_table(report: dict, out) -> None:
    from oar.install_hints import device_plugin_hint

    print("Plugins:", file=out)
    for p in report["plugins"]:
        print(f"  {p['name']:<20} {p['distribution']:<22} {p['version']:<10}{_status(p)}", file=out)
    print("\nDevices:", file=out)
    for d in report["devices"]:
        print(f"  {d['name']:<8} from {d['plugin']:<20} {_device_line(d)}", file=out)
    dev_names = [d["name"] for d in report["devices"]]
    missing = [t for t, info in report["ops"].items() if not info["kernels"]]
    if not any(d["available"] for d in report["devices"]):
        print(
            f"\nNo usable device (registered: {', '.join(dev_names) or 'none'}), so none of the "
            f"{len(report['ops'])} ops can run here.\n"
            f"For the numpy CPU kernels: {device_plugin_hint('cpu') or 'see the log for why oar-kernels-cpu did not load'}.",
            file=out,
        )
    else:
        print("\nKernel coverage (op x device):", file=out)
        width = max([len(t) for t in report["ops"]] + [4])
        print(f"  {'op':<{width}}  " + "  ".join(f"{n:<5}" for n in dev_names), file=out)
        for t, info in report["ops"].items():
            marks = "  ".join(f"{'yes' if n in info['kernels'] else '-':<5}" for n in dev_names)
            print(f"  {t:<{width}}  {marks}", file=out)
        print(f"\n{len(report['ops'])} ops, {len(missing)} without any kernel", file=out)
    for device, op_types in report["numpy_only_kernels"].items():
        print(
            f"numpy-only (not array-generic) kernels on {device}: {', '.join(op_types)}", file=out
        )
    for f in report.get("fusions", ()):
        print(
            f"fusion {f['name']} on {f['device']} ({f['plugin']}): {' + '.join(f['ops'])}", file=out
        )
    for key in (
        "formats",
        "reader_decorators",
        "collective_backends",
        "pserver_transports",
        "inference_passes",
        "cli_commands",
    ):
        if report[key]:
            print(f"{key.replace('_', ' ')}: {', '.join(report[key])}", file=out)


def kernel_report(op_type: str) -> dict:
    """Who provides ``op_type``'s kernels, per device and dtype, the winner first."""
    from oar.plugins import registries

    reg = registries()
    if op_type not in reg.ops:
        raise SystemExit(f"oar plugins --kernel: unknown op type '{op_type}' (see `oar plugins`)")
    rows = []
    for device in sorted(reg.kernels.devices_for(op_type)):
        for dtype in reg.kernels.dtypes_for(op_type, device):
            for e in reg.kernels.candidates(op_type, device, dtype):
                if e.dtype != dtype:
                    continue  # an any-dtype entry is listed once, under its own row
                rows.append(
                    {
                        "device": device,
                        "dtype": dtype,
                        "plugin": e.plugin,
                        "priority": e.priority,
                        "wins": reg.kernels.lookup(op_type, device, dtype) is e,
                        "kernel": f"{e.kernel.__module__}.{getattr(e.kernel, '__qualname__', '?')}",
                    }
                )
    return {"op": op_type, "defined_by": reg.ops.owner(op_type), "kernels": rows}


def _print_kernels(report: dict, out) -> None:
    print(f"op '{report['op']}' (defined by {report['defined_by']})", file=out)
    if not report["kernels"]:
        print("  no kernel on any device", file=out)
    for r in report["kernels"]:
        mark = "wins" if r["wins"] else "overridden"
        dtype = r["dtype"] or "any dtype"
        print(
            f"  {r['device']:<6} {dtype:<10} {r['plugin']:<20} priority {r['priority']:<6} "
            f"{mark:<10} {r['kernel']}",
            file=out,
        )


def _load_program(path: str):
    """A Program from a saved inference model directory or a program JSON file."""
    from pathlib import Path

    from oar import fluid

    p = Path(path)
    if p.is_dir():
        exe = fluid.Executor(fluid.CPUPlace())
        program, _feeds, _fetches = fluid.io.load_inference_model(str(p), exe)
        return program
    if p.suffix == ".json":
        return fluid.Program.from_dict(json.loads(p.read_text()))
    raise SystemExit(f"oar program: '{path}' is neither a model directory nor a .json program")


def _program_command(args) -> int:
    from oar.viz.graph import program_to_dot

    text = program_to_dot(_load_program(args.path), show_shapes=not args.no_shapes)
    if args.output:
        with open(args.output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


def _version_text() -> str:
    from oar import __version__
    from oar.plugins import plugin_infos

    lines = [f"oar {__version__}"]
    lines += [f"  {p.distribution} {p.version} ({p.name})" for p in plugin_infos()]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _main(argv)
    except BrokenPipeError:  # `oar plugins | head`: the reader left; not an error
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0


def _main(argv: Sequence[str] | None) -> int:
    from oar.plugins import registries

    parser = argparse.ArgumentParser(prog="oar", description="oar command line")
    parser.add_argument("--version", action="store_true", help="oar's and every plugin's version")
    sub = parser.add_subparsers(dest="command")
    p = sub.add_parser("plugins", help="list installed plugins, devices and kernel coverage")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument(
        "--kernel", metavar="OP", help="which plugin's kernel wins for OP, per device/dtype"
    )
    d = sub.add_parser("program", help="show a program: `oar program dot MODEL_DIR|program.json`")
    d.add_argument("view", choices=["dot"], help="dot: Graphviz DOT of the program")
    d.add_argument("path", help="a saved inference model directory or a program .json file")
    d.add_argument("-o", "--output", help="write the DOT here (default: standard output)")
    d.add_argument("--no-shapes", action="store_true", help="variable names only")
    commands = dict(registries().cli_commands.items())
    for name, cmd in sorted(commands.items()):
        cmd.configure(sub.add_parser(name, help=getattr(cmd, "help", None)))
    args = parser.parse_args(argv)
    if args.version:
        print(_version_text())
        return 0
    if args.command == "program":
        return _program_command(args)
    if args.command in commands:
        return int(commands[args.command].run(args) or 0)
    if args.command != "plugins":
        parser.print_help()
        return 2
    report = kernel_report(args.kernel) if args.kernel else plugins_report()
    if args.json:
        json.dump(report, sys.stdout, indent=2)
        print()
    elif args.kernel:
        _print_kernels(report, sys.stdout)
    else:
        _print_table(report, sys.stdout)
    sys.stdout.flush()
    return 0

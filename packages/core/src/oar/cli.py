"""The ``oar`` command line: ``oar plugins [--json]`` shows what is installed.

Plugins add sub-commands through the ``oar_register_cli_commands`` hook (a
command object with ``help``, ``configure(parser)`` and ``run(args) -> int``):
oar-deploy adds ``oar model show|run`` and ``oar export onnx``.
"""

from __future__ import annotations

import argparse
import json
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


def _print_table(report: dict, out) -> None:
    print("Plugins:", file=out)
    for p in report["plugins"]:
        status = f"  FAILED: {p['error']}" if p["error"] else ""
        if not p.get("available", True):
            status = f"  UNAVAILABLE: {p['error']}"
        print(f"  {p['name']:<20} {p['distribution']:<22} {p['version']:<10}{status}", file=out)
    print("\nDevices:", file=out)
    for d in report["devices"]:
        avail = f"available ({d['count']})" if d["available"] else "not available"
        print(f"  {d['name']:<8} from {d['plugin']:<20} {avail}", file=out)
    dev_names = [d["name"] for d in report["devices"]]
    print("\nKernel coverage (op x device):", file=out)
    width = max([len(t) for t in report["ops"]] + [4])
    print(f"  {'op':<{width}}  " + "  ".join(f"{n:<5}" for n in dev_names), file=out)
    for t, info in report["ops"].items():
        marks = "  ".join(f"{'yes' if n in info['kernels'] else '-':<5}" for n in dev_names)
        print(f"  {t:<{width}}  {marks}", file=out)
    missing = [t for t, info in report["ops"].items() if not info["kernels"]]
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


def main(argv: Sequence[str] | None = None) -> int:
    from oar.plugins import registries

    parser = argparse.ArgumentParser(prog="oar", description="oar command line")
    sub = parser.add_subparsers(dest="command")
    p = sub.add_parser("plugins", help="list installed plugins, devices and kernel coverage")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    commands = dict(registries().cli_commands.items())
    for name, cmd in sorted(commands.items()):
        cmd.configure(sub.add_parser(name, help=getattr(cmd, "help", None)))
    args = parser.parse_args(argv)
    if args.command in commands:
        return int(commands[args.command].run(args) or 0)
    if args.command != "plugins":
        parser.print_help()
        return 2
    report = plugins_report()
    if args.json:
        json.dump(report, sys.stdout, indent=2)
        print()
    else:
        _print_table(report, sys.stdout)
    return 0

"""``oar model show|run`` and ``oar export onnx``: sub-commands registered through the CLI hook."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from typing import Any

import numpy as np


def _load(model_dir: str, model_filename: str | None, params_filename: str | None) -> tuple:
    from oar import fluid

    scope = fluid.Scope()
    exe = fluid.Executor(fluid.CPUPlace())
    with fluid.scope_guard(scope):
        program, feeds, fetches = fluid.io.load_inference_model(
            model_dir, exe, model_filename=model_filename, params_filename=params_filename
        )
    return program, feeds, fetches, scope, exe


def _var_info(var: Any) -> dict:
    return {
        "name": var.name,
        "shape": list(var.shape) if var.shape is not None else None,
        "dtype": str(var.dtype),
        "lod_level": int(getattr(var, "lod_level", 0) or 0),
    }


def model_summary(model_dir: str, model_filename=None, params_filename=None) -> dict:
    """Inputs, outputs, op counts and parameter totals of a saved inference model, as plain data."""
    program, feeds, fetches, scope, _ = _load(model_dir, model_filename, params_filename)
    block = program.global_block()
    ops = Counter(op.type for b in program.blocks for op in b.ops)
    params = []
    for v in program.list_vars():
        if not v.persistable:
            continue
        sv = scope.find_var(v.name)
        if sv is None or not sv.is_initialized():
            continue
        arr = np.asarray(sv.get_tensor())
        params.append(
            {
                "name": v.name,
                "shape": list(arr.shape),
                "dtype": arr.dtype.name,
                "size": int(arr.size),
                "bytes": int(arr.nbytes),
            }
        )
    return {
        "model_dir": model_dir,
        "inputs": [_var_info(block.var(n)) for n in feeds],
        "outputs": [_var_info(v) for v in fetches],
        "ops": dict(sorted(ops.items(), key=lambda kv: (-kv[1], kv[0]))),
        "num_ops": sum(ops.values()),
        "parameters": params,
        "num_parameters": sum(p["size"] for p in params),
        "parameter_bytes": sum(p["bytes"] for p in params),
    }


def _print_summary(s: dict, out: Any) -> None:
    print(f"model: {s['model_dir']}", file=out)
    for key in ("inputs", "outputs"):
        print(f"{key}:", file=out)
        for v in s[key]:
            lod = f" lod_level={v['lod_level']}" if v["lod_level"] else ""
            print(f"  {v['name']:<24} {v['dtype']:<8} {v['shape']}{lod}", file=out)
    print(f"ops ({s['num_ops']}):", file=out)
    for t, n in s["ops"].items():
        print(f"  {t:<24} {n}", file=out)
    print(
        f"parameters: {len(s['parameters'])} tensors, {s['num_parameters']:,} values, "
        f"{s['parameter_bytes']:,} bytes",
        file=out,
    )


def _parse_inputs(items: list) -> dict:
    feeds = {}
    for item in items or []:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise SystemExit(f"oar model run: --input takes name=file.npy, given {item!r}")
        try:
            feeds[name] = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as exc:
            raise SystemExit(
                f"oar model run: cannot read input '{name}' from {path}: {exc}"
            ) from None
    return feeds


def _add_model_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("model_dir", help="directory written by save_inference_model (or a .pdmodel)")
    p.add_argument("--model-filename", default=None, help="model file name inside model_dir")
    p.add_argument("--params-filename", default=None, help="combined parameter file name")


class ModelCommand:
    help = "inspect (show) or run (run) a saved inference model"

    def configure(self, parser: argparse.ArgumentParser) -> None:
        sub = parser.add_subparsers(dest="model_command")
        show = sub.add_parser("show", help="inputs, outputs, op counts, parameter count and bytes")
        _add_model_args(show)
        show.add_argument("--json", action="store_true", help="machine-readable output")
        run = sub.add_parser("run", help="run the model on .npy inputs through the predictor")
        _add_model_args(run)
        run.add_argument("--input", action="append", metavar="NAME=FILE.npy", default=[])
        run.add_argument("--save", metavar="OUT.npz", help="write the outputs to an .npz file")
        run.add_argument("--no-ir-optim", action="store_true", help="run without inference passes")
        self._parser = parser

    def run(self, args: argparse.Namespace) -> int:
        if args.model_command == "show":
            s = model_summary(args.model_dir, args.model_filename, args.params_filename)
            if args.json:
                json.dump(s, sys.stdout, indent=2)
                print()
            else:
                _print_summary(s, sys.stdout)
            return 0
        if args.model_command == "run":
            return _run_model(args)
        self._parser.print_help()
        return 2


def _config(args: argparse.Namespace) -> Any:
    from oar_deploy.config import AnalysisConfig

    if args.model_filename or args.params_filename:
        d = args.model_dir
        cfg = AnalysisConfig(
            os.path.join(d, args.model_filename or "__model__"),
            os.path.join(d, args.params_filename) if args.params_filename else "",
        )
    else:
        cfg = AnalysisConfig(args.model_dir)
    return cfg


def _run_model(args: argparse.Namespace) -> int:
    from oar_deploy.predictor import create_paddle_predictor

    cfg = _config(args)
    cfg.switch_ir_optim(not args.no_ir_optim)
    cfg.switch_use_feed_fetch_ops(False)
    pred = create_paddle_predictor(cfg)
    feeds = _parse_inputs(args.input)
    missing = [n for n in pred.get_input_names() if n not in feeds]
    unknown = [n for n in feeds if n not in pred.get_input_names()]
    if missing or unknown:
        print(
            f"oar model run: the model takes inputs {pred.get_input_names()}; missing {missing}, "
            f"unknown {unknown}",
            file=sys.stderr,
        )
        return 2
    for name, arr in feeds.items():
        pred.get_input_tensor(name).copy_from_cpu(arr)
    pred.zero_copy_run()
    outs = {n: pred.get_output_tensor(n).copy_to_cpu() for n in pred.get_output_names()}
    for name, arr in outs.items():
        stats = ""
        if arr.size and np.issubdtype(arr.dtype, np.number):
            stats = f" min={arr.min():.6g} max={arr.max():.6g} mean={arr.mean():.6g}"
        print(f"{name}: {arr.dtype.name} {list(arr.shape)}{stats}")
    if args.save:
        np.savez(args.save, **outs)
        print(f"saved {len(outs)} outputs to {args.save}")
    return 0


class ExportCommand:
    help = "export a saved inference model to another format (onnx)"

    def configure(self, parser: argparse.ArgumentParser) -> None:
        sub = parser.add_subparsers(dest="export_format")
        p = sub.add_parser("onnx", help="write an ONNX model (needs: pip install oar-deploy[onnx])")
        _add_model_args(p)
        p.add_argument("output", help="the .onnx file to write")
        p.add_argument("--opset", type=int, default=None, help="ONNX opset (default 13)")
        self._parser = parser

    def run(self, args: argparse.Namespace) -> int:
        if args.export_format != "onnx":
            self._parser.print_help()
            return 2
        from oar_deploy.onnx import DEFAULT_OPSET, UnsupportedOpError, export

        program, feeds, fetches, scope, _ = _load(
            args.model_dir, args.model_filename, args.params_filename
        )
        try:
            export(program, feeds, fetches, scope, args.output, opset=args.opset or DEFAULT_OPSET)
        except UnsupportedOpError as exc:
            print(f"oar export onnx: {exc}", file=sys.stderr)
            return 1
        print(f"wrote {args.output}")
        return 0


COMMANDS = {"model": ModelCommand(), "export": ExportCommand()}

"""The oar plugin entry point: fused inference ops, inference passes, the predictor facade, CLI."""

from __future__ import annotations

from typing import Any

from oar.api import hookimpl


@hookimpl
def oar_register_ops(registry: Any) -> None:
    from oar_deploy.fused_ops import register_ops

    register_ops(registry)


@hookimpl
def oar_register_kernels(registry: Any) -> None:
    from oar_deploy.fused_ops import register_kernels

    register_kernels(registry)


@hookimpl
def oar_register_inference_passes(registry: Any) -> None:
    from oar_deploy.passes import builtin_passes

    for p in builtin_passes():
        registry.register(p.name, p)


@hookimpl
def oar_register_cli_commands(registry: Any) -> None:
    from oar_deploy.cli import COMMANDS

    for name, cmd in COMMANDS.items():
        registry.register(name, cmd)


@hookimpl
def oar_fluid_api() -> dict:
    from oar_deploy import config, onnx, predictor, tensor

    return {
        "core.AnalysisConfig": config.AnalysisConfig,
        "core.create_paddle_predictor": predictor.create_paddle_predictor,
        "core.AnalysisPredictor": predictor.Predictor,
        "core.PaddleTensor": tensor.PaddleTensor,
        "core.PaddleDType": tensor.PaddleDType,
        "core.PaddleBuf": tensor.PaddleBuf,
        "core.ZeroCopyTensor": tensor.ZeroCopyTensor,
        "oar.onnx": onnx,
    }

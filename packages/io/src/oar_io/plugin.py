"""The oar plugin entry point: registers the formats and contributes the save/load facade names."""

from __future__ import annotations

from typing import Any

from oar.api import hookimpl


@hookimpl
def oar_register_formats(registry: Any) -> None:
    from oar_io.program_desc import ProtobufProgramFormat
    from oar_io.program_json import JsonProgramFormat
    from oar_io.tensor_formats import FluidTensorFormat, OarTensorFormat

    for fmt in (
        OarTensorFormat(),
        FluidTensorFormat(),
        JsonProgramFormat(),
        ProtobufProgramFormat(),
    ):
        registry.register(fmt.name, fmt)


@hookimpl
def oar_fluid_api() -> dict:
    from oar_io import dygraph_io, inference, program_state, static_io

    api = {
        "io.save_vars": static_io.save_vars,
        "io.save_params": static_io.save_params,
        "io.save_persistables": static_io.save_persistables,
        "io.load_vars": static_io.load_vars,
        "io.load_params": static_io.load_params,
        "io.load_persistables": static_io.load_persistables,
        "io.is_parameter": static_io.is_parameter,
        "io.is_persistable": static_io.is_persistable,
        "io.get_program_parameter": static_io.get_program_parameter,
        "io.get_program_persistable_vars": static_io.get_program_persistable_vars,
        "io.save_inference_model": inference.save_inference_model,
        "io.load_inference_model": inference.load_inference_model,
        "io.save": program_state.save,
        "io.load": program_state.load,
        "io.load_program_state": program_state.load_program_state,
        "io.set_program_state": program_state.set_program_state,
        "save": program_state.save,
        "load": program_state.load,
        "load_program_state": program_state.load_program_state,
        "set_program_state": program_state.set_program_state,
        "save_dygraph": dygraph_io.save_dygraph,
        "load_dygraph": dygraph_io.load_dygraph,
        "dygraph.save_dygraph": dygraph_io.save_dygraph,
        "dygraph.load_dygraph": dygraph_io.load_dygraph,
    }
    return api

"""numpy kernel of ``print``: Fluid 1.8's layout on stdout, input passed through without a copy."""

from __future__ import annotations

import sys
import time

from oar.api import LoDTensor

from oar_kernels_cpu.kernels import array_module, kernel

xp = array_module(__name__)

# Fluid prints the C++ type id's short name
_TYPE_CODES = {
    "float32": "f",
    "float64": "d",
    "float16": "float16",
    "int32": "i",
    "int64": "l",
    "bool": "b",
    "int8": "a",
    "uint8": "h",
    "int16": "s",
}
_COUNT = "@printed@"  # times this op printed, kept in the plan's own copy of the attrs


def _should_print(attrs) -> bool:
    phase = attrs["print_phase"]
    if attrs["is_forward"]:
        return phase in ("FORWARD", "BOTH")
    return phase in ("BACKWARD", "BOTH")


def format_tensor(arr: xp.ndarray, attrs, name: str, lod=None) -> str:
    lines = [f"{int(time.time())}\t{attrs['message']}\tThe place is:CPUPlace"]
    if attrs["print_tensor_name"]:
        lines.append(f"Tensor[{name}]")
    if attrs["print_tensor_lod"] and lod:
        lines.append(
            "\tlod: {"
            + "".join("{" + ",".join(str(o) for o in level) + ",}" for level in lod)
            + "}"
        )
    if attrs["print_tensor_shape"]:
        lines.append("\tshape: [" + "".join(f"{d}," for d in arr.shape) + "]")
    if attrs["print_tensor_type"]:
        lines.append(f"\tdtype: {_TYPE_CODES.get(arr.dtype.name, arr.dtype.name)}")
    flat = arr.reshape(-1)
    n = flat.size if attrs["summarize"] < 0 else min(flat.size, attrs["summarize"])
    values = flat[:n].tolist()
    lines.append(
        "\tdata: " + "".join(f"{v:g}," if isinstance(v, float) else f"{v}," for v in values)
    )
    return "\n".join(lines)


@kernel("print", None, lod=True, generic=False)  # formats and prints host data
def print_(inputs, attrs):
    x = inputs["In"]
    if _should_print(attrs):
        count = attrs.get(_COUNT, 0)
        if attrs["first_n"] < 0 or count < attrs["first_n"]:
            attrs[_COUNT] = count + 1
            arr = xp.asarray(x._array if isinstance(x, LoDTensor) else x)
            lod = x._lod if isinstance(x, LoDTensor) else None
            print(
                format_tensor(arr, attrs, attrs.get("op_print_var", "?"), lod),
                file=sys.stdout,
                flush=True,
            )
    return {"Out": x}

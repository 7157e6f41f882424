"""``print``: prints a tensor when the program runs and passes it through (Fluid's slots and attrs).

The gradient is another ``print`` (``is_forward=False``) that passes the
output gradient through to the input and prints it when ``print_phase`` is
BACKWARD or BOTH. The printed variable's name travels in the framework
annotation ``op_print_var`` (kernels do not see op descriptions).
"""

from __future__ import annotations

from oar.registry import Attr, GradOpDesc, OpDef

PHASES = ("FORWARD", "BACKWARD", "BOTH")


def _phase(v):
    return None if v in PHASES else f"must be one of {list(PHASES)}"


def _grad_print(g):
    if not g.wants("In"):
        return []
    attrs = dict(g.attrs)
    attrs["is_forward"] = False
    attrs["op_print_var"] = g.output_grad("Out")[0]
    return [GradOpDesc("print", {"In": g.output_grad("Out")}, {"Out": g.input_grad("In")}, attrs)]


def register(registry) -> None:
    registry.register_op(
        OpDef(
            "print",
            ["In"],
            ["Out"],
            {
                "first_n": Attr(int, -1),
                "message": Attr(str, ""),
                "summarize": Attr(int, 20),
                "print_tensor_name": Attr(bool, True),
                "print_tensor_type": Attr(bool, True),
                "print_tensor_shape": Attr(bool, True),
                "print_tensor_lod": Attr(bool, True),
                "print_phase": Attr(str, "BOTH", _phase),
                "is_forward": Attr(bool, True),
            },
            infer_shape=lambda ins, a: {"Out": ins["In"]},
            grad=_grad_print,
            share_lod=(("In", "Out"),),
            doc="print In at run time (message, first elements, name/type/shape/lod) and pass it through",
        )
    )

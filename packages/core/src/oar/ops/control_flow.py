"""Control flow over sub-blocks: ``while``, ``conditional_block``, ``is_empty``, and the
``split_lod_tensor`` / ``merge_lod_tensor`` pair behind ``IfElse``.

``while`` and ``conditional_block`` hold their body as a ``sub_block`` attr (the
index of a block of the same program). The executor runs them itself (host
ops, ``oar.executor.block_ops``): they have no device kernels. ``X`` /
``Input`` list the enclosing blocks' variables the body reads, ``Out`` those it
writes; ``StepScopes`` / ``Scope`` carry what a pass saved for the backward.
Their grad makers live in ``oar.executor.control_flow_grad``.
"""

from __future__ import annotations

from oar.ops._infer import meta
from oar.registry import REQUIRED, Attr, GradOpDesc, OpDef


def _infer_is_empty(ins, attrs):
    return {"Out": meta([1], "bool")}


def _while_grad(ctx):
    from oar.executor.control_flow_grad import while_grad_maker

    return while_grad_maker(ctx)


def _cond_grad(ctx):
    from oar.executor.control_flow_grad import conditional_block_grad_maker

    return conditional_block_grad_maker(ctx)


def _infer_split(ins, attrs):
    x = ins["X"]
    shape = [-1] + list(x.shape[1:])
    lod = x.lod_level  # a mask per sequence splits whole sequences
    return {"OutTrue": meta(shape, x.dtype, lod), "OutFalse": meta(shape, x.dtype, lod)}


def _infer_merge(ins, attrs):
    t = ins["InTrue"]
    return {"Out": meta([-1] + list(t.shape[1:]), t.dtype, t.lod_level)}


def _split_grad(ctx):
    return [
        GradOpDesc(
            "merge_lod_tensor",
            {
                "X": ctx.input("X"),
                "Mask": ctx.input("Mask"),
                "InTrue": ctx.output_grad("OutTrue"),
                "InFalse": ctx.output_grad("OutFalse"),
            },
            {"Out": ctx.input_grad("X")},
            {"level": ctx.attrs.get("level", 0)},
        )
    ]


def _merge_grad(ctx):
    # a split of Out@GRAD, with X (the merge's LoD source) telling whole sequences apart
    return [
        GradOpDesc(
            "merge_lod_tensor_grad",
            {"X": ctx.input("X"), "Mask": ctx.input("Mask"), "Out@GRAD": ctx.output_grad("Out")},
            {"InTrue@GRAD": ctx.input_grad("InTrue"), "InFalse@GRAD": ctx.input_grad("InFalse")},
            {"level": ctx.attrs.get("level", 0)},
        )
    ]


def register_ifelse(registry) -> None:
    registry.register_op(
        OpDef(
            "split_lod_tensor",
            ["X", "Mask"],
            ["OutTrue", "OutFalse"],
            {"level": Attr(int, 0)},
            infer_shape=_infer_split,
            grad=_split_grad,
            kernel_dtype="X",
        )
    )
    registry.register_op(
        OpDef(
            "merge_lod_tensor",
            ["X", "Mask", "InTrue", "InFalse"],
            ["Out"],
            {"level": Attr(int, 0)},
            infer_shape=_infer_merge,
            grad=_merge_grad,
            kernel_dtype="InTrue",
        )
    )
    registry.register_op(
        OpDef(
            "merge_lod_tensor_grad",
            ["X", "Mask", "Out@GRAD"],
            ["InTrue@GRAD", "InFalse@GRAD"],
            {"level": Attr(int, 0)},
            kernel_dtype="Out@GRAD",
        )
    )


def register(registry) -> None:
    register_ifelse(registry)
    registry.register_op(
        OpDef(
            "while",
            ["X*?", "Condition"],
            ["Out*?", "StepScopes?"],
            {"sub_block": Attr(int, REQUIRED), "is_test": Attr(bool, False)},
            grad=_while_grad,
            doc="Run block `sub_block` while Condition (a one-element bool) holds.",
        )
    )
    registry.register_op(
        OpDef(
            "conditional_block",
            ["Cond*", "Input*?"],
            ["Out*?", "Scope?"],
            {
                "sub_block": Attr(int, REQUIRED),
                "is_scalar_condition": Attr(bool, False),
                "is_test": Attr(bool, False),
            },
            grad=_cond_grad,
            doc="Run block `sub_block` once if Cond holds (scalar) or all Cond are non-empty.",
        )
    )
    grad_attrs = {
        "sub_block": Attr(int, REQUIRED),
        "carry": Attr(list, []),
        "accumulate": Attr(list, []),
        "arrays": Attr(list, []),
        "keep": Attr(list, []),
    }
    for fwd in ("while", "conditional_block"):
        registry.register_op(
            OpDef(
                fwd + "_grad",
                ["X*?", "Out@GRAD*?", "StepScopes"],
                ["X@GRAD*?"],
                dict(grad_attrs),
                doc=f"Run the grad block of a '{fwd}' once per saved pass, newest first.",
            )
        )
    registry.register_op(OpDef("is_empty", ["X"], ["Out"], {}, infer_shape=_infer_is_empty))

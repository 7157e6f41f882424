"""Gradients through ``while`` and ``conditional_block`` (placeholder until the backward lands)."""

from __future__ import annotations

from oar.errors import OarError


def while_grad_maker(ctx):
    raise OarError("the gradient through a While loop is not supported yet", op="while")


def conditional_block_grad_maker(ctx):
    raise OarError(
        "the gradient through a conditional block is not supported yet", op="conditional_block"
    )

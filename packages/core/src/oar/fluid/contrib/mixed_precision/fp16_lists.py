"""``AutoMixedPrecisionLists``: which ops may compute in float16 (white), must not (black),
or follow their inputs (gray), with the user's additions."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["AutoMixedPrecisionLists"]

WHITE = {"conv2d", "matmul", "mul"}
BLACK = {
    "exp",
    "square",
    "log",
    "mean",
    "sum",
    "cos_sim",
    "softmax",
    "softmax_with_cross_entropy",
    "sigmoid_cross_entropy_with_logits",
    "cross_entropy",
    "cross_entropy2",
}
GRAY = {
    "elementwise_add",
    "elementwise_sub",
    "elementwise_mul",
    "elementwise_div",
    "elementwise_max",
    "elementwise_min",
    "elementwise_pow",
    "batch_norm",
    "tanh",
    "sigmoid",
    "lookup_table",
    "top_k",
    "pool2d",
    "pool3d",
    "dropout",
    "relu",
    "relu6",
    "leaky_relu",
    "soft_relu",
    "flatten2",
    "stack",
    "unstack",
    "uniform_random_batch_size_like",
    "gaussian_random",
    "gaussian_random_batch_size_like",
    "slice",
    "rank",
    "scale",
    "transpose2",
    "reshape2",
    "gather",
    "fill_constant",
    "get_tensor_from_selected_rows",
    "sign",
    "cast",
}


class AutoMixedPrecisionLists:
    """The op lists, with ``custom_white_list`` / ``custom_black_list`` moved over."""

    def __init__(
        self,
        custom_white_list: Iterable[str] | None = None,
        custom_black_list: Iterable[str] | None = None,
    ) -> None:
        self.white_list = set(WHITE)
        self.black_list = set(BLACK)
        self.gray_list = set(GRAY)
        white = set(custom_white_list or ())
        black = set(custom_black_list or ())
        both = white & black
        if both:
            raise ValueError(f"AutoMixedPrecisionLists: {sorted(both)} in both custom lists")
        for op in white:
            self.black_list.discard(op)
            self.gray_list.discard(op)
            self.white_list.add(op)
        for op in black:
            self.white_list.discard(op)
            self.gray_list.discard(op)
            self.black_list.add(op)

"""``fluid.nets``: small compositions of layers that Fluid ships ready-made.

Each builds exactly the op sequence Fluid 1.8 builds, from the public layers.
"""

from __future__ import annotations

from typing import Any

from oar import layers
from oar.errors import ArgumentError, ArgumentTypeError, ShapeError

__all__ = [
    "simple_img_conv_pool",
    "img_conv_group",
    "sequence_conv_pool",
    "glu",
    "scaled_dot_product_attention",
]


def simple_img_conv_pool(
    input: Any,
    num_filters: int,
    filter_size: Any,
    pool_size: Any,
    pool_stride: Any,
    pool_padding: Any = 0,
    pool_type: str = "max",
    global_pooling: bool = False,
    conv_stride: Any = 1,
    conv_padding: Any = 0,
    conv_dilation: Any = 1,
    conv_groups: int = 1,
    param_attr: Any = None,
    bias_attr: Any = None,
    act: Any = None,
    use_cudnn: bool = True,
) -> Any:
    """conv2d (with bias and ``act``) followed by pool2d: the block of the classic MNIST CNN."""
    conv_out = layers.conv2d(
        input=input,
        num_filters=num_filters,
        filter_size=filter_size,
        stride=conv_stride,
        padding=conv_padding,
        dilation=conv_dilation,
        groups=conv_groups,
        param_attr=param_attr,
        bias_attr=bias_attr,
        act=act,
        use_cudnn=use_cudnn,
    )
    return layers.pool2d(
        input=conv_out,
        pool_size=pool_size,
        pool_type=pool_type,
        pool_stride=pool_stride,
        pool_padding=pool_padding,
        global_pooling=global_pooling,
        use_cudnn=use_cudnn,
    )


def _per_conv(name: str, value: Any, n: int) -> list:
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise ArgumentError(
                "img_conv_group", f"{name} has {len(value)} entries but conv_num_filter has {n}"
            )
        return list(value)
    return [value] * n


def img_conv_group(
    input: Any,
    conv_num_filter: Any,
    pool_size: Any,
    conv_padding: Any = 1,
    conv_filter_size: Any = 3,
    conv_act: Any = None,
    param_attr: Any = None,
    conv_with_batchnorm: Any = False,
    conv_batchnorm_drop_rate: Any = 0.0,
    pool_stride: Any = 1,
    pool_type: str = "max",
    use_cudnn: bool = True,
) -> Any:
    """A VGG block: one conv2d per entry of ``conv_num_filter`` (each optionally batch-normed and
    dropped out), then one pool2d. Scalar arguments apply to every conv, lists give one per conv.
    """
    if not isinstance(conv_num_filter, (list, tuple)):
        raise ArgumentTypeError(
            "img_conv_group",
            f"conv_num_filter must be a list or tuple, given {type(conv_num_filter).__name__}",
        )
    n = len(conv_num_filter)
    paddings = _per_conv("conv_padding", conv_padding, n)
    sizes = _per_conv("conv_filter_size", conv_filter_size, n)
    attrs = _per_conv("param_attr", param_attr, n)
    with_bn = _per_conv("conv_with_batchnorm", conv_with_batchnorm, n)
    drop = _per_conv("conv_batchnorm_drop_rate", conv_batchnorm_drop_rate, n)
    tmp = input
    for i in range(n):
        tmp = layers.conv2d(
            input=tmp,
            num_filters=conv_num_filter[i],
            filter_size=sizes[i],
            padding=paddings[i],
            param_attr=attrs[i],
            act=None if with_bn[i] else conv_act,
            use_cudnn=use_cudnn,
        )
        if with_bn[i]:
            tmp = layers.batch_norm(input=tmp, act=conv_act)
            if abs(drop[i]) > 1e-5:
                tmp = layers.dropout(x=tmp, dropout_prob=drop[i])
    return layers.pool2d(
        input=tmp,
        pool_size=pool_size,
        pool_type=pool_type,
        pool_stride=pool_stride,
        use_cudnn=use_cudnn,
    )


def sequence_conv_pool(
    input: Any,
    num_filters: int,
    filter_size: int,
    param_attr: Any = None,
    act: Any = "sigmoid",
    pool_type: str = "max",
    bias_attr: Any = None,
) -> Any:
    """``sequence_conv`` then ``sequence_pool``: one feature vector per sequence (the text
    CNN of Fluid's understand_sentiment model)."""
    conv = layers.sequence_conv(
        input=input,
        num_filters=num_filters,
        filter_size=filter_size,
        param_attr=param_attr,
        bias_attr=bias_attr,
        act=act,
    )
    return layers.sequence_pool(input=conv, pool_type=pool_type)


def glu(input: Any, dim: int = -1) -> Any:
    """Gated linear unit: split ``input`` in two halves along ``dim``, return ``a * sigmoid(b)``."""
    rank = len(input.shape)
    if not isinstance(dim, int) or not -rank <= dim < rank:
        raise ShapeError.in_layer(
            "glu",
            f"dim must be an int in [-{rank}, {rank}) for input '{input.name}' "
            f"(shape {list(input.shape)}), given {dim!r}",
        )
    size = input.shape[dim]
    if size >= 0 and size % 2:
        raise ShapeError.in_layer(
            "glu",
            f"dim {dim} of input '{input.name}' (shape {list(input.shape)}) must be even to "
            f"split in two, given {size}",
        )
    a, b = layers.split(input, num_or_sections=2, dim=dim)
    return layers.elementwise_mul(x=a, y=layers.sigmoid(x=b))


def scaled_dot_product_attention(
    queries: Any, keys: Any, values: Any, num_heads: int = 1, dropout_rate: float = 0.0
) -> Any:
    """Multi-head ``softmax(Q K^T / sqrt(d)) V`` on [batch, length, hidden] inputs.

    With ``num_heads > 1`` Q, K and V are first projected by fc layers and
    split into heads, as in Fluid; the heads are concatenated back at the end.
    """
    for arg, v in (("queries", queries), ("keys", keys), ("values", values)):
        if len(v.shape) != 3:
            raise ShapeError.in_layer(
                "scaled_dot_product_attention",
                f"{arg} must be 3-D [batch, length, hidden], given shape {list(v.shape)}",
            )
    if queries.shape[-1] != keys.shape[-1]:
        raise ShapeError.in_layer(
            "scaled_dot_product_attention",
            f"the hidden size of queries ({queries.shape[-1]}) and "
            f"keys ({keys.shape[-1]}) must be equal",
        )
    if keys.shape[1] != values.shape[1]:
        raise ShapeError.in_layer(
            "scaled_dot_product_attention",
            f"keys and values must have the same length, given "
            f"{keys.shape[1]} and {values.shape[1]}",
        )
    if not isinstance(num_heads, int) or num_heads <= 0:
        raise ArgumentError(
            "scaled_dot_product_attention", f"num_heads must be a positive int, given {num_heads!r}"
        )
    for arg, v in (("keys", keys), ("values", values)):
        if v.shape[-1] % num_heads:
            raise ShapeError.in_layer(
                "scaled_dot_product_attention",
                f"the hidden size of {arg} ({v.shape[-1]}) must be "
                f"divisible by num_heads={num_heads}",
            )

    def project(x):
        if num_heads == 1:
            return x
        return layers.fc(input=x, size=x.shape[-1], num_flatten_dims=2)

    def split_heads(x):
        if num_heads == 1:
            return x
        hidden = x.shape[-1]
        reshaped = layers.reshape(x=x, shape=list(x.shape[:-1]) + [num_heads, hidden // num_heads])
        return layers.transpose(x=reshaped, perm=[0, 2, 1, 3])

    def combine_heads(x):
        if len(x.shape) == 3:
            return x
        t = layers.transpose(x, perm=[0, 2, 1, 3])
        return layers.reshape(x=t, shape=[t.shape[0], t.shape[1], t.shape[2] * t.shape[3]])

    projected = [
        project(x) for x in (queries, keys, values)
    ]  # all projections first, as Fluid orders them
    q, k, v = (split_heads(x) for x in projected)
    scaled_q = layers.scale(x=q, scale=(keys.shape[-1] // num_heads) ** -0.5)
    product = layers.matmul(x=scaled_q, y=k, transpose_y=True)
    weights = layers.reshape(
        x=layers.softmax(layers.reshape(x=product, shape=[-1, product.shape[-1]])),
        shape=list(product.shape),
    )
    if dropout_rate:
        weights = layers.dropout(weights, dropout_prob=dropout_rate, is_test=False)
    return combine_heads(layers.matmul(weights, v))


# every public net's argument errors name the user's line, like the layers'
from oar.layers._user_line import wrap_module_functions as _wrap  # noqa: E402

_wrap(globals(), [__import__("sys").modules[__name__]])

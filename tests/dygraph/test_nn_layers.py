"""fluid.dygraph.nn layers: Fluid 1.8 arguments, private attrs, results against numpy/torch, gradients."""

import numpy as np
import pytest
from oar import fluid
from oar.plugins import registries

dg = fluid.dygraph


def _needs(*ops):
    missing = [o for o in ops if o not in registries().ops]
    return pytest.mark.skipif(bool(missing), reason=f"ops not installed yet: {missing}")


def _x(*shape, seed=0):
    return np.random.default_rng(seed).uniform(-1, 1, shape).astype("float32")


def _backprop(out):
    loss = fluid.layers.mean(out * out)
    loss.backward()


def test_linear_matches_numpy_and_checks_input():
    with dg.guard():
        lin = dg.Linear(3, 2, act="relu")
        assert lin._act == "relu" and lin.weight.shape == [3, 2] and lin.bias.shape == [2]
        assert lin.weight.name == "linear_0.w_0" and lin.bias.name == "linear_0.b_0"
        x = _x(4, 3)
        out = lin(dg.to_variable(x))
        np.testing.assert_allclose(
            out.numpy(), np.maximum(x @ lin.weight.numpy() + lin.bias.numpy(), 0), rtol=1e-6
        )
        _backprop(out)
        assert lin.weight.gradient().shape == (3, 2)
        with pytest.raises(ValueError, match="input_dim"):
            lin(dg.to_variable(_x(4, 5)))
        with pytest.raises(ValueError, match="unknown activation"):
            dg.Linear(3, 2, act="nope")


def test_prelu_modes():
    with dg.guard():
        x = _x(2, 3, 2, 2)
        for mode, kw, shape in (
            ("all", {}, [1]),
            ("channel", {"channel": 3}, [1, 3, 1, 1]),
            ("element", {"input_shape": [2, 3, 2, 2]}, [1, 3, 2, 2]),
        ):
            with fluid.unique_name.guard():
                layer = dg.PRelu(mode, **kw)
            assert layer.weight.shape == shape
            assert layer.weight.name == "prelu_0.w_0"  # Fluid 1.8.5's name
            out = layer(dg.to_variable(x))
            np.testing.assert_allclose(out.numpy(), np.where(x > 0, x, 0.25 * x), rtol=1e-6)
            _backprop(out)
            assert layer.weight.gradient().shape == tuple(shape)


@_needs("conv2d")
def test_conv2d_matches_torch():
    torch = pytest.importorskip("torch")
    with dg.guard():
        conv = dg.Conv2D(
            num_channels=2, num_filters=3, filter_size=3, stride=2, padding=1, act="relu"
        )
        assert conv._padding == [1, 1] and conv._stride == [2, 2] and conv._act == "relu"
        x = _x(2, 2, 7, 7)
        out = conv(dg.to_variable(x))
        ref = torch.relu(
            torch.nn.functional.conv2d(
                torch.from_numpy(x),
                torch.from_numpy(conv.weight.numpy()),
                torch.from_numpy(conv.bias.numpy()),
                stride=2,
                padding=1,
            )
        )
        np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-5, atol=1e-6)
        _backprop(out)
        assert conv.weight.gradient().shape == (3, 2, 3, 3)
        with pytest.raises(ValueError, match="channels"):
            conv(dg.to_variable(_x(2, 3, 7, 7)))


@_needs("conv2d_transpose")
def test_conv2d_transpose_matches_torch():
    torch = pytest.importorskip("torch")
    with dg.guard():
        layer = dg.Conv2DTranspose(
            num_channels=2, num_filters=3, filter_size=3, stride=2, padding=1
        )
        x = _x(1, 2, 4, 4)
        out = layer(dg.to_variable(x))
        ref = torch.nn.functional.conv_transpose2d(
            torch.from_numpy(x),
            torch.from_numpy(layer.weight.numpy()),
            torch.from_numpy(layer.bias.numpy()),
            stride=2,
            padding=1,
        )
        np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-5, atol=1e-6)


@_needs("pool2d")
def test_pool2d_max_and_avg():
    with dg.guard():
        x = _x(1, 2, 4, 4)
        mx = dg.Pool2D(pool_size=2, pool_stride=2, pool_type="max")
        assert mx._pool_type == "max" and mx._pool_size == [2, 2] and mx._pool_stride == [2, 2]
        ref = x.reshape(1, 2, 2, 2, 2, 2).max(axis=(3, 5))
        np.testing.assert_allclose(mx(dg.to_variable(x)).numpy(), ref)
        avg = dg.Pool2D(pool_size=2, pool_stride=2, pool_type="avg")
        np.testing.assert_allclose(
            avg(dg.to_variable(x)).numpy(), x.reshape(1, 2, 2, 2, 2, 2).mean(axis=(3, 5)), rtol=1e-6
        )
        with pytest.raises(ValueError, match="pool_type"):
            dg.Pool2D(pool_size=2, pool_type="min")


@_needs("batch_norm")
def test_batch_norm_train_and_eval():
    with dg.guard():
        bn = dg.BatchNorm(3, momentum=0.5)
        x = _x(4, 3, 2, 2) * 3 + 1
        out = bn(dg.to_variable(x))
        mean, var = x.mean(axis=(0, 2, 3)), x.var(axis=(0, 2, 3))
        ref = (x - mean.reshape(1, 3, 1, 1)) / np.sqrt(var.reshape(1, 3, 1, 1) + 1e-5)
        np.testing.assert_allclose(out.numpy(), ref, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(bn._mean.numpy(), 0.5 * mean, rtol=1e-5)
        assert "_mean" in dict(bn.named_parameters()) or len(bn.state_dict()) == 4
        _backprop(out)
        assert bn.weight.gradient().shape == (3,) and bn._mean.gradient() is None
        bn.eval()
        out2 = bn(dg.to_variable(x))
        rm, rv = bn._mean.numpy().reshape(1, 3, 1, 1), bn._variance.numpy().reshape(1, 3, 1, 1)
        np.testing.assert_allclose(
            out2.numpy(), (x - rm) / np.sqrt(rv + 1e-5), rtol=1e-4, atol=1e-5
        )


@_needs("layer_norm")
def test_layer_norm():
    with dg.guard():
        ln = dg.LayerNorm([4])
        x = _x(3, 4)
        out = ln(dg.to_variable(x))
        ref = (x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + 1e-5)
        np.testing.assert_allclose(out.numpy(), ref, rtol=1e-4, atol=1e-5)
        _backprop(out)
        assert ln.weight.gradient().shape == (4,)


@_needs("dropout")
def test_dropout_train_and_eval():
    with dg.guard():
        drop = dg.Dropout(p=0.5)
        x = np.ones((50, 20), "float32")
        out = drop(dg.to_variable(x)).numpy()
        assert 0.3 < (out == 0).mean() < 0.7
        drop.eval()
        np.testing.assert_allclose(drop(dg.to_variable(x)).numpy(), x * 0.5)


@_needs("lookup_table_v2")
def test_embedding():
    with dg.guard():
        emb = dg.Embedding(size=[10, 3])
        ids = np.array([[1], [4], [1]], "int64")
        out = emb(dg.to_variable(ids))
        assert out.shape == [3, 1, 3]  # ids.shape + [dim], as Fluid 1.8's dygraph Embedding
        np.testing.assert_allclose(out.numpy().reshape(3, 3), emb.weight.numpy()[[1, 4, 1]])
        _backprop(out)
        g = emb.weight.gradient()
        assert g.shape == (10, 3) and np.count_nonzero(g.any(axis=1)) == 2


@_needs("gru_unit")
def test_gru_unit_shapes_and_gradient():
    with dg.guard():
        gru = dg.GRUUnit(size=6)
        x, h = dg.to_variable(_x(2, 6)), dg.to_variable(_x(2, 2))
        hid, reset, gate = gru(x, h)
        assert hid.shape == [2, 2] and gate.shape == [2, 6]
        _backprop(hid)
        assert gru.weight.gradient().shape == (2, 6)


def test_containers_in_state_dict():
    with dg.guard():
        model = dg.Sequential(("first", dg.Linear(2, 3)), ("second", dg.Linear(3, 1)))
        assert list(model.state_dict()) == [
            "first.weight",
            "first.bias",
            "second.weight",
            "second.bias",
        ]
        assert model["second"] is model[1]


@_needs("lookup_table_v2")
def test_sparse_embedding_updates_only_looked_up_rows():
    with dg.guard():
        emb = dg.Embedding(size=[10, 3], is_sparse=True)
        ids = dg.to_variable(np.array([[1], [4], [1]], "int64"))
        for opt_cls in (fluid.optimizer.SGD, fluid.optimizer.Adam):
            opt = opt_cls(learning_rate=0.1, parameter_list=emb.parameters())
            w0 = emb.weight.numpy()
            loss = fluid.layers.mean(emb(ids) * 2.0)
            loss.backward()
            assert type(emb.weight._grad).__name__ == "SelectedRows"
            assert emb.weight.gradient().shape == (10, 3)
            opt.minimize(loss)
            emb.clear_gradients()
            changed = np.where((emb.weight.numpy() != w0).any(axis=1))[0].tolist()
            assert changed == [1, 4], opt_cls.__name__
        # with weight decay the gradient is densified (every row decays), as in Fluid
        opt = fluid.optimizer.SGD(
            learning_rate=0.1,
            parameter_list=emb.parameters(),
            regularization=fluid.regularizer.L2Decay(0.01),
        )
        w0 = emb.weight.numpy()
        loss = fluid.layers.mean(emb(ids))
        loss.backward()
        opt.minimize(loss)
        assert (emb.weight.numpy() != w0).any(axis=1).all()

"""Seed 000: train two networks at once — the fc GAN, D and G in two programs sharing D's parameters by name.

The seed's code runs unchanged apart from the import; each optimizer's
``parameter_list`` restricts it to one network, so a D step leaves G unchanged
and a G step (through D) leaves D unchanged.
"""

import numpy
import pytest
from oar import fluid
from oar.plugins import registries

NOISE_SIZE = 16
LEARNING_RATE = 2e-4


def D(x):
    hidden = fluid.layers.fc(input=x, size=200, act='relu', param_attr='D.w1', bias_attr='D.b1')
    logits = fluid.layers.fc(input=hidden, size=1, act=None, param_attr='D.w2', bias_attr='D.b2')
    return logits


def G(x):
    hidden = fluid.layers.fc(input=x, size=200, act='relu', param_attr='G.w1', bias_attr='G.b1')
    img = fluid.layers.fc(input=hidden, size=28 * 28, act='tanh', param_attr='G.w2', bias_attr='G.b2')
    return img


def params(scope, prefix):
    names = [f"{prefix}.{k}" for k in ("w1", "b1", "w2", "b2")]
    return {n: numpy.array(scope.find_var(n).value) for n in names}


def test_gan_two_programs_share_d_and_update_only_their_own_parameters():
    if "sigmoid_cross_entropy_with_logits" not in registries().ops:
        pytest.skip("op 'sigmoid_cross_entropy_with_logits' is not defined yet (nn-ops helper)")
    startup_program = fluid.Program()
    d_program = fluid.Program()
    dg_program = fluid.Program()

    with fluid.program_guard(d_program, startup_program):
        img = fluid.layers.data(name='img', shape=[784], dtype='float32')
        d_loss = fluid.layers.sigmoid_cross_entropy_with_logits(
            x=D(img), label=fluid.layers.data(name='label', shape=[1], dtype='float32'))
        d_loss = fluid.layers.mean(d_loss)

    with fluid.program_guard(dg_program, startup_program):
        noise = fluid.layers.data(name='noise', shape=[NOISE_SIZE], dtype='float32')
        g_img = G(x=noise)
        g_program = dg_program.clone()
        dg_loss = fluid.layers.sigmoid_cross_entropy_with_logits(
            x=D(g_img),
            label=fluid.layers.fill_constant_batch_size_like(input=noise, dtype='float32', shape=[-1, 1],
                                                             value=1.0))
        dg_loss = fluid.layers.mean(dg_loss)

    opt = fluid.optimizer.Adam(learning_rate=LEARNING_RATE)
    opt.minimize(loss=d_loss, startup_program=startup_program)
    opt.minimize(loss=dg_loss, startup_program=startup_program,
                 parameter_list=[p.name for p in g_program.global_block().all_parameters()])
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup_program)
    scope = fluid.global_scope()
    rng = numpy.random.default_rng(0)
    num_true = 8
    d_losses, g_losses = [], []
    for _ in range(6):
        n = rng.uniform(-1.0, 1.0, [num_true, NOISE_SIZE]).astype('float32')
        generated_img = exe.run(g_program, feed={'noise': n}, fetch_list={g_img})[0]
        assert generated_img.shape == (num_true, 784) and numpy.abs(generated_img).max() <= 1.0
        real_data = (rng.uniform(0, 1, (num_true, 784)) > 0.5).astype('float32')
        total_data = numpy.concatenate([real_data, generated_img])
        total_label = numpy.concatenate([numpy.ones(shape=[real_data.shape[0], 1], dtype='float32'),
                                         numpy.zeros(shape=[real_data.shape[0], 1], dtype='float32')])
        g_before, d_before = params(scope, "G"), params(scope, "D")
        d_loss_np = exe.run(d_program, feed={'img': total_data, 'label': total_label}, fetch_list={d_loss})[0]
        g_mid, d_mid = params(scope, "G"), params(scope, "D")
        for k in g_before:
            numpy.testing.assert_array_equal(g_mid[k], g_before[k])  # the D step leaves G alone
        assert all(numpy.abs(d_mid[k] - d_before[k]).max() > 0 for k in d_mid)
        n = rng.uniform(-1.0, 1.0, [2 * num_true, NOISE_SIZE]).astype('float32')
        dg_loss_np = exe.run(dg_program, feed={'noise': n}, fetch_list={dg_loss})[0]
        g_after, d_after = params(scope, "G"), params(scope, "D")
        for k in d_mid:
            numpy.testing.assert_array_equal(d_after[k], d_mid[k])  # the G step leaves D alone
        assert all(numpy.abs(g_after[k] - g_mid[k]).max() > 0 for k in g_after)
        d_losses.append(float(d_loss_np[0]))
        g_losses.append(float(dg_loss_np[0]))
    assert all(numpy.isfinite(d_losses + g_losses))
    # D's parameters live once: both programs name the same variables
    assert {p.name for p in d_program.global_block().all_parameters()} == {"D.w1", "D.b1", "D.w2", "D.b2"}
    assert {"D.w1", "G.w1"} <= {p.name for p in dg_program.global_block().all_parameters()}
    updated = {op.input("Param")[0] for op in dg_program.global_block().ops if op.type == "adam"}
    assert updated == {"G.w1", "G.b1", "G.w2", "G.b2"}

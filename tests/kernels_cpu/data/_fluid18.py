"""Helpers of the golden-data generators; they run under Fluid 1.8.5 and under oar alike.

``data_vars`` declares a ``build``'s inputs. A generator's ``__main__`` block calls
``write_golden(__file__, build, NAMES)``: the script's
``build(fluid)`` is run once with Fluid 1.8.5 and each fetch is saved under its name in the
``.npz`` next to the script (with ``lod``, also ``<name>_lod``: the last LoD level's offsets).
"""

import os

import numpy as np


def data_vars(fluid, feed, lods):
    """One ``fluid.data`` per feed array; those named in ``lods`` get LoD level 1 and an
    unknown first dimension, and become LoD tensors in ``feed`` (lengths ``lods[name]``)."""
    v = {}
    for k, a in feed.items():
        lod = k in lods
        shape = [-1] + list(a.shape[1:]) if lod else list(a.shape)
        v[k] = fluid.data(k, shape, a.dtype.name, lod_level=int(lod))
    for k, lengths in lods.items():
        feed[k] = fluid.create_lod_tensor(feed[k], [lengths], fluid.CPUPlace())
    return v


def write_golden(script_file, build, names, npz_name=None, lod=False, setup=None):
    import paddle.fluid as fluid

    main, startup, feed, outs = build(fluid)
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup)
    if setup is not None:
        setup(fluid, main, fluid.global_scope())
    res = exe.run(main, feed=feed, fetch_list=outs, return_numpy=False)
    data = {}
    for name, t in zip(names, res):
        data[name] = np.array(t)
        if lod:
            data[name + "_lod"] = np.array(t.lod()[-1] if t.lod() else [], "int64")
    here = os.path.dirname(os.path.abspath(script_file))
    npz_name = npz_name or os.path.basename(script_file)[: -len(".py")] + ".npz"
    np.savez(os.path.join(here, npz_name), **data)

"""The writing half of the golden-data generators, run under Fluid 1.8.5.

A generator's ``__main__`` block calls ``write_golden(__file__, build, NAMES)``: the script's
``build(fluid)`` is run once with Fluid 1.8.5 and each fetch is saved under its name in the
``.npz`` next to the script (with ``lod``, also ``<name>_lod``: the last LoD level's offsets).
"""

import os

import numpy as np


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

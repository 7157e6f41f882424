"""LoD passes through a non-LoD op anew in every iteration of a While loop (the body's
variables keep the previous iteration's LoD otherwise)."""

import numpy as np
from oar import fluid


def test_share_lod_is_refreshed_in_each_loop_iteration():
    L = fluid.layers
    main, start = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, start):
        a = fluid.data("a", [None, 1], lod_level=1)
        b = fluid.data("b", [None, 1], lod_level=1)
        i = L.zeros([1], "int64")
        n = L.fill_constant([1], "int64", 2)
        src, dst = L.create_array("float32"), L.create_array("float32")
        L.array_write(a, i, src)
        L.array_write(b, L.fill_constant([1], "int64", 1), src)
        cond = L.less_than(i, n)
        loop = L.While(cond)
        with loop.block():
            x = L.array_read(src, i)
            y = L.scale(x, 2.0)  # a kernel without LoD: Out takes X's LoD
            L.array_write(y, i, dst)
            L.increment(i)
            L.less_than(i, n, cond=cond)
        first = L.array_read(dst, L.fill_constant([1], "int64", 0))
        second = L.array_read(dst, L.fill_constant([1], "int64", 1))
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(start)
    place = fluid.CPUPlace()
    feed = {
        "a": fluid.create_lod_tensor(np.ones((3, 1), "float32"), [[1, 2]], place),
        "b": fluid.create_lod_tensor(np.ones((4, 1), "float32"), [[3, 1]], place),
    }
    r1, r2 = exe.run(main, feed=feed, fetch_list=[first, second], return_numpy=False)
    assert r1.lod() == [[0, 1, 3]]
    assert r2.lod() == [[0, 3, 4]]
    np.testing.assert_array_equal(np.array(r2), np.full((4, 1), 2.0))

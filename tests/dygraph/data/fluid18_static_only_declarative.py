"""Golden facts: ``fluid.dygraph.nn.RowConv`` / ``SequenceConv`` (static-program layers) inside
a Layer whose ``forward`` is ``@declarative`` (dygraph-to-static).

The same ``probe()`` runs under oar (the module imports ``paddle.fluid`` where it exists, else
``oar.fluid``) in tests/dygraph/test_static_only_declarative.py. Run
this file with the Fluid 1.8.5 interpreter to rewrite fluid18_static_only_declarative.json next
to it. Per layer: whether building the Layer in dygraph mode is refused; under program_guard,
the plain forward's ops and output on a LoD batch, and what the declarative forward does there
(its ops and output, or the exception's class and first message line).
"""

import json
import os

import numpy as np

try:  # dygraph-to-static reads the module's source: the classes live at module level
    import paddle.fluid as fluid
except ImportError:
    from oar import fluid


class RowConvNet(fluid.dygraph.Layer):
    def __init__(self):
        super().__init__()
        self.inner = fluid.dygraph.nn.RowConv("rc", 2, act="relu")

    @fluid.dygraph.declarative
    def forward(self, x):
        return self.inner(x)


class SequenceConvNet(fluid.dygraph.Layer):
    def __init__(self):
        super().__init__()
        self.inner = fluid.dygraph.nn.SequenceConv("sc", 3)

    @fluid.dygraph.declarative
    def forward(self, x):
        return self.inner(x)


NETS = {"RowConv": RowConvNet, "SequenceConv": SequenceConvNet}


def _run(net_cls, declared):
    prog, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(prog, startup), fluid.unique_name.guard():
        net = net_cls()
        x = fluid.data("x", [None, 3], "float32", lod_level=1)
        out = net(x) if declared else net.inner(x)
        ops = [op.type for op in prog.global_block().ops]
        params = [p.name for p in prog.global_block().all_parameters()]
    scope = fluid.Scope()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup, scope=scope)
    for p in params:
        t = scope.find_var(p).get_tensor()
        shape = np.array(t).shape
        t.set(
            np.linspace(-0.5, 0.5, int(np.prod(shape))).reshape(shape).astype("float32"),
            fluid.CPUPlace(),
        )
    xs = np.linspace(-1.0, 1.0, 15).reshape(5, 3).astype("float32")
    xs = fluid.create_lod_tensor(xs, [[2, 3]], fluid.CPUPlace())
    (got,) = exe.run(prog, feed={"x": xs}, fetch_list=[out], scope=scope, return_numpy=False)
    return {"ops": ops, "out": np.array(got).round(6).tolist()}


def probe():
    facts = {}
    for name, net_cls in sorted(NETS.items()):
        with fluid.dygraph.guard():
            try:
                net_cls()
                refused = False
            except Exception:
                refused = True
        fact = {"refused_in_dygraph": refused, "plain": _run(net_cls, False)}
        try:
            fact["declarative"] = _run(net_cls, True)
        except Exception as exc:
            lines = [ln for ln in str(exc).splitlines() if "Error:" in ln or "error" in ln]
            fact["declarative"] = {"error": type(exc).__name__, "message": (lines or [""])[0]}
        facts[name] = fact
    return facts


def main():
    path = os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "fluid18_static_only_declarative.json"
    )
    with open(path, "w") as fh:
        json.dump(probe(), fh, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()

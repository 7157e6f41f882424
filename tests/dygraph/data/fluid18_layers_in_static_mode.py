"""Golden facts: Fluid 1.8.5's dygraph layers built and called under program_guard (no dygraph.guard).

Run with the Fluid 1.8.5 interpreter: writes fluid18_layers_in_static_mode.json next to this
file (per layer: the parameters the constructor adds to the main program, the startup program's
op count, the output's name and shape after one call on a static variable).
"""

import json
import os

import paddle.fluid as fluid

CASES = {
    "Linear": (lambda: fluid.dygraph.Linear(4, 3, act="relu"), [None, 4], "float32"),
    "Conv2D": (
        lambda: fluid.dygraph.Conv2D(num_channels=2, num_filters=3, filter_size=3, padding=1),
        [None, 2, 5, 5],
        "float32",
    ),
    "Pool2D": (
        lambda: fluid.dygraph.Pool2D(pool_size=2, pool_stride=2),
        [None, 2, 4, 4],
        "float32",
    ),
    "BatchNorm": (lambda: fluid.dygraph.BatchNorm(num_channels=3), [None, 3, 2, 2], "float32"),
    "Embedding": (lambda: fluid.dygraph.Embedding(size=[10, 3]), [None, 1], "int64"),
    "LayerNorm": (lambda: fluid.dygraph.LayerNorm(normalized_shape=[4]), [None, 4], "float32"),
}


def main():
    facts = {}
    for name, (make, shape, dtype) in CASES.items():
        prog, startup = fluid.Program(), fluid.Program()
        with fluid.program_guard(prog, startup), fluid.unique_name.guard():
            layer = make()
            params = [p.name for p in prog.global_block().all_parameters()]
            x = fluid.data(name="x", shape=shape, dtype=dtype)
            out = layer(x)
            facts[name] = {
                "params": params,
                "startup_ops": len(startup.global_block().ops),
                "out_name": out.name,
                "out_shape": list(out.shape),
            }
    path = os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "fluid18_layers_in_static_mode.json"
    )
    with open(path, "w") as fh:
        json.dump(facts, fh, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()

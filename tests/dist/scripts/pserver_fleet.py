"""Fleet's parameter-server API end to end (roles from PaddleCloudRoleMaker's variables).

``OAR_T_STRATEGY`` (sync / async / half_async / geo: GEO-SGD pushing every 3 steps), ``OAR_T_STEPS``, ``OAR_T_SAVE`` (the first
worker saves the whole job there at the end), ``OAR_T_RESUME`` (the pservers start from that
checkpoint), ``OAR_HARNESS_OUT`` (trainer<i>.npz: losses, parameters after the startup
program and at the end).
"""

from __future__ import annotations

import os

import numpy as np
from oar import fluid
from oar.fluid.incubate.fleet.base import role_maker
from oar.fluid.incubate.fleet.parameter_server.distribute_transpiler import fleet
from oar.fluid.incubate.fleet.parameter_server.distribute_transpiler.distributed_strategy import (
    StrategyFactory,
)

strategy = {
    "sync": StrategyFactory.create_sync_strategy,
    "async": StrategyFactory.create_async_strategy,
    "half_async": StrategyFactory.create_half_async_strategy,
    "geo": lambda: StrategyFactory.create_geo_strategy(3),
}[os.environ.get("OAR_T_STRATEGY", "sync")]()
steps = int(os.environ.get("OAR_T_STEPS", "6"))
out = os.environ["OAR_HARNESS_OUT"]

fleet.init(role_maker.PaddleCloudRoleMaker())
x = fluid.layers.data(name="x", shape=[13], dtype="float32")
y = fluid.layers.data(name="y", shape=[1], dtype="float32")
pred = fluid.layers.fc(input=fluid.layers.fc(input=x, size=8, act="tanh"), size=1)
loss = fluid.layers.mean(fluid.layers.square_error_cost(input=pred, label=y))
if fleet.is_worker():
    fluid.memory_optimize(fluid.default_main_program(), skip_grads=True)
fleet.distributed_optimizer(fluid.optimizer.Adam(learning_rate=0.05), strategy).minimize(loss)

if fleet.is_server():
    fleet.init_server(os.environ.get("OAR_T_RESUME") or None)
    fleet.run_server()
else:
    exe = fluid.Executor(fluid.CPUPlace())
    fleet.init_worker()
    exe.run(fleet.startup_program)
    names = [p.name for p in fleet.main_program.global_block().all_parameters()]
    scope = fluid.global_scope()
    rec = {"init/" + n: np.array(scope.find_var(n).get_tensor()) for n in names}
    rng = np.random.RandomState(10 + fleet.worker_index())
    w = np.random.RandomState(0).uniform(-1, 1, (13, 1)).astype("float32")
    losses = []
    for _ in range(steps):
        xb = rng.uniform(-1, 1, (8, 13)).astype("float32")
        (lv,) = exe.run(fleet.main_program, feed={"x": xb, "y": xb.dot(w)}, fetch_list=[loss])
        losses.append(float(lv[0]))
    rec.update({"final/" + n: np.array(scope.find_var(n).get_tensor()) for n in names})
    rec["losses"] = np.array(losses)
    rec["ops"] = np.array([op.type for op in fleet.main_program.global_block().ops])
    np.savez(os.path.join(out, f"trainer{fleet.worker_index()}.npz"), **rec)
    if os.environ.get("OAR_T_SAVE"):
        fleet.save_persistables(exe, os.environ["OAR_T_SAVE"])
    fleet.stop_worker()

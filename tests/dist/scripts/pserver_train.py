"""A small pserver job for the tests: roles and endpoints from the seed's environment variables.

``OAR_T_HIDDEN`` (hidden width; 1300 makes fc_0.w_0 13 x 1300, sliced over 2 pservers),
``OAR_T_SYNC`` (1/0), ``OAR_T_CLIP`` (clip gradients by this global norm), ``OAR_T_STEPS``, ``OAR_T_KILL_AT`` (the last trainer SIGKILLs itself after that step),
``OAR_HARNESS_OUT`` (where trainer<i>.npz goes: losses, initial and final parameters, feeds).
"""

from __future__ import annotations

import os
import signal

import numpy as np
from oar import fluid

role = os.environ["PADDLE_TRAINING_ROLE"]
port = os.environ["PADDLE_PSERVER_PORT"]
eps = ",".join(f"{ip}:{port}" for ip in os.environ["PADDLE_PSERVER_IPS"].split(","))
trainers = int(os.environ["PADDLE_TRAINERS"])
tid = int(os.environ.get("PADDLE_TRAINER_ID", "0"))
hidden = int(os.environ.get("OAR_T_HIDDEN", "8"))
sync = os.environ.get("OAR_T_SYNC", "1") == "1"
steps = int(os.environ.get("OAR_T_STEPS", "20"))
kill_at = int(os.environ.get("OAR_T_KILL_AT", "-1"))
out = os.environ["OAR_HARNESS_OUT"]

x = fluid.layers.data(name="x", shape=[13], dtype="float32")
y = fluid.layers.data(name="y", shape=[1], dtype="float32")
h = fluid.layers.fc(input=x, size=hidden, act="tanh")
pred = fluid.layers.fc(input=h, size=1)
loss = fluid.layers.mean(fluid.layers.square_error_cost(input=pred, label=y))
clip = float(os.environ.get("OAR_T_CLIP", "0"))
grad_clip = fluid.clip.GradientClipByGlobalNorm(clip) if clip else None
fluid.optimizer.SGD(learning_rate=0.05, grad_clip=grad_clip).minimize(loss)

t = fluid.DistributeTranspiler()
t.transpile(trainer_id=tid, pservers=eps, trainers=trainers, sync_mode=sync)
exe = fluid.Executor(fluid.CPUPlace())
if role == "PSERVER":
    current = os.environ["PADDLE_CURRENT_IP"] + ":" + port
    prog = t.get_pserver_program(current)
    exe.run(t.get_startup_program(current, prog))
    exe.run(prog)
    print("pserver done", flush=True)
else:
    main = t.get_trainer_program()
    exe.run(fluid.default_startup_program())
    names = [p.name for p in main.global_block().all_parameters()]
    scope = fluid.global_scope()
    rec = {"init/" + n: np.array(scope.find_var(n).get_tensor()) for n in names}
    rng = np.random.RandomState(10 + tid)
    w = np.random.RandomState(0).uniform(-1, 1, (13, 1)).astype("float32")
    losses = []
    for step in range(steps):
        xb = rng.uniform(-1, 1, (8, 13)).astype("float32")
        yb = xb.dot(w) + 0.3
        rec[f"feed/{step}/x"], rec[f"feed/{step}/y"] = xb, yb
        (lv,) = exe.run(main, feed={"x": xb, "y": yb}, fetch_list=[loss])
        losses.append(float(lv[0]))
        print("step", step, losses[-1], flush=True)
        if step + 1 == kill_at and tid == trainers - 1:
            os.kill(os.getpid(), signal.SIGKILL)
    for n in names:
        rec["final/" + n] = np.array(scope.find_var(n).get_tensor())
    rec["losses"] = np.array(losses)
    rec["ops"] = np.array([op.type for op in main.global_block().ops])
    np.savez(os.path.join(out, f"trainer{tid}.npz"), **rec)
    exe.close()

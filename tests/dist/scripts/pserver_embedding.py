"""A pserver job with a distributed embedding table (``is_distributed=True``), roles from the
seed's environment variables (as ``pserver_train.py``).

``OAR_T_VOCAB`` (the table's dict_size), ``OAR_T_DIM``, ``OAR_T_SYNC`` (1/0), ``OAR_T_STEPS``,
``OAR_T_OPT`` (sgd/adam), ``OAR_T_INIT`` (``array``: a NumpyArrayInitializer drawn from seed 5;
``uniform``: the default initializer), ``OAR_T_IDS`` (``range``: ids in [0, vocab); ``hashed``:
ids from :data:`POOL`, any int64), ``OAR_T_TRACE`` (1: record this process's tracemalloc
peak after building the model), ``OAR_T_SAVE`` (a directory: the trainers call
``fluid.io.save_persistables`` there after step ``OAR_T_SAVE_AT``, default the last),
``OAR_T_LOAD`` (a directory: the pservers resume from it, the trainers start at step
``OAR_T_FIRST``), ``OAR_T_CLIP`` (a global norm to clip the gradients to), ``OAR_T_HALF``
(1: half-async, merging ``CPU_NUM`` steps per send). Batch ``i`` of trainer ``t`` is the
same in every run. Trainers write trainer<i>.npz (losses, feeds, initial and final dense
parameters); pservers write pserver_<ip>.npz (the final values of the variables they hold).
"""

from __future__ import annotations

import os
import tracemalloc

if os.environ.get("OAR_T_TRACE") == "1":
    tracemalloc.start()

import numpy as np
from oar import fluid

env = os.environ.get
vocab = int(env("OAR_T_VOCAB", "50"))
dim = int(env("OAR_T_DIM", "4"))
opt = env("OAR_T_OPT", "sgd")
init = env("OAR_T_INIT", "array")
# ids far apart, negative, at both ends of int64: a hashed table takes any of them
POOL = np.array(
    [10**12 + 7, -5, 2**62, -(2**63), 2**63 - 1, 0, 3, 17, -1, 10**15, 42, 999_999_937]
    + [7 * 10**9 + k for k in range(8)],
    dtype="int64",
)


def initial_table(vocab, dim) -> np.ndarray:
    return np.random.RandomState(5).uniform(-1, 1, (vocab, dim)).astype("float32")


def build(vocab, dim, opt, init, clip=0.0):
    ids = fluid.layers.data(name="ids", shape=[1], dtype="int64")
    y = fluid.layers.data(name="y", shape=[1], dtype="float32")
    if init == "array":
        w_init = fluid.initializer.NumpyArrayInitializer(initial_table(vocab, dim))
    else:
        w_init = fluid.initializer.Uniform(-0.1, 0.1)
    emb = fluid.layers.embedding(
        input=ids,
        size=[vocab, dim],
        is_sparse=True,
        is_distributed=True,
        param_attr=fluid.ParamAttr(name="emb", initializer=w_init),
    )
    pred = fluid.layers.fc(input=emb, size=1)
    loss = fluid.layers.mean(fluid.layers.square_error_cost(input=pred, label=y))
    grad_clip = fluid.clip.GradientClipByGlobalNorm(clip) if clip else None
    if opt == "adam":
        optimizer = fluid.optimizer.Adam(0.05, grad_clip=grad_clip)
    else:
        optimizer = fluid.optimizer.SGD(0.5, grad_clip=grad_clip)
    optimizer.minimize(loss)
    return loss


def batch(tid: int, step: int, vocab: int):
    rng = np.random.RandomState(1000 * tid + step)
    if env("OAR_T_IDS", "range") == "hashed":
        ids = POOL[rng.randint(0, POOL.size, (8, 1))]
    else:
        ids = rng.randint(0, vocab, (8, 1)).astype("int64")
    yb = (np.sin((ids % 1000).astype("float32")) + 0.5).astype("float32")
    return ids, yb


def _peak() -> dict:
    """This process's tracemalloc peak since the model was built (when tracing)."""
    if not tracemalloc.is_tracing():
        return {}
    return {"peak": np.array(tracemalloc.get_traced_memory()[1] - _BASE[0])}


_BASE = [0]


def run_pserver(t, exe, port: str) -> tuple:
    ip = os.environ["PADDLE_CURRENT_IP"]
    current = ip + ":" + port
    prog = t.get_pserver_program(current)
    start = t.get_startup_program(current, prog)
    exe.run(start)
    if env("OAR_T_LOAD"):  # the seed's 多机增量训练: resume the pserver from the checkpoint
        fluid.io.load_persistables(exe, env("OAR_T_LOAD"), start)
    exe.run(prog)
    rec = _peak()
    scope = fluid.global_scope()
    for v in prog.global_block().vars.values():
        if v.persistable and scope.find_var(v.name) is not None:
            rec[v.name] = np.array(scope.find_var(v.name).get_tensor())
    return f"pserver_{ip}", rec


def run_trainer(t, exe, loss, tid: int, steps: int) -> tuple:
    main = t.get_trainer_program()
    exe.run(fluid.default_startup_program())
    scope = fluid.global_scope()
    dense = [p.name for p in main.global_block().all_parameters() if p.name != "emb"]
    rec = {"init/" + n: np.array(scope.find_var(n).get_tensor()) for n in dense}
    rec["emb_held"] = np.array(scope.find_var("emb") is not None)
    first = int(env("OAR_T_FIRST", "0"))
    save_at = int(env("OAR_T_SAVE_AT", str(first + steps - 1)))
    losses = []
    for step in range(first, first + steps):
        ids, yb = batch(tid, step, vocab)
        rec[f"feed/{step - first}/ids"], rec[f"feed/{step - first}/y"] = ids, yb
        (lv,) = exe.run(main, feed={"ids": ids, "y": yb}, fetch_list=[loss])
        losses.append(float(lv[0]))
        print("step", step, losses[-1], flush=True)
        if env("OAR_T_SAVE") and step == save_at:
            # every trainer calls it; the first one writes the job's checkpoint
            fluid.io.save_persistables(exe, env("OAR_T_SAVE"), main)
    rec.update({"final/" + n: np.array(scope.find_var(n).get_tensor()) for n in dense})
    rec["losses"] = np.array(losses)
    rec["ops"] = np.array([op.type for op in main.global_block().ops])
    exe.close()
    rec.update(_peak())
    return f"trainer{tid}", rec


def main() -> None:
    port = os.environ["PADDLE_PSERVER_PORT"]
    eps = ",".join(f"{ip}:{port}" for ip in os.environ["PADDLE_PSERVER_IPS"].split(","))
    tid = int(env("PADDLE_TRAINER_ID", "0"))
    loss = build(vocab, dim, opt, init, float(env("OAR_T_CLIP", "0")))
    config = fluid.DistributeTranspilerConfig()
    config.half_async = env("OAR_T_HALF") == "1"  # merges CPU_NUM steps per send
    t = fluid.DistributeTranspiler(config=config)
    t.transpile(
        trainer_id=tid,
        pservers=eps,
        trainers=int(os.environ["PADDLE_TRAINERS"]),
        sync_mode=env("OAR_T_SYNC", "1") == "1" and not config.half_async,
    )
    exe = fluid.Executor(fluid.CPUPlace())
    if tracemalloc.is_tracing():  # imports and the program objects are not the table
        tracemalloc.reset_peak()
        _BASE[0] = tracemalloc.get_traced_memory()[0]
    if os.environ["PADDLE_TRAINING_ROLE"] == "PSERVER":
        name, rec = run_pserver(t, exe, port)
    else:
        name, rec = run_trainer(t, exe, loss, tid, int(env("OAR_T_STEPS", "10")))
    np.savez(os.path.join(os.environ["OAR_HARNESS_OUT"], name + ".npz"), **rec)
    print(name, "done", flush=True)


if __name__ == "__main__":
    main()

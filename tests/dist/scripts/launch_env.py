"""Record the launcher's per-rank variables; fail or die on request (launch tests).

argv: out_prefix [mode]; mode "raise" makes rank 1 raise, "kill" makes rank 1 SIGKILL
itself while rank 0 waits in an MPI allreduce, "hang" makes rank 1 sleep while rank 0 waits.
"""

import json
import os
import signal
import sys
import time

out, mode = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else "")
keys = [
    "PADDLE_TRAINER_ID",
    "PADDLE_TRAINERS_NUM",
    "PADDLE_TRAINER_ENDPOINTS",
    "PADDLE_CURRENT_ENDPOINT",
    "FLAGS_selected_gpus",
    "OAR_FALLBACK_DEVICE",
]
rank = int(os.environ["PADDLE_TRAINER_ID"])
with open(f"{out}.{rank}.json", "w") as fh:
    json.dump({"env": {k: os.environ.get(k) for k in keys}, "argv": sys.argv}, fh)
print(f"rank {rank} says hello")
if mode in ("kill", "hang"):
    import numpy as np
    from oar_dist.collective import make_backend

    backend = make_backend("mpi")
    backend.barrier()
    if rank == 1:
        if mode == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        time.sleep(600)
    for _ in range(1000):
        backend.allreduce(np.ones(4))
elif mode == "raise" and rank == 1:
    raise ValueError("rank 1 cannot go on")

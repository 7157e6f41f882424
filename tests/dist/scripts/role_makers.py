"""Role makers in a job: ``mpi <dir>`` (under mpiexec: MPISymetricRoleMaker) or ``general <dir>``
(GeneralRoleMaker(path=<dir>/rdv), roles from the environment). Each process writes what it saw
to ``<dir>/<id>.json``."""

from __future__ import annotations

import json
import os
import sys

import numpy as np

# the module behind oar.fluid.incubate.fleet.base.role_maker, without importing all of oar
from oar_dist.incubate.fleet.base import role_maker

if sys.argv[1] == "mpi":
    rm = role_maker.MPISymetricRoleMaker()
else:
    rm = role_maker.GeneralRoleMaker(path=os.path.join(sys.argv[2], "rdv"), run_timeout_seconds=20)
rm.generate_role()
mine = rm.worker_index() if rm.is_worker() else 100 + rm.server_index()
out = np.zeros(3, "float32")
rm.all_reduce_worker(np.full(3, mine + 1, "float32"), out)
rm.barrier_worker()
rm.barrier_all()
gathered = rm.all_gather(mine)
rm.barrier_all()
with open(os.path.join(sys.argv[2], f"{mine}.json"), "w") as f:
    json.dump(
        {
            "worker": rm.is_worker(),
            "server": rm.is_server(),
            "id": mine,
            "first": rm.is_first_worker(),
            "worker_num": rm.worker_num(),
            "servers": rm.get_pserver_endpoints(),
            "sum": out.tolist() if rm.is_worker() else None,
            "gathered": gathered,
        },
        f,
    )

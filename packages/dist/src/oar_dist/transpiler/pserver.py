"""``config.mode = "pserver"``: the parameter-server rewrite (Fluid's default mode).

Trainer program: the optimize and learning-rate ops leave; after the
backward pass come ``split_byref`` (sliced gradients), one ``send`` of every
gradient (block) to its pserver, ``send_barrier`` (sync), one ``recv`` of
every parameter (block), ``fetch_barrier`` (sync) and ``concat`` (sliced
parameters). The trainer's startup program ends with the same ``recv``, so
every trainer starts from the pservers' values.

Pserver program: one ``listen_and_serv`` op whose inputs and outputs are the
variables this pserver owns; the optimize ops of each parameter block (and the
learning-rate ops) are plain Programs serialized in its attrs (oar has no
sub-block execution in the executor: see docs/dist.md).
"""

from __future__ import annotations

import functools
import json
from typing import Any

from oar.api import OpRole, Program

from oar_dist.transpiler import geo
from oar_dist.transpiler.checkpoint import save_checkpoint
from oar_dist.transpiler.clipping import trainer_side
from oar_dist.transpiler.slicing import ParamBlock, dispatch, shard_attrs, slice_param
from oar_dist.transpiler.tables import (
    check_tables,
    drop_initializers,
    find_tables,
    init_specs,
    rewrite_clipping,
    rewrite_lookups,
    table_blocks,
    table_info,
)

_OPT = OpRole.Optimize
_LR = OpRole.LRSched


def _role(op) -> int:
    return int(op.attr("op_role")) if op.has_attr("op_role") else 0


def _io(op) -> tuple:
    ins = {s: list(op.input(s)) for s in op.input_names}
    outs = {s: list(op.output(s)) for s in op.output_names}
    return ins, outs


def _attrs(op) -> dict:
    return {n: op.attr(n) for n in op.attr_names}


def _zero_state(op: Any, name: str, info: dict) -> bool:
    """``name`` is per-row optimizer state of a table shard that starts at zero."""
    per_row = {n for t in info["tables"].values() for n in t["state"]}
    if name not in per_row or op.type != "fill_constant":
        return False
    raw = op.attr("str_value") if op.has_attr("str_value") else ""
    return float(raw or op.attr("value")) == 0.0


def parse_pservers(pservers: Any) -> list:
    if isinstance(pservers, (list, tuple)):
        eps = [str(e).strip() for e in pservers]
    else:
        eps = [e.strip() for e in str(pservers or "").split(",")]
    eps = [e for e in eps if e]
    for e in eps:
        host, sep, port = e.rpartition(":")
        if not sep or not host or not port.isdigit():
            raise ValueError(
                f"DistributeTranspiler.transpile: pservers must be 'ip:port,ip:port', given "
                f"{pservers!r} (bad endpoint {e!r})"
            )
    if not eps:
        raise ValueError(
            f"DistributeTranspiler.transpile: pservers must list the parameter servers "
            f"('ip:port,...'), given {pservers!r}"
        )
    if len(set(eps)) != len(eps):
        raise ValueError(f"DistributeTranspiler.transpile: pservers lists an endpoint twice: {eps}")
    return eps


class PserverMode:
    name = "pserver"

    def __init__(self, config: Any) -> None:
        self.config = config

    # --- transpile -----------------------------------------------------------------------
    def transpile(
        self, trainer_id, program, pservers, trainers, sync_mode, startup_program, current_endpoint
    ) -> None:
        cfg = self.config
        self.eps = parse_pservers(pservers)
        if isinstance(trainers, str):
            trainers = len([t for t in trainers.split(",") if t.strip()])
        if isinstance(trainers, bool) or not isinstance(trainers, int) or trainers < 1:
            raise ValueError(
                f"DistributeTranspiler.transpile: trainers must be the number of trainers (>= 1), "
                f"given {trainers!r}"
            )
        if trainer_id >= trainers:
            raise ValueError(
                f"DistributeTranspiler.transpile: trainer_id {trainer_id} is out of range for "
                f"{trainers} trainers"
            )
        self.trainer_id, self.trainers = trainer_id, trainers
        self.geo = bool(cfg.geo_sgd_mode)
        self.sync = bool(sync_mode) and bool(cfg.sync_mode) and not self.geo
        self.dist_mode = 0 if self.sync else (2 if cfg.half_async and not self.geo else 1)
        self.half = self.dist_mode == 2
        self.main, self.startup = program, startup_program
        self.origin_startup = startup_program.clone()
        block = program.global_block()
        self.opt_ops = [op for op in block.ops if _role(op) & _OPT]
        self.lr_ops = [op for op in block.ops if _role(op) & _LR and not _role(op) & _OPT]
        self.var_meta = {v.name: v for v in program.list_vars()}
        self._collect_params(block)
        self.tables = find_tables(block)
        check_tables(self.tables, self.params, block, self.opt_ops)
        self.table_inits = init_specs(self.tables, self.origin_startup)
        if self.geo:
            geo.check(self)
        self.blocks = []
        for p in self.params:
            shape = self.var_meta[p].shape
            if p in self.tables:
                self.blocks.extend(table_blocks(p, shape, self.eps))
                continue
            parts = len(self.eps) if cfg.slice_var_up and not self.geo else 1
            self.blocks.extend(slice_param(p, shape, parts, cfg.min_block_size))
        dispatch([b for b in self.blocks if b.param not in self.tables], self.eps, cfg.split_method)
        self._rewrite_trainer(block)
        self._rewrite_startup()
        # fluid.io.save_persistables(exe, dirname, trainer_program): the whole job's checkpoint
        self.main._oar_save_persistables = functools.partial(save_checkpoint, self)

    def _collect_params(self, block) -> None:
        self.params: list = []
        self.param_ops: dict = {}
        for op in self.opt_ops:
            if "Param" in op.input_names and op.input("Param"):
                p = op.input("Param")[0]
                if p not in self.param_ops:
                    self.params.append(p)
                    self.param_ops[p] = []
        produced = {
            n for op in block.ops if not _role(op) & (_OPT | _LR) for n in op.output_arg_names
        }
        for p in self.params:
            g = p + "@GRAD"
            if g not in produced:
                raise ValueError(
                    f"DistributeTranspiler: the gradient '{g}' of parameter '{p}' is not computed "
                    f"by the program (call optimizer.minimize(loss) before transpile, and do not "
                    f"rename gradients: memory_optimize(..., skip_grads=True))"
                )
        self.trainer_ops, self.grad_of = trainer_side(self.opt_ops, self.params, self.var_meta)
        on_trainer = {id(op) for op in self.trainer_ops}
        closure = {p: {p, p + "@GRAD", self.grad_of.get(p, p + "@GRAD")} for p in self.params}
        for op in self.opt_ops:
            if id(op) in on_trainer:
                continue
            names = set(op.input_arg_names) | set(op.output_arg_names)
            owners = [p for p in self.params if names & closure[p]]
            if len(owners) > 1:
                raise NotImplementedError(
                    f"DistributeTranspiler (pserver mode): optimize op '{op.type}' updates state "
                    f"shared by several parameters ({owners}), which no single pserver holds"
                )
            if owners:
                self.param_ops[owners[0]].append(op)
                closure[owners[0]] |= set(op.output_arg_names)
        self.closure = closure

    def _var(self, block, name: str, shape=None, persistable=None) -> Any:
        src = self.var_meta[name]
        return block.create_var(
            name=name,
            shape=list(src.shape if shape is None else shape),
            dtype=src.dtype,
            persistable=src.persistable if persistable is None else persistable,
            type=src.type,
        )

    def _rewrite_trainer(self, block) -> None:
        if self.geo:  # local training; the parameters are exchanged every few steps
            with self.main._role_guard(OpRole.RPC):
                geo.append_communicate(self, block, init=False)
            return
        drop = {id(op) for op in self.opt_ops + self.lr_ops} - {id(op) for op in self.trainer_ops}
        for i in range(len(block.ops) - 1, -1, -1):
            if id(block.ops[i]) in drop:
                block._remove_op(i)
        tid = self.trainer_id
        blocks_of = {t: [b for b in self.blocks if b.param == t] for t in self.tables}
        rewrite_lookups(block, self.tables, blocks_of, tid, self.var_meta)
        rewrite_clipping(block, self.tables, self.trainer_ops)
        for n in self.table_state():  # held by the pservers only: trainers neither save nor load it
            if block.has_var(n) and block.var(n).persistable:
                block._remove_var(n)  # a new variable: var_meta keeps the original for the pservers
                self._var(block, n, persistable=False)
        with self.main._role_guard(OpRole.RPC):
            for p in self.params:
                bl = [b for b in self.blocks if b.param == p]
                if len(bl) > 1 or p in self.tables:
                    outs = [self._block_var(block, b, grad=True) for b in bl]
                    split, attrs = (
                        ("shard_selected_rows", {"shards": len(bl)})
                        if p in self.tables
                        else ("split_byref", {"sections": [b.rows for b in bl]})
                    )
                    block.append_op(
                        split, {"X": [self.grad_of.get(p, p + "@GRAD")]}, {"Out": outs}, attrs
                    )
            block.append_op(
                "send",
                {"X": [self._sent_var(b) for b in self.blocks]},
                {},
                {
                    "epmap": [b.endpoint for b in self.blocks],
                    "send_varnames": [b.grad_name for b in self.blocks],
                    "sync_mode": self.sync,
                    "trainer_id": tid,
                    "half_async": self.half,
                },
            )
            if self.sync or self.half:  # half-async: a barrier per merge with the pservers
                attrs = {"endpoints": self.eps, "trainer_id": tid, "half_async": self.half}
                block.append_op("send_barrier", {}, {}, attrs)
            self._append_recv(block, self.main)

    def _sent_var(self, b: ParamBlock) -> str:
        """The trainer variable sent as ``b.grad_name`` (a clipped gradient when clipping by
        global norm stays on the trainer)."""
        return b.grad_name if not b.whole else self.grad_of.get(b.param, b.grad_name)

    def _block_var(self, block, b: ParamBlock, grad: bool) -> str:
        name = b.grad_name if grad else b.name
        src = self.var_meta[b.param]
        kind = self.var_meta[b.param + "@GRAD"].type if grad else src.type
        block.create_var(
            name=name, shape=list(b.shape), dtype=src.dtype, persistable=False, type=kind
        )
        return name

    def _append_recv(self, block, program) -> None:
        tid = self.trainer_id
        dense = [p for p in self.params if p not in self.tables]
        for p in dense:
            if block is not self.main.global_block() and not block.has_var(p):
                self._var(block, p)
        blocks = [b for b in self.blocks if b.param not in self.tables]
        outs = [b.name if b.whole else self._block_var(block, b, grad=False) for b in blocks]
        if outs:
            block.append_op(
                "recv",
                {},
                {"Out": outs},
                {
                    "epmap": [b.endpoint for b in blocks],
                    "varnames": outs,
                    "trainer_id": tid,
                    "half_async": self.half and program is self.main,
                },
            )
        if self.sync or (self.half and program is self.main):
            block.append_op("fetch_barrier", {}, {}, {"endpoints": self.eps, "trainer_id": tid})
        for p in dense:
            bl = [b for b in self.blocks if b.param == p]
            if len(bl) > 1:
                block.append_op("concat", {"X": [b.name for b in bl]}, {"Out": [p]}, {"axis": 0})

    def _rewrite_startup(self) -> None:
        drop_initializers(self.startup, self.table_state())
        block = self.startup.global_block()
        with self.startup._role_guard(OpRole.RPC):
            self._append_recv(block, self.startup)
            if self.geo:
                geo.append_communicate(self, block, init=True)

    def table_state(self) -> set:
        """The distributed tables and their optimizer state: held by the pservers only."""
        return {n for t in self.tables for n in self.closure[t]}

    # --- queries -------------------------------------------------------------------------
    def get_trainer_program(self, wait_port: bool = True) -> Any:
        return self.main

    def _owned(self, endpoint: str) -> list:
        if endpoint not in self.eps:
            raise ValueError(
                f"DistributeTranspiler.get_pserver_program: endpoint {endpoint!r} is not one of "
                f"the pservers {self.eps} given to transpile"
            )
        return [b for b in self.blocks if b.endpoint == endpoint]

    def _renames(self, b: ParamBlock) -> dict:
        """Names of the param's update state on the pserver: per block when sliced."""
        ren = {b.param: b.name, b.param + "@GRAD": b.grad_name}
        if b.param in self.grad_of:
            ren[self.grad_of[b.param]] = b.grad_name
        if not b.whole:
            for n in self.closure[b.param]:
                if n not in ren:
                    ren[n] = f"{n}.block{b.index}"
        return ren

    def _block_shape(self, b: ParamBlock, name: str) -> list:
        shape = list(self.var_meta[name].shape)
        pshape = list(self.var_meta[b.param].shape)
        if not b.whole and shape == pshape:
            return list(b.shape)
        return shape

    def _optimize_program(self, b: ParamBlock) -> tuple:
        if self.geo:
            return geo.update_program(self, b)
        prog = Program()
        block = prog.global_block()
        ren = self._renames(b)
        held = []
        made = set()
        for op in self.param_ops[b.param]:
            ins, outs = _io(op)
            for names in list(ins.values()) + list(outs.values()):
                for n in names:
                    new = ren.get(n, n)
                    if new in made:
                        continue
                    made.add(new)
                    src = self.var_meta[n]
                    persist = src.persistable or n in self._lr_outputs()
                    block.create_var(
                        name=new,
                        shape=self._block_shape(b, n),
                        dtype=src.dtype,
                        persistable=persist,
                        type=src.type,
                    )
                    if src.persistable and n not in self._lr_outputs():
                        held.append((n, new))
            block.append_op(
                op.type,
                {s: [ren.get(n, n) for n in v] for s, v in ins.items()},
                {s: [ren.get(n, n) for n in v] for s, v in outs.items()},
                _attrs(op),
            )
        return prog, held

    def _lr_outputs(self) -> set:
        return {n for op in self.lr_ops for n in op.output_arg_names}

    def _lr_program(self) -> tuple:
        if not self.lr_ops or self.geo:
            return None, []
        prog = Program()
        block = prog.global_block()
        held = []
        outs_all = self._lr_outputs()
        for op in self.lr_ops:
            for n in set(op.input_arg_names) | set(op.output_arg_names):
                if not block.has_var(n):
                    self._var(block, n, persistable=True)
                    src = self.var_meta[n]
                    if src.persistable:
                        held.append((n, n))
                    elif n not in outs_all:
                        raise ValueError(
                            f"DistributeTranspiler: learning-rate op '{op.type}' reads '{n}', "
                            f"which is neither persistable nor computed by the schedule"
                        )
            ins, outs = _io(op)
            block.append_op(op.type, ins, outs, _attrs(op))
        return prog, held

    def get_pserver_program(self, endpoint: str) -> Any:
        owned = self._owned(endpoint)
        programs, grad_to_block, held = [], [], []
        for i, b in enumerate(owned):
            prog, h = self._optimize_program(b)
            programs.append(prog.to_dict())
            grad = geo.delta_name(b.param) if self.geo else b.grad_name
            grad_to_block.append(f"{grad}:{i}")
            held.extend(h)
        lr_prog, lr_held = self._lr_program()
        held.extend(lr_held)
        seen, held_names = set(), []
        for origin, name in held:
            if name not in seen:
                seen.add(name)
                held_names.append((origin, name))
        prog = Program()
        block = prog.global_block()
        for origin, name in held_names:
            b = next((b for b in owned if self._renames(b).get(origin) == name), None)
            src = self.var_meta[origin]
            shape = self._block_shape(b, origin) if b is not None else list(src.shape)
            block.create_var(name=name, shape=shape, dtype=src.dtype, persistable=True)
        tables = self._table_infos(owned)
        for info in tables.values():
            block.create_var(
                name=info["ids"], shape=[info["capacity"] + 1], dtype="int64", persistable=True
            )
        names = [n for _, n in held_names] + [info["ids"] for info in tables.values()]
        with prog._role_guard(OpRole.RPC):
            block.append_op(
                "listen_and_serv",
                {"X": names},
                {"Out": names},
                {
                    "endpoint": endpoint,
                    "Fanin": self.trainers,
                    "sync_mode": self.sync,
                    "distributed_mode": self.dist_mode,
                    "var_names": names,
                    "grad_to_block_id": grad_to_block,
                    "optimize_programs": json.dumps(programs),
                    "lr_program": json.dumps(lr_prog.to_dict()) if lr_prog is not None else "",
                    "tables": list(tables),
                    "table_specs": self._table_specs(owned, tables),
                },
            )
        prog._oar_pserver = {"endpoint": endpoint, "held": held_names, "tables": tables}
        return prog

    def _table_infos(self, owned: list) -> dict:
        out = {}
        for b in owned:
            if b.param in self.tables:
                shape = list(self.var_meta[b.param].shape)
                state = [
                    n
                    for origin, n in self._renames(b).items()
                    if origin != b.param
                    and self.var_meta.get(origin) is not None
                    and self.var_meta[origin].persistable
                    and list(self.var_meta[origin].shape) == shape
                ]
                out[b.name] = table_info(b, len(self.eps), int(shape[0]), state)
        return out

    def _table_specs(self, owned: list, tables: dict) -> str:
        specs = []
        for b in owned:
            if b.name in tables:
                info = tables[b.name]
                specs.append(
                    dict(info, name=b.name, grad=b.grad_name, init=self.table_inits[b.param])
                )
        return json.dumps(specs)

    def get_pserver_programs(self, endpoint: str) -> tuple:
        main = self.get_pserver_program(endpoint)
        return main, self.get_startup_program(endpoint, main)

    def get_startup_program(self, endpoint=None, pserver_program=None, startup_program=None) -> Any:
        if endpoint is None:
            return self.startup
        info = getattr(pserver_program, "_oar_pserver", None)
        if info is None or info["endpoint"] != endpoint:  # none given, a copy, or another's
            info = self.get_pserver_program(endpoint)._oar_pserver
        held = info["held"]
        src = startup_program if startup_program is not None else self.origin_startup
        creators = {}
        for op in src.global_block().ops:
            for n in op.output_arg_names:
                creators.setdefault(n, op)
        prog = Program()
        prog.random_seed = src.random_seed
        block = prog.global_block()
        owned = self._owned(endpoint)
        for origin, name in held:
            op = creators.get(origin)
            if op is None:
                raise ValueError(
                    f"DistributeTranspiler.get_startup_program: no op of the startup program "
                    f"initialises '{origin}'"
                )
            b = next((b for b in owned if self._renames(b).get(origin) == name), None)
            shape = (
                self._block_shape(b, origin) if b is not None else list(self.var_meta[origin].shape)
            )
            var = block.create_var(
                name=name, shape=shape, dtype=self.var_meta[origin].dtype, persistable=True
            )
            if origin in self.tables or _zero_state(op, name, info):
                # rows are drawn per id when the id first arrives; zero storage is committed
                # by the OS as rows are written, so a shard's memory grows with its ids
                attrs = {"shape": shape, "dtype": self.var_meta[origin].dtype}
                block.append_op("table_shard_zeros", {}, {"Out": [name]}, attrs)
                continue
            attrs = shard_attrs(_attrs(op), shape, b)
            ins, outs = _io(op)
            outs = {s: [name if n == origin else n for n in v] for s, v in outs.items()}
            block.append_op(op.type, ins, outs, attrs)
            del var
        for t in info["tables"].values():  # empty id -> slot maps
            shape = [t["capacity"] + 1]
            block.create_var(name=t["ids"], shape=shape, dtype="int64", persistable=True)
            attrs = {"shape": shape, "dtype": "int64"}
            block.append_op("table_shard_zeros", {}, {"Out": [t["ids"]]}, attrs)
        prog._oar_pserver = info
        return prog

"""Programs: blocks of ops, the default main/startup programs, and their JSON-able form."""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Iterator

from oar.framework.block import Block
from oar.framework.operator import Operator, OpRole
from oar.framework.variable import Parameter, Variable

PROGRAM_FORMAT = "oar.program"
PROGRAM_VERSION = 1


class Program:
    """A list of blocks; block 0 is the global block.

    ``random_seed`` seeds every random op the program runs (0 means unseeded).
    Any change bumps ``_version`` so executors rebuild their cached plans.
    """

    def __init__(self) -> None:
        self.blocks: list = [Block(self, 0)]
        self.current_block_idx = 0
        self._seed = Program._global_seed
        self._version = 0
        self._current_role = OpRole.Forward
        self._name_scope = ""
        self._is_test = False
        # data readers (non-iterable PyReader) attached by the data plugin
        self._readers: list = []

    # --- structure --------------------------------------------------------------------------
    def _bump(self) -> None:
        self._version += 1

    @property
    def random_seed(self) -> int:
        return self._seed

    @random_seed.setter
    def random_seed(self, seed: int) -> None:
        if not isinstance(seed, int):
            raise TypeError(f"Program.random_seed must be an int, given {type(seed).__name__}")
        self._seed = seed
        self._bump()

    # the seed new programs start with (Program.global_seed)
    _global_seed = 0

    def global_seed(self, seed: int = 0) -> None:
        """Set this program's ``random_seed`` and the one every later ``Program()`` starts with."""
        self.random_seed = seed
        Program._global_seed = seed

    @staticmethod
    def parse_from_string(binary_str: bytes) -> Program:
        """A program from its serialized form: Fluid's ``__model__`` ProgramDesc or oar's JSON.

        Decoding is done by the formats the io plugin registers (oar-io).
        """
        from oar.errors import MissingPluginError
        from oar.plugins import registries

        data = binary_str.encode() if isinstance(binary_str, str) else bytes(binary_str)
        formats = registries().formats
        for name in formats.names():
            if "program" not in name:
                continue
            fmt = formats.get(name)
            sniff, loads = getattr(fmt, "sniff", None), getattr(fmt, "loads", None)
            if sniff is not None and loads is not None and sniff(data[:64]):
                loaded = loads(data)
                return loaded[0] if isinstance(loaded, tuple) else loaded
        if not len(formats.names()):
            raise MissingPluginError(
                "Program.parse_from_string needs the oar-io plugin: pip install oar-io"
            )
        raise ValueError(
            "Program.parse_from_string: the bytes are neither a Fluid ProgramDesc nor oar's "
            f"program JSON (first bytes {data[:16]!r})"
        )

    def global_block(self) -> Block:
        return self.blocks[0]

    def block(self, index: int) -> Block:
        return self.blocks[index]

    def current_block(self) -> Block:
        return self.blocks[self.current_block_idx]

    @property
    def num_blocks(self) -> int:
        return len(self.blocks)

    def _create_block(self, parent_idx: int | None = None) -> Block:
        parent = self.current_block_idx if parent_idx is None else parent_idx
        blk = Block(self, len(self.blocks), parent)
        self.blocks.append(blk)
        self.current_block_idx = blk.idx
        self._bump()
        return blk

    def _rollback(self) -> None:
        self.current_block_idx = self.current_block().parent_idx

    def list_vars(self) -> Iterator[Variable]:
        for b in self.blocks:
            yield from b.vars.values()

    def all_parameters(self) -> list:
        return [p for b in self.blocks for p in b.all_parameters()]

    @contextlib.contextmanager
    def _role_guard(self, role: int) -> Iterator[None]:
        old = self._current_role
        self._current_role = role
        try:
            yield
        finally:
            self._current_role = old

    _optimized_guard = _role_guard

    def _lr_schedule_guard(self):
        return self._role_guard(OpRole.LRSched)

    # --- copies -----------------------------------------------------------------------------
    def clone(self, for_test: bool = False) -> Program:
        """A copy; ``for_test=True`` sets ``is_test`` and drops backward/optimize ops."""
        p = Program()
        p._seed = self._seed
        p.blocks = []
        for b in self.blocks:
            nb = Block(p, b.idx, b.parent_idx, b.forward_block_idx)
            for name, v in b.vars.items():
                nv = copy.copy(v)
                nv.block = nb
                if isinstance(v, Parameter):
                    nv.optimize_attr = dict(v.optimize_attr)
                nb.vars[name] = nv
            for op in b.ops:
                nb.ops.append(
                    Operator(
                        nb,
                        op.type,
                        {k: list(x) for k, x in op.inputs.items()},
                        {k: list(x) for k, x in op.outputs.items()},
                        copy.deepcopy(op.attrs),
                        op.callsite,
                    )
                )
            p.blocks.append(nb)
        p.current_block_idx = 0
        if for_test:
            p._is_test = True
            _strip_training_ops(p)
        return p

    def _prune(self, targets: list) -> Program:
        """Keep only the ops of block 0 needed to compute ``targets`` (names or Variables)."""
        from oar.framework.pruning import prune_to_targets

        return prune_to_targets(self, targets)

    def _inference_optimize(self, prune_read_op: bool = True) -> Program:
        p = self.clone(for_test=True)
        return p

    # --- serialization ----------------------------------------------------------------------
    def to_dict(self) -> dict:
        """A plain, versioned, JSON-able description that :meth:`from_dict` restores exactly."""
        return {
            "format": PROGRAM_FORMAT,
            "version": PROGRAM_VERSION,
            "random_seed": self._seed,
            "blocks": [
                {
                    "idx": b.idx,
                    "parent_idx": b.parent_idx,
                    "forward_block_idx": b.forward_block_idx,
                    "vars": [v.to_dict() for v in b.vars.values()],
                    "ops": [op.to_dict() for op in b.ops],
                }
                for b in self.blocks
            ],
        }

    @classmethod
    def from_dict(cls, d: dict) -> Program:
        if d.get("format") != PROGRAM_FORMAT:
            raise ValueError(f"not an oar program description (format={d.get('format')!r})")
        if d.get("version") != PROGRAM_VERSION:
            raise ValueError(
                f"oar program version {d.get('version')!r} is not supported (this oar reads {PROGRAM_VERSION})"
            )
        p = cls()
        p._seed = d["random_seed"]
        p.blocks = []
        for bd in d["blocks"]:
            b = Block(p, bd["idx"], bd["parent_idx"], bd.get("forward_block_idx", -1))
            for vd in bd["vars"]:
                vd = dict(vd)
                kind = vd.pop("kind", "variable")
                if kind == "parameter":
                    trainable = vd.pop("trainable")
                    stop = vd.pop("stop_gradient")
                    reg = vd.pop("regularizer", None)
                    v = Parameter(b, trainable=trainable, regularizer=reg, **vd)
                    v.stop_gradient = stop
                else:
                    v = Variable(b, **vd)
                b.vars[v.name] = v
            for od in bd["ops"]:
                b.ops.append(
                    Operator(
                        b,
                        od["type"],
                        {k: list(x) for k, x in od["inputs"].items()},
                        {k: list(x) for k, x in od["outputs"].items()},
                        dict(od["attrs"]),
                    )
                )
            p.blocks.append(b)
        return p

    def to_string(self, throw_on_error: bool = True, with_details: bool = False) -> str:
        """The program as text, block by block; ``with_details`` adds stop_gradient and lod_level."""
        if not isinstance(throw_on_error, bool) or not isinstance(with_details, bool):
            raise TypeError(
                f"Program.to_string: throw_on_error and with_details must be bools, given "
                f"{type(throw_on_error).__name__} and {type(with_details).__name__}"
            )
        return "\n".join(b.to_string(throw_on_error, with_details) for b in self.blocks)

    def __str__(self) -> str:
        return self.to_string()

    def __repr__(self) -> str:
        block = self.global_block()
        counts: dict = {}
        for op in block.ops:
            counts[op.type] = counts.get(op.type, 0) + 1
        kinds = ", ".join(f"{t} x{n}" if n > 1 else t for t, n in list(counts.items())[:8])
        more = ", ..." if len(counts) > 8 else ""
        params = block.all_parameters()
        return (
            f"<Program {len(self.blocks)} block(s), {len(block.ops)} ops in block 0 "
            f"({kinds}{more}), {len(block.vars)} vars, {len(params)} parameters>"
        )


_TRAINING_ROLES = OpRole.Backward | OpRole.Optimize | OpRole.LRSched


def _strip_training_ops(p: Program) -> None:
    from oar.plugins import registries

    ops_reg = registries().ops
    for b in p.blocks:
        keep = []
        for op in b.ops:
            role = int(op.attrs.get("op_role", 0))
            if (
                role & _TRAINING_ROLES
            ):  # as Fluid: backward (incl. the loss-grad fill), optimize, LR schedule
                continue
            if "is_test" in op.attrs or (
                "is_test" in ops_reg.get(op.type).attrs if op.type in ops_reg else False
            ):
                op.attrs["is_test"] = True
            keep.append(op)
        b.ops = keep
        used = {n for op in keep for n in op.input_arg_names + op.output_arg_names}
        for name in [n for n, v in b.vars.items() if n.endswith("@GRAD") and n not in used]:
            del b.vars[name]


# --- the default programs -------------------------------------------------------------------
_main_program = Program()
_startup_program = Program()


def default_main_program() -> Program:
    """The program that layers append to unless a ``program_guard`` says otherwise."""
    return _main_program


def default_startup_program() -> Program:
    """The program that holds parameter initialisation ops."""
    return _startup_program


def switch_main_program(program: Program) -> Program:
    global _main_program
    old, _main_program = _main_program, program
    return old


def switch_startup_program(program: Program) -> Program:
    global _startup_program
    old, _startup_program = _startup_program, program
    return old


@contextlib.contextmanager
def program_guard(main_program: Program, startup_program: Program | None = None) -> Iterator[None]:
    """Make ``main_program`` (and ``startup_program``) the defaults inside the block."""
    if not isinstance(main_program, Program):
        raise TypeError(
            f"program_guard: main_program must be a Program, given {type(main_program).__name__}"
        )
    if startup_program is not None and not isinstance(startup_program, Program):
        raise TypeError(
            f"program_guard: startup_program must be a Program, given {type(startup_program).__name__}"
        )
    old_main = switch_main_program(main_program)
    old_startup = switch_startup_program(startup_program) if startup_program is not None else None
    try:
        yield
    finally:
        switch_main_program(old_main)
        if old_startup is not None:
            switch_startup_program(old_startup)


@contextlib.contextmanager
def name_scope(prefix: str | None = None) -> Iterator[None]:
    """Tag ops created inside with a name scope (shown in program dumps)."""
    p = default_main_program()
    old = p._name_scope
    p._name_scope = f"{old}/{prefix}" if old else (prefix or "")
    try:
        yield
    finally:
        p._name_scope = old

"""``fluid.core.create_paddle_predictor``: a loaded, optimised inference program ready to serve.

A predictor owns a Scope holding the model's parameters, the (optimised)
inference program and an Executor. ``clone()`` makes another predictor over
the same Scope (the weights are shared, never copied) with its own program
copy, Executor and input/output tensors: one clone per serving thread.
Running never writes the Scope (inference programs update no persistable),
so clones run concurrently.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Any

from oar_deploy.config import AnalysisConfig
from oar_deploy.passes import run_passes
from oar_deploy.tensor import PaddleTensor, ZeroCopyTensor


def _load(config: AnalysisConfig, exe: Any, scope: Any) -> tuple:
    from oar import fluid

    if config.model_dir():
        args: tuple = (config.model_dir(), exe)
        kwargs: dict = {}
    elif config.prog_file():
        prog, params = os.path.abspath(config.prog_file()), config.params_file()
        dirname = os.path.dirname(prog)
        kwargs = {"model_filename": os.path.basename(prog)}
        if params:
            params = os.path.abspath(params)
            if os.path.dirname(params) != dirname:
                raise ValueError(
                    f"AnalysisConfig: prog_file '{prog}' and params_file '{params}' must be in "
                    f"the same directory"
                )
            kwargs["params_filename"] = os.path.basename(params)
        args = (dirname, exe)
    else:
        raise ValueError(
            "create_paddle_predictor: the AnalysisConfig names no model; use "
            "AnalysisConfig(model_dir) or AnalysisConfig(prog_file, params_file)"
        )
    with fluid.scope_guard(scope):
        program, feeds, fetch_targets = fluid.io.load_inference_model(*args, **kwargs)
    return program, list(feeds), [v.name for v in fetch_targets]


def _place(config: AnalysisConfig) -> Any:
    from oar import fluid

    if config.use_gpu():
        return fluid.CUDAPlace(config.gpu_device_id())
    return fluid.CPUPlace()


def _limit_threads(n: int) -> None:
    try:  # optional: without threadpoolctl the BLAS keeps its own thread count
        from threadpoolctl import threadpool_limits
    except ImportError:
        return
    threadpool_limits(n)


class Predictor:
    """Fluid 1.8's ``AnalysisPredictor``: ``run(inputs)`` and the zero-copy path."""

    def __init__(self, config: AnalysisConfig, _shared: tuple | None = None) -> None:
        from oar.api import Executor, Scope

        self._config = config._copy()
        place = _place(config)
        if _shared is None:
            scope = Scope()
            program, feeds, fetches = _load(config, Executor(place), scope)
            self.pass_stats: dict = {}
            if config.ir_optim():
                names = config.pass_builder().all_passes()
                self.pass_stats = run_passes(program, scope, feeds, fetches, names)
            _limit_threads(config.cpu_math_library_num_threads())
        else:
            program, scope, feeds, fetches, self.pass_stats = _shared
            program = program.clone()
        self._program, self._scope = program, scope
        self._feeds, self._fetches = feeds, fetches
        self._exe = Executor(place)
        block = program.global_block()
        self._inputs = {n: ZeroCopyTensor(n, block.var(n).dtype, True) for n in feeds}
        self._outputs = {n: ZeroCopyTensor(n, block.var(n).dtype, False) for n in fetches}
        self._lock = threading.Lock()  # one run at a time per predictor (clones run in parallel)

    # --- names and tensors ------------------------------------------------------------------
    def get_input_names(self) -> list:
        return list(self._feeds)

    def get_output_names(self) -> list:
        return list(self._fetches)

    def get_input_tensor(self, name: str) -> ZeroCopyTensor:
        return self._tensor(self._inputs, name, "input")

    def get_output_tensor(self, name: str) -> ZeroCopyTensor:
        return self._tensor(self._outputs, name, "output")

    @staticmethod
    def _tensor(table: dict, name: str, what: str) -> ZeroCopyTensor:
        try:
            return table[name]
        except KeyError:
            raise KeyError(
                f"predictor has no {what} named '{name}'; its {what}s are {list(table)}"
            ) from None

    def get_input_tensor_shape(self) -> dict:
        block = self._program.global_block()
        return {n: list(block.var(n).shape) for n in self._feeds}

    def program(self) -> Any:
        return self._program

    def scope(self) -> Any:
        return self._scope

    # --- running ------------------------------------------------------------------------------
    def zero_copy_run(self) -> bool:
        """Run on the input tensors' data; the results go to the output tensors."""
        feed = {n: t._feed_value() for n, t in self._inputs.items()}
        with self._lock:
            values = self._exe.run(
                self._program,
                feed=feed,
                fetch_list=self._fetches,
                scope=self._scope,
                return_numpy=False,
            )
        for name, value in zip(self._fetches, values):
            self._outputs[name]._set_result(value)
        return True

    def run(self, inputs: Sequence[PaddleTensor]) -> list:
        """Run on a list of :class:`PaddleTensor` (matched by name when named, else by position)."""
        inputs = list(inputs)
        if len(inputs) != len(self._feeds):
            raise ValueError(
                f"predictor.run: the model takes {len(self._feeds)} inputs {self._feeds}, given "
                f"{len(inputs)}"
            )
        by_name = self._config.specify_input_name() or all(t.name in self._feeds for t in inputs)
        feed = {}
        for i, t in enumerate(inputs):
            if not isinstance(t, PaddleTensor):
                raise TypeError(
                    f"predictor.run: inputs must be PaddleTensors, item {i} is {type(t).__name__}"
                )
            name = t.name if by_name else self._feeds[i]
            if name not in self._feeds:
                raise ValueError(
                    f"predictor.run: input '{t.name}' is not an input of the model {self._feeds}"
                )
            tensor = ZeroCopyTensor(name, self._inputs[name]._dtype, True)
            tensor._array, tensor._lod = t.as_ndarray(), t.lod
            feed[name] = tensor._feed_value()
        with self._lock:
            values = self._exe.run(
                self._program,
                feed=feed,
                fetch_list=self._fetches,
                scope=self._scope,
                return_numpy=False,
            )
        out = []
        for name, value in zip(self._fetches, values):
            tmp = ZeroCopyTensor(name, "float32", False)
            tmp._set_result(value)
            out.append(PaddleTensor(tmp._array, name=name, lod=tmp._lod, copy=False))
        return out

    def clone(self) -> Predictor:
        """Another predictor sharing this one's weights (one per serving thread)."""
        shared = (self._program, self._scope, self._feeds, self._fetches, self.pass_stats)
        return Predictor(self._config, _shared=shared)

    def __repr__(self) -> str:
        return f"<Predictor inputs={self._feeds} outputs={self._fetches}>"


def create_paddle_predictor(config: AnalysisConfig) -> Predictor:
    """Load the model ``config`` names, apply the inference passes, return a :class:`Predictor`."""
    if not isinstance(config, AnalysisConfig):
        raise TypeError(
            f"create_paddle_predictor: expected an AnalysisConfig, given {type(config).__name__}"
        )
    return Predictor(config)

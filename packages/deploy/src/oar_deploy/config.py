"""``fluid.core.AnalysisConfig``: where the model is and how the predictor should run it."""

from __future__ import annotations

import os
from typing import Any

from oar_deploy.passes import PassStrategy, default_pass_names


class AnalysisConfig:
    """Fluid 1.8's predictor configuration.

    ``AnalysisConfig()``, ``AnalysisConfig(model_dir)`` (a directory saved by
    ``save_inference_model`` with separate parameter files, or holding one
    ``.pdmodel``/``.pdiparams`` pair) or ``AnalysisConfig(prog_file,
    params_file)`` (a model file and a combined parameter file).
    """

    def __init__(self, *args: str) -> None:
        self._model_dir: str = ""
        self._prog_file: str = ""
        self._params_file: str = ""
        self._use_gpu = False
        self._gpu_device_id = 0
        self._gpu_memory_mb = 0
        self._ir_optim = True
        self._use_feed_fetch_ops = True
        self._specify_input_names = False
        self._memory_optim = False
        self._cpu_threads = 1
        self._mkldnn = False
        self._glog_disabled = False
        self._ir_debug = False
        self._profile = False
        self._passes: PassStrategy | None = None
        if args:
            self.set_model(*args)

    # --- the model --------------------------------------------------------------------------
    def set_model(self, *args: str) -> None:
        """``set_model(model_dir)`` or ``set_model(prog_file, params_file)``."""
        for a in args:
            if not isinstance(a, (str, os.PathLike)):
                raise TypeError(
                    f"AnalysisConfig.set_model: paths must be str, given {type(a).__name__} {a!r}"
                )
        if len(args) == 1:
            self._model_dir, self._prog_file, self._params_file = os.fspath(args[0]), "", ""
        elif len(args) == 2:
            self._model_dir = ""
            self._prog_file, self._params_file = os.fspath(args[0]), os.fspath(args[1])
        else:
            raise TypeError(
                f"AnalysisConfig.set_model takes (model_dir) or (prog_file, params_file), given "
                f"{len(args)} arguments"
            )

    def model_dir(self) -> str:
        return self._model_dir

    def prog_file(self) -> str:
        return self._prog_file

    def params_file(self) -> str:
        return self._params_file

    def set_prog_file(self, path: str) -> None:
        self._prog_file = os.fspath(path)

    def set_params_file(self, path: str) -> None:
        self._params_file = os.fspath(path)

    def model_from_memory(self) -> bool:
        return False

    # --- device -----------------------------------------------------------------------------
    def disable_gpu(self) -> None:
        self._use_gpu = False

    def enable_use_gpu(self, memory_pool_init_size_mb: int, device_id: int = 0) -> None:
        self._use_gpu = True
        self._gpu_memory_mb = int(memory_pool_init_size_mb)
        self._gpu_device_id = int(device_id)

    def use_gpu(self) -> bool:
        return self._use_gpu

    def gpu_device_id(self) -> int:
        return self._gpu_device_id

    def memory_pool_init_size_mb(self) -> int:
        return self._gpu_memory_mb

    def set_cpu_math_library_num_threads(self, n: int) -> None:
        if int(n) < 1:
            raise ValueError(f"set_cpu_math_library_num_threads: n must be >= 1, given {n}")
        self._cpu_threads = int(n)

    def cpu_math_library_num_threads(self) -> int:
        return self._cpu_threads

    def enable_mkldnn(self) -> None:
        self._mkldnn = True  # accepted; oar's CPU kernels are numpy/BLAS either way

    def mkldnn_enabled(self) -> bool:
        return self._mkldnn

    # --- optimisation and I/O style ---------------------------------------------------------
    def switch_ir_optim(self, x: bool = True) -> None:
        self._ir_optim = bool(x)

    def ir_optim(self) -> bool:
        return self._ir_optim

    def switch_ir_debug(self, x: bool = True) -> None:
        self._ir_debug = bool(x)

    def switch_use_feed_fetch_ops(self, x: bool = True) -> None:
        self._use_feed_fetch_ops = bool(x)

    def use_feed_fetch_ops_enabled(self) -> bool:
        return self._use_feed_fetch_ops

    def switch_specify_input_names(self, x: bool = True) -> None:
        self._specify_input_names = bool(x)

    def specify_input_name(self) -> bool:
        return self._specify_input_names

    def enable_memory_optim(self) -> None:
        self._memory_optim = True

    def memory_optim_enabled(self) -> bool:
        return self._memory_optim

    def pass_builder(self) -> PassStrategy:
        if self._passes is None:
            self._passes = PassStrategy(default_pass_names())
        return self._passes

    def delete_pass(self, name: str) -> None:
        self.pass_builder().delete_pass(name)

    def disable_glog_info(self) -> None:
        self._glog_disabled = True

    def glog_info_disabled(self) -> bool:
        return self._glog_disabled

    def enable_profile(self) -> None:
        self._profile = True

    def enable_tensorrt_engine(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(
            "AnalysisConfig.enable_tensorrt_engine: oar has no TensorRT engine; export the model "
            "with `oar export onnx` and serve it with onnxruntime's TensorRT provider instead"
        )

    def enable_lite_engine(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(
            "AnalysisConfig.enable_lite_engine: oar has no Paddle-Lite engine"
        )

    def tensorrt_engine_enabled(self) -> bool:
        return False

    def lite_engine_enabled(self) -> bool:
        return False

    def _copy(self) -> AnalysisConfig:
        new = AnalysisConfig.__new__(AnalysisConfig)
        new.__dict__.update(self.__dict__)
        if self._passes is not None:
            new._passes = PassStrategy(self._passes.all_passes())
        return new

    def __repr__(self) -> str:
        where = self._model_dir or f"{self._prog_file}, {self._params_file}"
        return (
            f"AnalysisConfig({where!r}, ir_optim={self._ir_optim}, use_gpu={self._use_gpu}, "
            f"threads={self._cpu_threads})"
        )

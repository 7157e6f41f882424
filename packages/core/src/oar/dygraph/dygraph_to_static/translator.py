"""``declarative``, ``ProgramTranslator`` and ``dygraph_to_static_func``: Fluid 1.8's entry points."""

from __future__ import annotations

import functools
import weakref
from typing import Any

from oar.dygraph.dygraph_to_static.program_cache import ConcreteProgram, signature
from oar.dygraph.dygraph_to_static.source import convert
from oar.errors import ArgumentTypeError
from oar.framework.mode import in_dygraph_mode

__all__ = ["ProgramTranslator", "declarative", "dygraph_to_static_func", "StaticFunction"]


class ProgramCache:
    """Every concrete program built, by (function, input signature)."""

    def __init__(self) -> None:
        self._programs: dict = {}
        self.builds = 0

    def get(self, func: Any, key: tuple, build: Any, instance: Any = None) -> ConcreteProgram:
        """The program for ``key`` (built by ``build()`` the first time); an entry made for a
        layer that no longer exists is never reused for another that got its id."""
        full = (id(func), key)
        hit = self._programs.get(full)
        if hit is not None and (hit[0] is None or hit[0]() is instance):
            return hit[1]
        cp = build()
        self._programs[full] = (None if instance is None else weakref.ref(instance), cp)
        self.builds += 1
        return cp

    def __len__(self) -> int:
        return len(self._programs)

    def clear(self) -> None:
        self._programs.clear()
        self.builds = 0


class StaticFunction:
    """A function (or ``Layer.forward``) that runs as a static program under dygraph."""

    def __init__(self, function: Any, instance: Any = None) -> None:
        self.dygraph_function = function
        self.instance = instance
        self._bound: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        functools.update_wrapper(self, function)

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is None:
            return self
        bound = self._bound.get(instance)
        if bound is None:
            bound = self._bound[instance] = StaticFunction(self.dygraph_function, instance)
        return bound

    def _args(self, args: tuple) -> tuple:
        return (self.instance, *args) if self.instance is not None else args

    def converted(self) -> Any:
        func = convert(self.dygraph_function).func
        if self.instance is not None:
            return functools.partial(func, self.instance)
        return func

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        translator = ProgramTranslator()
        if not translator.enable_declarative:
            return self.dygraph_function(*self._args(args), **kwargs)
        if not in_dygraph_mode():
            return self.converted()(*args, **kwargs)
        cp = self.concrete_program(args, kwargs)
        translator._last = cp
        return cp(args, kwargs)

    def concrete_program(self, args: tuple, kwargs: dict) -> ConcreteProgram:
        key = signature(args, kwargs, self.instance)
        func = self.converted()
        if self.instance is not None:
            func = _Bound(func, self.instance)
        return ProgramTranslator()._program_cache.get(
            self.dygraph_function, key, lambda: ConcreteProgram(func, args, kwargs), self.instance
        )


class _Bound:
    """A converted method bound to its layer (``__self__`` tells the builder which layer)."""

    def __init__(self, func: Any, instance: Any) -> None:
        self.func = func
        self.__self__ = instance

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.func(*args, **kwargs)


def declarative(func: Any) -> Any:
    """Run ``func`` (a function or a ``Layer.forward``) as a static program built from its
    converted source, cached per input signature."""
    if isinstance(func, StaticFunction):
        return func
    if not callable(func):
        raise ArgumentTypeError("declarative", f"expects a function, given {type(func).__name__}")
    return StaticFunction(func)


def dygraph_to_static_func(dygraph_func: Any) -> Any:
    """Convert ``dygraph_func`` to build static-graph code (the caller runs the program);
    in dygraph mode it runs as written."""

    @functools.wraps(dygraph_func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if in_dygraph_mode() or not ProgramTranslator().enable_declarative:
            return dygraph_func(*args, **kwargs)
        return convert(_plain(dygraph_func)).func(*args, **kwargs)

    return wrapper


def _plain(func: Any) -> Any:
    if isinstance(func, StaticFunction):
        return func.dygraph_function
    return getattr(func, "__func__", func)


class ProgramTranslator:
    """The singleton that converts and caches: ``enable``, ``get_output``, ``get_func``,
    ``get_program``, ``get_code``, ``save_inference_model``."""

    _instance: ProgramTranslator | None = None
    enable_declarative: bool
    _program_cache: ProgramCache
    _last: ConcreteProgram | None

    def __new__(cls) -> ProgramTranslator:
        if cls._instance is None:
            inst = super().__new__(cls)
            inst.enable_declarative = True
            inst._program_cache = ProgramCache()
            inst._last = None
            cls._instance = inst
        return cls._instance

    @classmethod
    def get_instance(cls) -> ProgramTranslator:
        return cls()

    @classmethod
    def reset(cls) -> None:
        if cls._instance is not None:
            cls._instance._program_cache.clear()
            cls._instance._last = None
            cls._instance.enable_declarative = True

    def enable(self, enable_declarative: bool) -> None:
        if not isinstance(enable_declarative, bool):
            raise ArgumentTypeError(
                "ProgramTranslator.enable",
                f"enable_declarative must be a bool, given {type(enable_declarative).__name__}",
            )
        self.enable_declarative = enable_declarative

    def _static(self, dygraph_func: Any) -> StaticFunction:
        if isinstance(dygraph_func, StaticFunction):
            return dygraph_func
        if hasattr(dygraph_func, "__func__"):  # a bound method
            return StaticFunction(dygraph_func.__func__, dygraph_func.__self__)
        return StaticFunction(dygraph_func)

    def get_output(self, dygraph_func: Any, *args: Any, **kwargs: Any) -> Any:
        """``dygraph_func(*args)`` run through its static program (or eagerly when disabled)."""
        return self._static(dygraph_func)(*args, **kwargs)

    def get_func(self, dygraph_func: Any) -> Any:
        """The converted Python function: calling it in static mode appends its ops."""
        return self._static(dygraph_func).converted()

    def get_program(self, dygraph_func: Any, *args: Any, **kwargs: Any) -> tuple:
        """(main program, startup program, input variables, output variables) for ``args``."""
        cp = self._static(dygraph_func).concrete_program(args, kwargs)
        cp.fill_startup()
        return cp.main, cp.startup, [v for _, v in cp.inputs], list(cp.outputs)

    def get_code(self, dygraph_func: Any) -> str:
        """The converted source of ``dygraph_func``."""
        return convert(_plain(dygraph_func)).code

    def get_program_cache(self) -> ProgramCache:
        return self._program_cache

    def save_inference_model(
        self, dirname: str, feed: list | None = None, fetch: list | None = None
    ) -> None:
        """Save the program last run through ``declarative`` as an inference model; ``feed`` and
        ``fetch`` pick inputs and outputs by index."""
        from oar.dygraph.jit import save_with_parameters

        cp = self._last
        if cp is None:
            raise RuntimeError(
                "ProgramTranslator.save_inference_model: no declarative function has run yet"
            )
        feed_names = [cp.inputs[i][1].name for i in (feed or range(len(cp.inputs)))]
        fetch_vars = [cp.outputs[i] for i in (fetch or range(len(cp.outputs)))]
        params = {var.name: p for p, var in cp.params}
        save_with_parameters(dirname, cp.main, feed_names, fetch_vars, cp.exe, cp.scope, params)

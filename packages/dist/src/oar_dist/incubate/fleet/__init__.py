"""``fluid.incubate.fleet``: the fleet API; ``fleet.collective`` for collective training."""


def __getattr__(name: str):
    """Subpackages on attribute access (``fluid.incubate.fleet.parameter_server``), as Fluid's."""
    import importlib

    if name.startswith("_"):
        raise AttributeError(name)
    try:
        return importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{name}":
            raise
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None

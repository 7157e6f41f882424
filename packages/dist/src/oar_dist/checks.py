"""Checks of the values users hand to oar-dist: arguments of fleet, the role makers and
``DistributeTranspiler.transpile``, and the environment variables the launcher sets.

Each check raises :class:`~oar.errors.ArgumentError` (a ``ValueError``) or
:class:`~oar.errors.ArgumentTypeError` (a ``TypeError``) whose message names the API,
the argument or environment variable, what was expected and what was given, and ends
with the user's line.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from numbers import Integral
from typing import Any, NoReturn

from oar.errors import ArgumentError, ArgumentTypeError, user_site

ENDPOINT = "'ip:port' (port 1..65535)"
LAUNCH_HINT = "start the job with `python -m oar.distributed.launch`, which sets it"
PS_HINT = (
    "every process of a parameter-server job needs TRAINING_ROLE (TRAINER or PSERVER), "
    "PADDLE_PSERVERS_IP_PORT_LIST and PADDLE_TRAINERS_NUM, and PADDLE_TRAINER_ID (a trainer) "
    "or POD_IP and PADDLE_PORT (a pserver)"
)


def fail(api: str, message: str, *, type_error: bool = False) -> NoReturn:
    cls = ArgumentTypeError if type_error else ArgumentError
    raise cls(api, message, callsite=user_site())


def env_name(name: str) -> str:
    return f"environment variable {name}"


def endpoint(api: str, what: str, value: Any) -> str:
    """``value`` as a checked ``'host:port'`` string."""
    if not isinstance(value, str):
        fail(api, f"{what} must be an endpoint {ENDPOINT}, given {value!r}", type_error=True)
    text = value.strip()
    host, sep, port = text.rpartition(":")
    if not sep or not host or any(c.isspace() for c in host):
        fail(api, f"{what} must be an endpoint {ENDPOINT}, given {value!r} (no host:port)")
    if not port.isdigit() or not 1 <= int(port) <= 65535:
        fail(api, f"{what} must be an endpoint {ENDPOINT}, given {value!r} (port {port!r})")
    return text


def endpoints(api: str, what: str, value: Any, *, allow_empty: bool = False) -> list:
    """A comma-separated string (or a list) of endpoints, each checked, none twice."""
    if isinstance(value, str):
        items = [e.strip() for e in value.split(",") if e.strip()]
    elif isinstance(value, (list, tuple)):
        items = list(value)
    else:
        fail(
            api,
            f"{what} must be endpoints {ENDPOINT}, comma-separated or a list, given {value!r}",
            type_error=True,
        )
    if not items and not allow_empty:
        fail(api, f"{what} must list at least one endpoint {ENDPOINT}, given {value!r}")
    eps = [endpoint(api, f"{what} (item {i})", e) for i, e in enumerate(items)]
    seen: set = set()
    for e in eps:
        if e in seen:
            fail(api, f"{what} lists endpoint {e!r} twice, given {value!r}")
        seen.add(e)
    return eps


def integer(api: str, what: str, value: Any, minimum: int | None = 0) -> int:
    """An int (not a bool) >= ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, Integral):
        fail(api, f"{what} must be an int, given {value!r}", type_error=True)
    if minimum is not None and value < minimum:
        fail(api, f"{what} must be an int >= {minimum}, given {value!r}")
    return int(value)


def index(api: str, what: str, value: Any, count: int, of: str) -> int:
    """An int in ``[0, count)``; ``of`` says what is counted (``"2 trainers"``)."""
    value = integer(api, what, value)
    if value >= count:
        fail(api, f"{what} must be in [0, {count}) for {of}, given {value}")
    return value


def flag(api: str, what: str, value: Any) -> bool:
    if not isinstance(value, bool):
        fail(api, f"{what} must be True or False, given {value!r}", type_error=True)
    return value


def one_of(api: str, what: str, value: Any, allowed: Sequence) -> Any:
    if value not in allowed:
        fail(api, f"{what} must be one of {list(allowed)}, given {value!r}")
    return value


def optimizer(api: str, value: Any) -> Any:
    """An optimizer fleet can wrap: anything with ``minimize`` (a ``fluid.optimizer`` one, or
    a wrapper such as ``RecomputeOptimizer`` or ``mixed_precision.decorate``'s)."""
    if not callable(getattr(value, "minimize", None)):
        fail(
            api,
            f"optimizer must be an optimizer with minimize() (e.g. fluid.optimizer.SGD(0.1)), "
            f"given {type(value).__name__}",
            type_error=True,
        )
    return value


# --- environment variables -----------------------------------------------------------------------
_MISSING = object()


def env_str(
    api: str, name: str, default: Any = _MISSING, expected: str = "", ps: bool = False
) -> str:
    """The variable's value; a missing required one says who sets it (``ps``: the
    parameter-server job's variables, else the collective launcher's)."""
    value = os.environ.get(name)
    if value is None or not value.strip():
        if default is not _MISSING:
            return default
        need = f" ({expected})" if expected else ""
        fail(api, f"{env_name(name)} is not set{need}: {PS_HINT if ps else LAUNCH_HINT}")
    return value.strip()


def env_int(
    api: str, name: str, default: Any = _MISSING, minimum: int = 0, ps: bool = False
) -> int:
    raw = env_str(api, name, default, f"an int >= {minimum}", ps)
    if isinstance(raw, int):
        return raw
    try:
        value = int(raw)
    except ValueError:
        fail(api, f"{env_name(name)} must be an int >= {minimum}, given {raw!r}")
    if value < minimum:
        fail(api, f"{env_name(name)} must be an int >= {minimum}, given {raw!r}")
    return value


def env_endpoints(api: str, name: str, default: Any = _MISSING, ps: bool = False) -> list:
    raw = env_str(api, name, default, f"endpoints {ENDPOINT}, comma-separated", ps)
    if isinstance(raw, list):
        return raw
    return endpoints(api, env_name(name), raw)


__all__ = [
    "endpoint",
    "endpoints",
    "env_endpoints",
    "env_int",
    "env_str",
    "fail",
    "flag",
    "index",
    "integer",
    "one_of",
    "optimizer",
]

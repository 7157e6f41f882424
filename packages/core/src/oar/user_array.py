"""Arrays handed to user code: size-1 results keep NumPy 1.x's scalar conversions.

Fluid returns a mean loss as an array of shape ``[1]``, and Fluid-era scripts
write ``float(loss)``, ``int(correct)``, ``"%f" % loss`` and
``math.isnan(loss)``. NumPy 1.25 deprecated converting arrays with ``ndim > 0``
to Python scalars and NumPy 2.4 raises ``TypeError``, so those lines break on
today's NumPy. Every 1-element array oar hands back to user code (fetches,
dygraph ``.numpy()``) is a :class:`UserArray`: an ``ndarray`` whose
``float``/``int``/``complex`` convert its single element as NumPy 1.x did.
Everything else about it is NumPy's; design notes in ``docs/numpy2.md``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["UserArray", "user_array"]

_ndarray = np.ndarray


class UserArray(np.ndarray):
    """A 1-element ``ndarray`` that converts to a Python scalar on every NumPy.

    Only the scalar conversions differ from a plain array (``operator.index``
    stays NumPy's: NumPy 1.x refused it for ``ndim > 0`` too). Values derived
    from it are plain arrays: ufunc results (arithmetic, ``np.mean``),
    indexing and slicing, ``np.asarray``/``np.array``; pickles load as plain
    arrays, so files never need oar to be read. ``repr`` is a plain array's.
    """

    # No __array_finalize__: views (reshape, astype, copy) keep the class at no cost.

    def __float__(self) -> float:
        return _ndarray.__float__(self.reshape(()) if self.size == 1 else self)

    def __int__(self) -> int:
        return _ndarray.__int__(self.reshape(()) if self.size == 1 else self)

    def __complex__(self) -> complex:
        return _ndarray.__complex__(self.reshape(()) if self.size == 1 else self)

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        # run the ufunc on plain arrays, so results (0-d ones becoming scalars included) are
        # exactly what plain arrays give, on NumPy 1.x and 2.x alike
        args = [a.view(_ndarray) if a.__class__ is UserArray else a for a in inputs]
        out = kwargs.get("out")
        if out is None:
            return getattr(ufunc, method)(*args, **kwargs)
        kwargs["out"] = tuple(o.view(_ndarray) if o.__class__ is UserArray else o for o in out)
        getattr(ufunc, method)(*args, **kwargs)
        return out[0] if len(out) == 1 else out  # NumPy returns the out= arrays themselves

    def __array_wrap__(self, arr: Any, context: Any = None, return_scalar: bool = False) -> Any:
        # non-ufunc producers (np.linalg, ...): a plain array; NumPy 2 asks for scalars itself
        if arr.__class__ is not _ndarray:
            arr = arr.view(_ndarray)
        return arr[()] if return_scalar else arr

    def __getitem__(self, key: Any) -> Any:
        return self.view(_ndarray)[key]

    def __reduce__(self) -> Any:
        return self.view(_ndarray).__reduce__()

    def __reduce_ex__(self, protocol: Any) -> Any:
        return self.view(_ndarray).__reduce_ex__(protocol)

    def __repr__(self) -> str:
        return repr(self.view(_ndarray))

    def __format__(self, spec: str) -> str:
        return self.view(_ndarray).__format__(spec)


def user_array(value: Any) -> np.ndarray:
    """``value`` as the array user code receives: a :class:`UserArray` view if it
    has one element, else a plain ``ndarray`` (no copy when it already is one)."""
    arr = value if value.__class__ is _ndarray else np.asarray(value)
    return arr.view(UserArray) if arr.size == 1 else arr

"""UserArray: size-1 arrays handed to user code convert to Python scalars on every NumPy,
and are plain ndarrays in everything else (docs/numpy2.md). The idioms on values
from the executor and dygraph: test_numpy2_idioms.py."""

from __future__ import annotations

import copy
import io
import math
import operator
import pickle

import numpy as np
import pytest
from oar.user_array import UserArray, user_array


def test_nan_and_inf_reach_math_isnan_and_isinf():
    assert math.isnan(user_array(np.array([np.nan], "float32")))
    assert math.isinf(user_array(np.array([[np.inf]])))
    with pytest.raises(ValueError):  # as int(float("nan")): NumPy 1.x raised it too
        int(user_array(np.array([np.nan])))


def test_only_size_1_arrays_get_the_subclass_and_no_copy_is_made():
    big = np.arange(6.0).reshape(2, 3)
    assert user_array(big) is big  # unchanged: a plain ndarray, the same object
    one = np.array([2.5], "float32")
    u = user_array(one)
    assert type(u) is UserArray and u.base is one  # a view: no copy
    assert type(user_array([1.0])) is UserArray  # array-likes are converted first
    assert type(user_array(np.empty((0,)))) is np.ndarray


def test_other_sizes_fail_as_numpy_fails():
    with pytest.raises(TypeError, match="scalar"):
        float(user_array(np.ones(3)))
    u = UserArray((2,))  # a UserArray that is not size 1 (e.g. after np.resize) still refuses
    with pytest.raises(TypeError, match="scalar"):
        float(u)


def test_operator_index_stays_numpys():
    # NumPy 1.x refused operator.index on arrays with ndim > 0 too, so oar does not add it
    with pytest.raises(TypeError):
        operator.index(user_array(np.array([3])))
    assert operator.index(user_array(np.array(3))) == 3
    assert [10, 11, 12, 13][user_array(np.array(3))] == 13


def test_derived_values_are_plain_arrays_or_numpy_scalars():
    x = user_array(np.array([0.5], "float32"))
    plain = np.array([0.5], "float32")
    for derived, expected in [
        (x * 2, plain * 2),
        (1.0 - x, 1.0 - plain),
        (-x, -plain),
        (abs(x), abs(plain)),
        (np.exp(x), np.exp(plain)),
        (np.maximum(x, 0), np.maximum(plain, 0)),
        (x > 0, plain > 0),
        (x.mean(), plain.mean()),
        (np.mean(x), np.mean(plain)),
        (x.sum(), plain.sum()),
        (x @ x, plain @ plain),
        (x[0], plain[0]),
        (x[:1], plain[:1]),
        (x[None], plain[None]),
        (np.asarray(x), plain),
        (np.array(x), plain),
        (np.concatenate([x, x]), np.concatenate([plain, plain])),
        (np.copy(x), plain),
    ]:
        assert type(derived) is type(expected), (derived, expected)
        np.testing.assert_array_equal(derived, expected)


def test_out_arguments_are_returned_as_they_are():
    x = user_array(np.array([1.0]))
    r = np.add(x, 1, out=x)
    assert r is x and float(x) == 2.0
    x += 1  # in place: still the same object, still converts
    assert type(x) is UserArray and float(x) == 3.0


def test_pickle_and_np_save_give_plain_arrays():
    x = user_array(np.array([[1.5]], "float32"))
    for protocol in range(2, pickle.HIGHEST_PROTOCOL + 1):
        back = pickle.loads(pickle.dumps(x, protocol=protocol))
        assert type(back) is np.ndarray and back.dtype == np.float32
        np.testing.assert_array_equal(back, x)
    assert b"UserArray" not in pickle.dumps(x)  # loading needs no oar
    buf = io.BytesIO()
    np.save(buf, x)
    buf.seek(0)
    back = np.load(buf)
    assert type(back) is np.ndarray
    np.testing.assert_array_equal(back, x)


def test_repr_str_and_format_read_as_a_plain_arrays():
    x = user_array(np.array([0.25], "float32"))
    plain = np.array([0.25], "float32")
    assert repr(x) == repr(plain) and str(x) == str(plain)
    assert format(x, "") == format(plain, "")
    assert repr([x]) == repr([plain])  # print(exe.run(...)) shows array([...])
    with pytest.raises(TypeError, match="numpy.ndarray"):
        format(x, ".4f")  # failed on NumPy 1.x too: not a Fluid-era idiom


def test_views_and_copies_keep_converting():
    x = user_array(np.array([7], "int64"))
    for v in (x.reshape(1, 1), x.astype("float32"), x.copy(), copy.deepcopy(x), x.T):
        assert int(v) == 7 and float(v) == 7.0

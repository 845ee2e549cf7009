"""Calls are checked alike on every backend: odd arrays are converted or refused the
same way, sizes that cannot be worked out or indexed are ArgumentErrors, and a failed
``assert`` raises one exception class."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import available_targets

import tilelang
from tilelang.errors import ArgumentError, AssertionFailure
from tilelang.parser import parse

TARGETS = available_targets("python", "c", "llvm")

COPY = """
@T.prim_func
def f(A: T.Buffer({shape}, "float32"), B: T.Buffer({shape}, "float32")):
    for i in range(4):
        B[{index}] = A[{index}] + T.float32(1)
"""


class Tagged(np.ndarray):
    """A user's ndarray subclass."""


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("kind", ["matrix", "subclass", "memmap"])
def test_ndarray_subclasses_are_used_as_plain_arrays(tmp_path, target, kind):
    rank2 = kind == "matrix"
    text = COPY.format(shape="(1, 4)" if rank2 else "(4,)", index="0, i" if rank2 else "i")
    lib = tilelang.build(parse(text), target=target)
    a = np.arange(4, dtype="float32").reshape((1, 4) if rank2 else (4,))
    if kind == "matrix":
        a, b = np.asmatrix(a), np.asmatrix(np.zeros((1, 4), "float32"))
    elif kind == "subclass":
        a, b = a.view(Tagged), np.zeros(4, "float32").view(Tagged)
    else:
        b = np.memmap(tmp_path / "b.bin", dtype="float32", mode="w+", shape=(4,))
    lib["f"](a, b)
    np.testing.assert_array_equal(np.asarray(b).reshape(-1), np.arange(4) + 1)


@pytest.mark.parametrize("target", TARGETS)
def test_masked_arrays_are_refused(target):
    lib = tilelang.build(parse(COPY.format(shape="(4,)", index="i")), target=target)
    a = np.ma.masked_array(np.arange(4, dtype="float32"), mask=[0, 1, 0, 0])
    with pytest.raises(ArgumentError, match="masked"):
        lib["f"](a, np.zeros(4, "float32"))


@pytest.mark.parametrize("target", TARGETS)
def test_zero_divisor_in_a_symbolic_shape(target):
    text = """
@T.prim_func
def f(a: T.handle, n: T.int32):
    A = T.match_buffer(a, (8 // n,), "float32")
    for i in range(8 // n):
        A[i] = T.float32(1)
"""
    lib = tilelang.build(parse(text), target=target)
    with pytest.raises(ArgumentError, match="divides by zero"):
        lib["f"](np.zeros(4, "float32"), 0)
    out = np.zeros(4, "float32")
    lib["f"](out, 2)
    np.testing.assert_array_equal(out, 1)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("bad", [1.5, "3", 2**40, True, None, np.float32(2)])
def test_bad_scalars(target, bad):
    text = """
@T.prim_func
def f(A: T.Buffer((4,), "float32"), n: T.int32):
    A[0] = T.Cast("float32", n)
"""
    lib = tilelang.build(parse(text), target=target)
    with pytest.raises(ArgumentError, match="'n'"):
        lib["f"](np.zeros(4, "float32"), bad)


@pytest.mark.parametrize("target", TARGETS)
def test_more_elements_than_int32_indices_reach_are_indexed_in_int64(tmp_path, target):
    """A sparse 2 GiB file mapped as int8, (2**30 + 1, 2) elements: the last element's
    flat index is 2**31 + 1, past int32; it is computed in int64 and lands there."""
    path = tmp_path / "big.bin"
    rows = 2**30 + 1
    with open(path, "wb") as handle:
        handle.truncate(rows * 2)
    big = np.memmap(path, dtype="int8", mode="r+", shape=(rows, 2))
    text = """
@T.prim_func
def f(a: T.handle, n: T.int32):
    A = T.match_buffer(a, (n, 2), "int8")
    A[n - 1, 1] = A[n - 1, 0] + T.int8(5)
    A[0, 0] = T.int8(3)
"""
    big[rows - 1, 0] = 2
    lib = tilelang.build(parse(text), target=target)
    lib["f"](big, rows)
    assert big[rows - 1, 1] == 7 and big[0, 0] == 3 and big[0, 1] == 0
    assert big[(rows - 1) - 2**30, 1] == 0  # where an int32 index would have wrapped to


@pytest.mark.parametrize("target", TARGETS)
def test_a_failed_assert_is_one_exception_class(target):
    text = """
@T.prim_func
def f(A: T.Buffer((4,), "float32")):
    assert A[0] > T.float32(0), "A[0] must be positive"
    A[1] = T.float32(1)
"""
    lib = tilelang.build(parse(text), target=target)
    with pytest.raises(AssertionFailure, match="A\\[0\\] must be positive"):
        lib["f"](np.zeros(4, "float32"))
    a = np.ones(4, "float32")
    lib["f"](a)
    assert a[1] == 1


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("view", ["reversed", "reversed rows, every other column"])
def test_negative_strides_are_accepted_alike(target, view):
    """A buffer with symbolic strides takes reversed views on every backend."""
    text = """
@T.prim_func
def f(a: T.handle, b: T.handle):
    s0, s1 = T.int32(), T.int32()
    A = T.match_buffer(a, (3, 4), "float32", strides=(s0, s1))
    B = T.match_buffer(b, (3, 4), "float32")
    for i, j in T.grid(3, 4):
        B[i, j] = A[i, j] * T.float32(10)
        A[i, j] = T.float32(i * 4 + j)
"""
    base = np.arange(24, dtype="float32").reshape(3, 8)
    a = base[::-1, ::-1][:, 4:] if view == "reversed" else base[::-1, ::2]
    want_b = a * 10
    b = np.zeros((3, 4), "float32")
    tilelang.build(parse(text), target=target)["f"](a, b)
    np.testing.assert_array_equal(b, want_b)
    np.testing.assert_array_equal(a, np.arange(12, dtype="float32").reshape(3, 4))

"""Strided loops with a tail length (``T.serial(0, 16, 5)`` with ``length = T.min(5,
16 - n)``) and let bindings run on every backend, from IR and from .tir text."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import load_sample

import tilelang
from tilelang.ir import For, ForKind, IntImm, LetStmt, Var, decl_buffer
from tilelang.ir import op as T
from tilelang.tiling import TensorView, make_prim_func, segment_by_chunk, seq

TARGETS = ["python", "c", "llvm"]

sample = load_sample("tiling_strided")
STRIDED_TIR, _expected_1d = sample.STRIDED_TIR, sample.expected


def strided_1d():
    """The loop of STRIDED_TIR, built as IR."""
    A = decl_buffer((16,), "int32", "A")
    n, length, i = Var("n"), Var("length"), Var("i")
    inner = For(i, 0, length, ForKind.SERIAL, A.vstore(n + i, length * 100 + n))
    tail = LetStmt(length, T.min(5, 16 - n), inner)
    body = For(n, 0, 16, ForKind.SERIAL, tail, step=IntImm("int32", 5))
    return make_prim_func(body, [A], "strided")


def strided_2d(chunk_n=5, chunk_c=7):
    """The tiling notes' nest: two strided loops, each with its tail length bound by a
    let, around an element loop nest."""
    A = decl_buffer((16, 32), "int32", "A")
    n, c, ln, lc, i, j = (Var(x) for x in ("n", "c", "length_n", "length_c", "i", "j"))
    store = A.vstore((n + i, c + j), ln * 100 + lc)
    elements = For(i, 0, ln, ForKind.SERIAL, For(j, 0, lc, ForKind.SERIAL, store))
    tail_c = LetStmt(lc, T.min(chunk_c, 32 - c), elements)
    inner = For(c, 0, 32, ForKind.SERIAL, tail_c, step=IntImm("int32", chunk_c))
    tail_n = LetStmt(ln, T.min(chunk_n, 16 - n), inner)
    body = For(n, 0, 16, ForKind.SERIAL, tail_n, step=IntImm("int32", chunk_n))
    return make_prim_func(body, [A], "strided2d")


@pytest.mark.parametrize("target", TARGETS)
def test_strided_loop_with_tail(target):
    a = np.full(16, -1, dtype="int32")
    tilelang.build(strided_1d(), target=target)["strided"](a)
    np.testing.assert_array_equal(a, _expected_1d())


@pytest.mark.parametrize("target", TARGETS)
def test_strided_loop_from_tir_text(target):
    mod = tilelang.parse(STRIDED_TIR)
    a = np.full(16, -1, dtype="int32")
    tilelang.build(mod, target=target)["strided"](a)
    np.testing.assert_array_equal(a, _expected_1d())


@pytest.mark.parametrize("target", TARGETS)
def test_two_strided_loops_with_lets(target):
    a = np.full((16, 32), -1, dtype="int32")
    tilelang.build(strided_2d(), target=target)["strided2d"](a)
    expected = np.zeros((16, 32), dtype="int32")
    for n in range(0, 16, 5):
        for c in range(0, 32, 7):
            ln, lc = min(5, 16 - n), min(7, 32 - c)
            expected[n : n + ln, c : c + lc] = ln * 100 + lc
    np.testing.assert_array_equal(a, expected)


@pytest.mark.parametrize("target", TARGETS)
def test_symbolic_segments_become_strided_loops(target):
    """segment_by_chunk over a symbolic size: a strided For with a min() tail."""
    from tilelang.ir import SizeVar

    n = SizeVar("n")
    A = TensorView.root("A", (n,), dtype="int32")
    body = seq(
        A[seg].store(seg.length * 100 + seg.index, k)
        for seg in segment_by_chunk(0, 5, n, "s")
        for k in (0,)
    )
    func = make_prim_func(body, [A], "heads")
    lib = tilelang.build(func, target=target)
    for size in (16, 5, 1, 12):
        a = np.full(size, -1, dtype="int32")
        lib["heads"](a)
        expected = np.full(size, -1, dtype="int32")
        for index, start in enumerate(range(0, size, 5)):
            expected[start] = min(5, size - start) * 100 + index
        np.testing.assert_array_equal(a, expected)

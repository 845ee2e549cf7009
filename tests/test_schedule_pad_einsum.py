"""pad_einsum: golden IR, numbers against NumPy on every CPU backend (spatial and
reduction iterators padded, constant and symbolic extents), trace replay, and a
ScheduleError for each precondition that leaves the schedule unchanged."""

from __future__ import annotations

import numpy as np
import pytest

import tilelang
from tilelang.errors import ScheduleError
from tilelang.ir import structural_equal

MATMUL = """
@T.prim_func
def main(A: T.Buffer((4, 7), "float32"), B: T.Buffer((6, 7), "float32"), C: T.Buffer((4, 6), "float32")):
    T.func_attr({"global_symbol": "main"})
    for i, j, k in T.grid(4, 6, 7):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]
"""

SYMBOLIC = """
@T.prim_func
def main(a: T.handle, b: T.handle, c: T.handle):
    T.func_attr({"global_symbol": "main"})
    n = T.int32()
    A = T.match_buffer(a, (16, 16), "float32")
    B = T.match_buffer(b, (n, 16), "float32")
    C = T.match_buffer(c, (16, n), "float32")
    for i0, i1, i2 in T.grid(16, n, 16):
        with T.block("C"):
            i, j, k = T.axis.remap("SSR", [i0, i1, i2])
            with T.init():
                C[i, j] = T.float32(0)
            C[i, j] = C[i, j] + A[i, k] * B[j, k]
"""

ROW_MAX = """
@T.prim_func
def main(A: T.Buffer((4, 7), "float32"), M: T.Buffer((4,), "float32")):
    T.func_attr({"global_symbol": "main"})
    for i, k in T.grid(4, 7):
        with T.block("M"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                M[vi] = T.float32(-1e30)
            M[vi] = T.max(M[vi], A[vi, vk])
"""


def padded(text, padding, block="C"):
    sch = tilelang.Schedule(tilelang.parse(text))
    sch.pad_einsum(block, padding)
    return sch


def test_golden_and_replay(golden):
    sch = padded(MATMUL, [1, 8, 8])
    golden(sch.mod["main"].script())
    again = tilelang.Schedule(tilelang.parse(MATMUL))
    sch.trace.apply_to_schedule(again)
    assert structural_equal(again.mod["main"], sch.mod["main"], map_free_vars=True)
    assert "sch.pad_einsum(block=b0, padding=[1, 8, 8])" in str(sch.trace)


@pytest.mark.parametrize("target", ["python", "c", "llvm"])
@pytest.mark.parametrize("padding", [[1, 8, 1], [4, 4, 4], [1, 1, 8], [3, 5, 2]])
def test_matmul_computes_the_same(target, padding):
    rng = np.random.default_rng(3)
    a, b = rng.random((4, 7), np.float32), rng.random((6, 7), np.float32)
    c = np.zeros((4, 6), np.float32)
    tilelang.build(padded(MATMUL, padding).mod, target=target)["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b.T, rtol=1e-5)


@pytest.mark.parametrize("target", ["python", "c", "llvm"])
@pytest.mark.parametrize("n", [1, 31, 32, 45])
def test_symbolic_extent_computes_the_same(target, n):
    sch = padded(SYMBOLIC, [1, 32, 1])
    assert "(n + 31) // 32 * 32" in sch.mod["main"].script()
    rng = np.random.default_rng(n)
    a, b = rng.random((16, 16), np.float32), rng.random((n, 16), np.float32)
    c = np.zeros((16, n), np.float32)
    tilelang.build(sch.mod, target=target)["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b.T, rtol=1e-5)


def test_nothing_to_pad_changes_nothing():
    sch = tilelang.Schedule(tilelang.parse(MATMUL))
    before = sch.mod["main"]
    sch.pad_einsum("C", [2, 3, 7])
    assert structural_equal(sch.mod["main"], before)


def expect_error(text, padding, needle, block="C"):
    sch = tilelang.Schedule(tilelang.parse(text))
    before = sch.mod
    with pytest.raises(ScheduleError, match=needle):
        sch.pad_einsum(block, padding)
    assert sch.mod is before


@pytest.mark.parametrize("padding", [[1, 8], [1, 0, 8], [1, 8, "8"]])
def test_error_bad_padding(padding):
    expect_error(MATMUL, padding, "one per block iterator")


def test_error_not_an_einsum():
    shifted = MATMUL.replace("A: T.Buffer((4, 7)", "A: T.Buffer((4, 8)").replace(
        "A[vi, vk]", "A[vi, vk + 1]"
    )
    expect_error(shifted, [1, 8, 1], "is not an einsum")


def test_error_padded_max_reduction():
    # the zero padding would enter the maximum of a row of negative numbers
    expect_error(ROW_MAX, [1, 8], "padding the reduction iterator vk", block="M")


def test_error_loop_shared_with_another_block():
    shared = """
@T.prim_func
def main(A: T.Buffer((4, 7), "float32"), C: T.Buffer((4,), "float32"), D: T.Buffer((4,), "float32")):
    for i in range(4):
        with T.block("D"):
            vi = T.axis.remap("S", [i])
            D[vi] = T.float32(1)
        for k in range(7):
            with T.block("C"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    C[vi] = T.float32(0)
                C[vi] = C[vi] + A[vi, vk]
"""
    expect_error(shared, [8, 1], "loop i also holds other blocks")


def test_error_integer_division_by_padded_input():
    divide = """
@T.prim_func
def main(A: T.Buffer((6,), "int32"), B: T.Buffer((6,), "int32"), C: T.Buffer((6,), "int32")):
    for i in range(6):
        with T.block("C"):
            vi = T.axis.remap("S", [i])
            C[vi] = A[vi] // B[vi]
"""
    expect_error(divide, [8], "divides by a padded input")

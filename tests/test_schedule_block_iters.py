"""reorder_block_iter_var and unsafe_set_dtype: golden IR, numbers on every CPU
backend, trace replay and their ScheduleErrors."""

from __future__ import annotations

import numpy as np
import pytest

import tilelang
from tilelang.errors import ScheduleError
from tilelang.ir import structural_equal

MATMUL = """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    T.func_attr({"global_symbol": "main"})
    for i, j, k in T.grid(8, 8, 8):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]
"""

STAGES = """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    T.func_attr({"global_symbol": "main"})
    B = T.alloc_buffer((8, 8), "float32")
    for i, j in T.grid(8, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(8, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)
"""


def replayed(sch, text):
    again = tilelang.Schedule(tilelang.parse(text))
    sch.trace.apply_to_schedule(again)
    return structural_equal(again.mod["main"], sch.mod["main"], map_free_vars=True)


def run_matmul(mod, target):
    rng = np.random.default_rng(0)
    a, b = rng.random((8, 8), np.float32), rng.random((8, 8), np.float32)
    c = np.zeros((8, 8), np.float32)
    tilelang.build(mod, target=target)["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b.T, rtol=1e-5)


@pytest.mark.parametrize("target", ["python", "c", "llvm"])
def test_reorder_block_iter_var(golden, target):
    sch = tilelang.Schedule(tilelang.parse(MATMUL))
    sch.reorder_block_iter_var("C", [2, 1, 0])
    if target == "python":
        golden(sch.mod["main"].script())
        assert replayed(sch, MATMUL)
    run_matmul(sch.mod, target)


@pytest.mark.parametrize("order", [[2, 1], [-1, 3, 2], [0, 0, 2]])
def test_reorder_block_iter_var_needs_a_permutation(order):
    sch = tilelang.Schedule(tilelang.parse(MATMUL))
    before = sch.mod
    with pytest.raises(ScheduleError, match="is not a permutation of the positions 0..2"):
        sch.reorder_block_iter_var("C", order)
    assert sch.mod is before


@pytest.mark.parametrize("target", ["python", "c", "llvm"])
def test_unsafe_set_dtype(golden, target):
    sch = tilelang.Schedule(tilelang.parse(STAGES))
    sch.unsafe_set_dtype("B", 0, "float64")
    if target == "python":
        golden(sch.mod["main"].script())
        assert replayed(sch, STAGES)
    a, c = np.random.default_rng(1).random((8, 8), np.float32), np.zeros((8, 8), np.float32)
    tilelang.build(sch.mod, target=target)["main"](a, c)
    np.testing.assert_allclose(c, a * 2 + 1, rtol=1e-6)


def test_unsafe_set_dtype_loses_precision_as_asked():
    sch = tilelang.Schedule(tilelang.parse(STAGES))
    sch.unsafe_set_dtype("B", 0, "float16")
    a = np.full((8, 8), 1.0009765625 + 2**-12, np.float32)  # not representable in fp16
    c = np.zeros((8, 8), np.float32)
    tilelang.build(sch.mod, target="c")["main"](a, c)
    expected = (a * 2).astype(np.float16).astype(np.float32) + 1
    np.testing.assert_array_equal(c, expected)


@pytest.mark.parametrize(
    "block,index,dtype,needle",
    [
        ("C", 0, "float16", "C is not allocated inside the function"),
        ("B", 1, "float16", "write buffer index 1 is out of range"),
        ("B", -1, "float16", "write buffer index -1 is out of range"),
        ("B", 0, "float17", "unknown dtype 'float17'"),
    ],
)
def test_unsafe_set_dtype_errors(block, index, dtype, needle):
    sch = tilelang.Schedule(tilelang.parse(STAGES))
    before = sch.mod
    with pytest.raises(ScheduleError, match=needle):
        sch.unsafe_set_dtype(block, index, dtype)
    assert sch.mod is before

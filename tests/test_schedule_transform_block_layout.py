"""transform_block_layout: golden IR, numbers against NumPy on every CPU backend for
transposed, fused and split iteration spaces (a reduction included), trace replay,
and a ScheduleError for each precondition that leaves the schedule unchanged."""

from __future__ import annotations

import numpy as np
import pytest

import tilelang
from tilelang.errors import ScheduleError
from tilelang.ir import structural_equal

MATMUL = """
@T.prim_func
def main(A: T.Buffer((4, 6), "float32"), B: T.Buffer((6, 8), "float32"), C: T.Buffer((4, 8), "float32")):
    T.func_attr({"global_symbol": "main"})
    for i, j, k in T.grid(4, 8, 6):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""

MAPS = {
    "transpose": lambda i, j, k: (j, i, k),
    "fuse_spatial": lambda i, j, k: (i * 8 + j, k),
    "split_and_reorder": lambda i, j, k: (j // 2, i, k // 3, j % 2, k % 3),
    "reduction_first": lambda i, j, k: (k, j * 4 + i),
}


def transformed(name):
    sch = tilelang.Schedule(tilelang.parse(MATMUL))
    sch.transform_block_layout("C", MAPS[name])
    return sch


def test_golden_and_replay(golden):
    sch = transformed("split_and_reorder")
    golden(sch.mod["main"].script())
    again = tilelang.Schedule(tilelang.parse(MATMUL))
    sch.trace.apply_to_schedule(again)
    assert structural_equal(again.mod["main"], sch.mod["main"], map_free_vars=True)
    assert "index_map=lambda i, j, k: (j // 2, i, k // 3, j % 2, k % 3)" in str(sch.trace)


def test_iterator_kinds_follow_the_old_ones():
    block = transformed("reduction_first").mod["main"].script()
    assert 'v0, v1 = T.axis.remap("RS", [ax0, ax1])' in block
    assert "for ax0, ax1 in T.grid(6, 32):" in block


@pytest.mark.parametrize("target", ["python", "c", "llvm"])
@pytest.mark.parametrize("name", sorted(MAPS))
def test_computes_the_same(target, name):
    rng = np.random.default_rng(9)
    a, b = rng.random((4, 6), np.float32), rng.random((6, 8), np.float32)
    c = np.zeros((4, 8), np.float32)
    tilelang.build(transformed(name).mod, target=target)["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)


def expect_error(text, index_map, needle, prepare=None):
    sch = tilelang.Schedule(tilelang.parse(text))
    if prepare is not None:
        prepare(sch)
    before = sch.mod
    with pytest.raises(ScheduleError, match=needle):
        sch.transform_block_layout("C", index_map)
    assert sch.mod is before


def test_error_not_a_bijection():
    expect_error(MATMUL, lambda i, j, k: (i + j, k), "is not a bijection")
    expect_error(MATMUL, lambda i, j, k: (i, k), "is not a bijection")


def test_error_mixed_iterator_kinds():
    expect_error(MATMUL, lambda i, j, k: (i, j * 6 + k), "mixes spatial and reduction")


def test_error_new_iterator_not_from_zero():
    expect_error(MATMUL, lambda i, j, k: (i + 1, j, k), "does not range from 0")


def test_error_bindings_not_the_loops():
    def split(sch):
        i, _, _ = sch.get_loops("C")
        sch.split(i, [2, 2])

    expect_error(MATMUL, lambda i, j, k: (j, i, k), "bindings must be its loops", split)


def test_error_index_map_does_not_apply():
    expect_error(MATMUL, lambda i, j: (j, i), "the index map does not apply")


def test_error_loop_holds_another_block():
    two = """
@T.prim_func
def main(A: T.Buffer((4, 6), "float32"), C: T.Buffer((4, 6), "float32")):
    for i in range(4):
        with T.block("D"):
            vd = T.axis.remap("S", [i])
            C[vd, 0] = T.float32(0)
        for j in range(6):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = A[vi, vj]
"""
    expect_error(two, lambda i, j: (j, i), "loop i must hold only the block's loop nest")

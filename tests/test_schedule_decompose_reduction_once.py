"""decompose_reduction puts the init before the loop it is given, so it runs once per
run of that loop: the loops from there down must run every block instance once. Loops
that recompute elements (compute_at over overlapping regions) or repeat the block
would accumulate twice into one initialised element; such a decomposition is refused
with the schedule unchanged, and the same decomposition one loop lower is accepted and
computes the original's numbers."""

from __future__ import annotations

import numpy as np
import pytest

import tilelang
from tilelang import ScheduleError, tir
from tilelang.ir import structural_equal

SLIDING_SUMS = """
@T.prim_func
def main(A: T.Buffer((9, 8), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((9,), "float32")
    for i, k in T.grid(9, 8):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = B[vi] + B[vi + 1]
"""

REPEATED = """
@T.prim_func
def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4,), "float32")):
    for r, i, k in T.grid(3, 4, 8):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]
"""


def _sliding_schedule():
    sch = tir.Schedule(tilelang.parse(SLIDING_SUMS))
    block = sch.get_block("B")
    (i,) = sch.get_loops(sch.get_block("C"))
    sch.compute_at(block, i)  # B[i] and B[i + 1] recomputed per i: B[i + 1] twice overall
    return sch, block


def _sliding_result(mod):
    a = np.random.default_rng(0).random((9, 8), dtype="float32")
    c = np.zeros(8, "float32")
    tilelang.build(mod, "python")["main"](a, c)
    s = a.sum(1)
    return c, s[:-1] + s[1:]


def test_init_above_recomputing_loops_is_refused_and_leaves_the_schedule():
    sch, block = _sliding_schedule()
    before = sch.mod
    with pytest.raises(ScheduleError, match=r"decompose_reduction.*bindings overlap"):
        sch.decompose_reduction(block, sch.get_loops(block)[0])
    assert structural_equal(sch.mod, before)


def test_init_under_the_recomputing_loop_keeps_the_numbers():
    sch, block = _sliding_schedule()
    sch.decompose_reduction(block, sch.get_loops(block)[1])  # the init per i
    got, want = _sliding_result(sch.mod)
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_init_above_a_loop_that_repeats_the_block_is_refused():
    sch = tir.Schedule(tilelang.parse(REPEATED))
    block = sch.get_block("B")
    before = sch.mod
    with pytest.raises(ScheduleError, match="loop r repeats it"):
        sch.decompose_reduction(block, sch.get_loops(block)[0])
    assert structural_equal(sch.mod, before)
    sch.decompose_reduction(block, sch.get_loops(block)[1])  # under r: one init per r
    a = np.random.default_rng(1).random((4, 8), dtype="float32")
    b = np.zeros(4, "float32")
    tilelang.build(sch.mod, "python")["main"](a, b)
    np.testing.assert_allclose(b, a.sum(1), rtol=1e-5)

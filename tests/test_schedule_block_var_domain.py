"""compute_at / reverse_compute_at solve the range of each block iterator from the
region to cover (tilelang.schedule.block_var_domain): through the inverse of a
bijective index map, or index by index through ``v * e``, ``x // f`` and ``x % f``;
a loop of extent 1 contributes its only value. Each case is checked against IR we
wrote by hand and numerically against the unscheduled program."""

from __future__ import annotations

import numpy as np

import tilelang
from tilelang import tir
from tilelang.ir import assert_structural_equal


def run(mod, seed=0):
    func = mod["main"]
    rng = np.random.default_rng(seed)
    arrays = [rng.random(tuple(int(s) for s in b.shape), "float32") for b in func.buffers]
    tilelang.build(mod, target="python")["main"](*arrays)
    return arrays


def assert_same_numbers(mod, scheduled):
    for want, got in zip(run(mod), run(scheduled)):
        np.testing.assert_allclose(got, want, rtol=1e-6)


# A consumer reading a producer through a "layout change": index 1 and 4 of B are
# the quotient and remainder of one fused iterator ``v1 * 4 + v3`` by 8.
LAYOUT = """
@T.prim_func
def main(A: T.Buffer((2, 3, 8), "float32"), C: T.Buffer((2, 6, 4), "float32")):
    B = T.alloc_buffer((2, 3, 8), "float32")
    for i, j, k in T.grid(2, 3, 8):
        with T.block("B"):
            vi, vj, vk = T.axis.remap("SSS", [i, j, k])
            B[vi, vj, vk] = A[vi, vj, vk] + T.float32(1)
    for i, j, k in T.grid(2, 6, 4):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSS", [i, j, k])
            C[vi, vj, vk] = B[vi, (vj * 4 + vk) // 8, (vj * 4 + vk) % 8]
"""

LAYOUT_AFTER = """
@T.prim_func
def main(A: T.Buffer((2, 3, 8), "float32"), C: T.Buffer((2, 6, 4), "float32")):
    B = T.alloc_buffer((2, 3, 8), "float32")
    for i, j in T.grid(2, 3):
        for k in range(8):
            with T.block("B"):
                vi, vj, vk = T.axis.remap("SSS", [i, j, k])
                B[vi, vj, vk] = A[vi, vj, vk] + T.float32(1)
        for ax0, ax1 in T.grid(2, 4):
            with T.block("C"):
                vi = T.axis.spatial(2, i)
                vj = T.axis.spatial(6, j * 2 + ax0)
                vk = T.axis.spatial(4, ax1)
                C[vi, vj, vk] = B[vi, (vj * 4 + vk) // 8, (vj * 4 + vk) % 8]
"""


def test_reverse_compute_at_inverts_a_fused_layout_index():
    mod = tilelang.parse(LAYOUT)
    sch = tir.Schedule(mod)
    sch.reverse_compute_at(sch.get_block("C"), sch.get_loops("B")[1])
    assert_structural_equal(sch.mod["main"], tilelang.parse(LAYOUT_AFTER)["main"])
    assert_same_numbers(mod, sch.mod)


# ``v % 4 // 2`` and ``v % 2`` leave v free; ``v // 4`` alone fixes its range.
NESTED_DIV_MOD = """
@T.prim_func
def main(A: T.Buffer((4, 2, 2), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((4, 2, 2), "float32")
    for i, j, k in T.grid(4, 2, 2):
        with T.block("B"):
            vi, vj, vk = T.axis.remap("SSS", [i, j, k])
            B[vi, vj, vk] = A[vi, vj, vk] * T.float32(2)
    for i in range(16):
        with T.block("C"):
            v = T.axis.spatial(16, i)
            C[v] = B[v // 4, v % 4 // 2, v % 2]
"""

NESTED_DIV_MOD_AFTER = """
@T.prim_func
def main(A: T.Buffer((4, 2, 2), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((4, 2, 2), "float32")
    for i in range(4):
        for j, k in T.grid(2, 2):
            with T.block("B"):
                vi, vj, vk = T.axis.remap("SSS", [i, j, k])
                B[vi, vj, vk] = A[vi, vj, vk] * T.float32(2)
        for ax0 in range(4):
            with T.block("C"):
                v = T.axis.spatial(16, i * 4 + ax0)
                C[v] = B[v // 4, v % 4 // 2, v % 2]
"""


def test_reverse_compute_at_peels_nested_division_and_modulo():
    mod = tilelang.parse(NESTED_DIV_MOD)
    sch = tir.Schedule(mod)
    sch.reverse_compute_at(sch.get_block("C"), sch.get_loops("B")[0])
    assert_structural_equal(sch.mod["main"], tilelang.parse(NESTED_DIV_MOD_AFTER)["main"])
    assert_same_numbers(mod, sch.mod)


# A blockized producer writes a 4-element tile per instance: ``vo * 4`` at its
# lower end solves vo from the consumer's range.
TILE_PRODUCER = """
@T.prim_func
def main(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((16,), "float32")
    for io in range(4):
        with T.block("B_o"):
            vo = T.axis.spatial(4, io)
            T.reads(A[vo * 4:vo * 4 + 4])
            T.writes(B[vo * 4:vo * 4 + 4])
            for ii in range(4):
                with T.block("B"):
                    vi = T.axis.spatial(16, vo * 4 + ii)
                    B[vi] = A[vi] + T.float32(3)
    for i_0, i_1 in T.grid(2, 8):
        with T.block("C"):
            v = T.axis.spatial(16, i_0 * 8 + i_1)
            C[v] = B[v] * T.float32(2)
"""


TILE_PRODUCER_AFTER = """
@T.prim_func
def main(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((16,), "float32")
    for i_0 in range(2):
        for ax0 in range(2):
            with T.block("B_o"):
                vo = T.axis.spatial(4, i_0 * 2 + ax0)
                T.reads(A[vo * 4:vo * 4 + 4])
                T.writes(B[vo * 4:vo * 4 + 4])
                for ii in range(4):
                    with T.block("B"):
                        vi = T.axis.spatial(16, vo * 4 + ii)
                        B[vi] = A[vi] + T.float32(3)
        for i_1 in range(8):
            with T.block("C"):
                v = T.axis.spatial(16, i_0 * 8 + i_1)
                C[v] = B[v] * T.float32(2)
"""


def test_compute_at_of_a_tile_writing_block_sweeps_whole_tiles():
    mod = tilelang.parse(TILE_PRODUCER)
    sch = tir.Schedule(mod)
    sch.compute_at(sch.get_block("B_o"), sch.get_loops("C")[0])
    assert_structural_equal(sch.mod["main"], tilelang.parse(TILE_PRODUCER_AFTER)["main"])
    assert_same_numbers(mod, sch.mod)


# A loop of extent 1 is its only value: the moved block's binding is 0, not i.
UNIT_LOOP = """
@T.prim_func
def main(A: T.Buffer((1, 8), "float32"), C: T.Buffer((1, 8), "float32")):
    B = T.alloc_buffer((1, 8), "float32")
    for i, j in T.grid(1, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] + T.float32(1)
    for i in range(1):
        for j in range(8):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj] * T.float32(2)
"""

UNIT_LOOP_AFTER = """
@T.prim_func
def main(A: T.Buffer((1, 8), "float32"), C: T.Buffer((1, 8), "float32")):
    B = T.alloc_buffer((1, 8), "float32")
    for i in range(1):
        for ax0 in range(8):
            with T.block("B"):
                vi = T.axis.spatial(1, 0)
                vj = T.axis.spatial(8, ax0)
                B[vi, vj] = A[vi, vj] + T.float32(1)
        for j in range(8):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj] * T.float32(2)
"""


def test_compute_at_under_a_unit_loop_binds_its_value():
    mod = tilelang.parse(UNIT_LOOP)
    sch = tir.Schedule(mod)
    sch.compute_at(sch.get_block("B"), sch.get_loops("C")[0])
    assert_structural_equal(sch.mod["main"], tilelang.parse(UNIT_LOOP_AFTER)["main"])
    assert_same_numbers(mod, sch.mod)

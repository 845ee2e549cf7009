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


# 45 channel groups of 16 over 720 channels split in two halves of 360: the
# consumer half c_o reads groups c_o * 22 .. c_o * 22 + 22 (23 of them, one shared).
CHANNEL_GROUPS = """
@T.prim_func
def main(X: T.Buffer((720,), "float32"), Y: T.Buffer((720,), "float32")):
    B = T.alloc_buffer((45,), "float32", scope="")
    for i in range(45):
        with T.block("B"):
            vi = T.axis.spatial(45, i)
            B[vi] = T.Cast("float32", vi)
    for c_o, c_i in T.grid(2, 360):
        with T.block("Y"):
            cc = T.axis.spatial(720, c_o * 360 + c_i)
            Y[cc] = X[cc] + B[cc // 16]
"""

CHANNEL_GROUPS_AFTER = """
@T.prim_func
def main(X: T.Buffer((720,), "float32"), Y: T.Buffer((720,), "float32")):
    B = T.alloc_buffer((45,), "float32")
    for c_o in range(2):
        for ax0 in range(23):
            with T.block("B"):
                vi = T.axis.spatial(45, c_o * 22 + ax0)
                B[vi] = T.Cast("float32", vi)
        for c_i in range(360):
            with T.block("Y"):
                cc = T.axis.spatial(720, c_o * 360 + c_i)
                Y[cc] = X[cc] + B[cc // 16]
"""


def test_compute_at_of_channel_groups_folds_the_region_and_empty_scope_is_global():
    mod = tilelang.parse(CHANNEL_GROUPS)
    assert mod["main"].body.block.alloc_buffers[0].scope == "global"
    sch = tir.Schedule(mod)
    sch.compute_at(sch.get_block("B"), sch.get_loops("Y")[0])
    assert_structural_equal(sch.mod["main"], tilelang.parse(CHANNEL_GROUPS_AFTER)["main"])
    assert_same_numbers(mod, sch.mod)


SYMBOLIC = """
@T.prim_func
def main(x: T.handle, y: T.handle, n: T.int64):
    X = T.match_buffer(x, (T.int64(4), n * T.int64(32)), "float32")
    Y = T.match_buffer(y, (T.int64(4), n * T.int64(32)), "float32")
    B = T.alloc_buffer((T.int64(4), n * T.int64(32)), "float32")
    for i, k in T.grid(T.int64(4), n * T.int64(32)):
        with T.block("B"):
            vi, vk = T.axis.remap("SS", [i, k])
            B[vi, vk] = X[vi, vk] + T.float32(1)
    for i, k in T.grid(T.int64(4), n * T.int64(32)):
        with T.block("Y"):
            vi, vk = T.axis.remap("SS", [i, k])
            Y[vi, vk] = B[vi, vk] * T.float32(2)
"""

SYMBOLIC_AFTER = """
@T.prim_func
def main(x: T.handle, y: T.handle, n: T.int64):
    X = T.match_buffer(x, (T.int64(4), n * T.int64(32)), "float32")
    Y = T.match_buffer(y, (T.int64(4), n * T.int64(32)), "float32")
    B = T.alloc_buffer((T.int64(4), n * T.int64(32)), "float32")
    for i, k_0 in T.grid(T.int64(4), n):
        for ax0 in range(T.int64(32)):
            with T.block("B"):
                vi = T.axis.spatial(T.int64(4), i)
                vk = T.axis.spatial(n * T.int64(32), k_0 * T.int64(32) + ax0)
                B[vi, vk] = X[vi, vk] + T.float32(1)
        for k_1 in range(T.int64(32)):
            with T.block("Y"):
                vi = T.axis.spatial(T.int64(4), i)
                vk = T.axis.spatial(n * T.int64(32), k_0 * T.int64(32) + k_1)
                Y[vi, vk] = B[vi, vk] * T.float32(2)
"""


def test_split_of_a_symbolic_multiple_and_compute_at_need_no_predicate():
    # (n * 32 + 31) // 32 is n, so the split is perfect; k_0 * 32 + ax0 < n * 32 is
    # proved from k_0 < n and ax0 < 32, so the moved block needs no T.where either
    mod = tilelang.parse(SYMBOLIC)
    sch = tir.Schedule(mod)
    i, k = sch.get_loops("Y")
    k_0, _ = sch.split(k, [None, 32])
    sch.compute_at(sch.get_block("B"), k_0)
    assert_structural_equal(sch.mod["main"], tilelang.parse(SYMBOLIC_AFTER)["main"])
    n = 3
    rng = np.random.default_rng(0)
    xs = rng.random((4, n * 32), "float32")
    want, got = np.zeros_like(xs), np.zeros_like(xs)
    tilelang.build(mod, target="python")["main"](xs, want, n)
    tilelang.build(sch.mod, target="python")["main"](xs, got, n)
    np.testing.assert_allclose(got, want, rtol=1e-6)

"""Schedules that succeed keep the program's results (issue 20, part 3): cache_write
of a block that reads its output copies in first and writes back only what the block
writes; cache_read finds producers that are plain loops and updates the nested blocks
of a blockized reader; rfactor writes back before a consumer sharing its loop; a
handle of another schedule or a bad sampling decision is a ScheduleError."""

from __future__ import annotations

import numpy as np
import pytest

import tilelang
from tilelang import ScheduleError, tir


def run(mod, seed=0):
    func = mod["main"]
    rng = np.random.default_rng(seed)
    arrays = [rng.random(tuple(int(s) for s in b.shape), "float32") for b in func.buffers]
    tilelang.build(mod, target="python")["main"](*arrays)
    return arrays


def assert_same_numbers(mod, scheduled):
    for want, got in zip(run(mod), run(scheduled)):
        np.testing.assert_allclose(got, want, rtol=1e-6)


ACCUMULATE = """
@T.prim_func
def main(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("C"):
            vi = T.axis.spatial(16, i)
            C[vi] = C[vi] + A[vi]
"""

PARTIAL = """
@T.prim_func
def main(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(16, i + 4)
            C[vi] = A[vi] * T.float32(2)
"""

STRIDED = """
@T.prim_func
def main(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("C"):
            vi = T.axis.spatial(16, i)
            T.where(i % 2 == 0)
            C[vi] = A[vi] * T.float32(2)
"""


def test_cache_write_of_an_accumulating_block_copies_in_first():
    mod = tilelang.parse(ACCUMULATE)
    sch = tir.Schedule(mod)
    sch.cache_write(sch.get_block("C"), 0, "local")
    assert "C_local_in" in sch.mod.script()
    assert_same_numbers(mod, sch.mod)


def test_cache_write_back_covers_only_the_written_region():
    mod = tilelang.parse(PARTIAL)
    sch = tir.Schedule(mod)
    sch.cache_write(sch.get_block("C"), 0, "local")
    text = sch.mod.script()
    assert "for ax0 in range(8):" in text and "C_local_in" not in text
    assert_same_numbers(mod, sch.mod)


def test_cache_write_of_a_sparsely_predicated_block_copies_in():
    mod = tilelang.parse(STRIDED)
    sch = tir.Schedule(mod)
    sch.cache_write(sch.get_block("C"), 0, "local")
    assert "C_local_in" in sch.mod.script()
    assert_same_numbers(mod, sch.mod)


def test_cache_write_of_a_split_block_needs_no_copy_in():
    text = ACCUMULATE.replace("C[vi] = C[vi] + A[vi]", "C[vi] = A[vi]")
    mod = tilelang.parse(text)
    sch = tir.Schedule(mod)
    (i,) = sch.get_loops("C")
    sch.split(i, factors=[None, 5])  # T.where(i_0 * 5 + i_1 < 16): bounds only
    sch.cache_write(sch.get_block("C"), 0, "local")
    assert "C_local_in" not in sch.mod.script()
    assert_same_numbers(mod, sch.mod)


PLAIN_PRODUCER = """
@T.prim_func
def main(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((16,), "float32")
    for i in range(16):
        B[i] = A[i] + T.float32(1)
    for i in range(16):
        with T.block("C"):
            vi = T.axis.spatial(16, i)
            C[vi] = B[vi] * T.float32(2)
"""


def test_cache_read_copies_after_a_producer_that_is_a_plain_loop():
    mod = tilelang.parse(PLAIN_PRODUCER)
    sch = tir.Schedule(mod)
    sch.cache_read(sch.get_block("C"), 0, "shared")
    assert_same_numbers(mod, sch.mod)


def test_cache_write_refuses_a_nest_with_plain_accesses():
    text = """
@T.prim_func
def main(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    for i in range(16):
        with T.block("C"):
            vi = T.axis.spatial(16, i)
            C[vi] = A[vi]
        A[i] = C[i]
"""
    sch = tir.Schedule(tilelang.parse(text))
    before = sch.mod
    with pytest.raises(ScheduleError, match="cache_write.*plain loop"):
        sch.cache_write(sch.get_block("C"), 0, "local")
    assert sch.mod is before


BLOCKIZED = """
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16), "float32")
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i_0, i_1, j in T.grid(4, 4, 16):
        with T.block("C"):
            vi = T.axis.spatial(16, i_0 * 4 + i_1)
            vj = T.axis.spatial(16, j)
            C[vi, vj] = B[vi, vj] + T.float32(1)
"""


def test_cache_read_under_a_blockized_block_updates_nested_reads():
    mod = tilelang.parse(BLOCKIZED)
    sch = tir.Schedule(mod)
    i_0, i_1, _ = sch.get_loops("C")
    outer = sch.blockize(i_1)
    cached = sch.cache_read(outer, 0, "shared")
    text = sch.mod.script()
    assert "T.reads(B[" not in text.split('T.block("C")')[1]
    # The cache is the consumer's only input, so compute_at finds it.
    sch.compute_at(cached, sch.get_loops(outer)[0])
    assert_same_numbers(mod, sch.mod)


SHARED_NEST = """
@T.prim_func
def main(A: T.Buffer((8, 16), "float32"), D: T.Buffer((8,), "float32")):
    C = T.alloc_buffer((8,), "float32")
    for i in range(8):
        for k in range(16):
            with T.block("C"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    C[vi] = T.float32(0)
                C[vi] = C[vi] + A[vi, vk]
        with T.block("D"):
            vi = T.axis.spatial(8, i)
            D[vi] = C[vi] * T.float32(2)
"""


def test_rfactor_writes_back_before_a_consumer_in_the_same_loop():
    mod = tilelang.parse(SHARED_NEST)
    sch = tir.Schedule(mod)
    _, k = sch.get_loops("C")
    _, k_1 = sch.split(k, factors=[None, 4])
    sch.rfactor(k_1, 0)
    text = sch.mod.script()
    assert text.index('T.block("C")') < text.index('T.block("D")')
    assert_same_numbers(mod, sch.mod)


def test_rfactor_refuses_a_shared_loop_that_carries_the_reduction():
    text = """
@T.prim_func
def main(A: T.Buffer((8, 16), "float32"), B: T.Buffer((16,), "float32"), C: T.Buffer((8,), "float32")):
    for k_0 in range(4):
        for i, k_1 in T.grid(8, 4):
            with T.block("C"):
                vi = T.axis.spatial(8, i)
                vk = T.axis.reduce(16, k_0 * 4 + k_1)
                with T.init():
                    C[vi] = T.float32(0)
                C[vi] = C[vi] + A[vi, vk]
        for j in range(4):
            with T.block("B"):
                vj = T.axis.spatial(16, k_0 * 4 + j)
                B[vj] = T.float32(1)
"""
    sch = tir.Schedule(tilelang.parse(text))
    before = sch.mod
    _, _, k_1 = sch.get_loops("C")
    with pytest.raises(ScheduleError, match="rfactor.*k_0 carries the reduction"):
        sch.rfactor(k_1, 0)
    assert sch.mod is before


def test_a_handle_of_another_schedule_is_a_schedule_error():
    mod = tilelang.parse(ACCUMULATE)
    mine, other = tir.Schedule(mod), tir.Schedule(mod)
    (i,) = other.get_loops("C")
    factors = other.sample_perfect_tile(i, 2)
    (j,) = mine.get_loops("C")
    before = mine.mod
    with pytest.raises(ScheduleError, match="split.*of this schedule"):
        mine.split(j, factors)
    with pytest.raises(ScheduleError, match="of this schedule"):
        mine.split(i, [4, 4])
    with pytest.raises(ScheduleError, match="of this schedule"):
        mine.compute_inline(other.get_block("C"))
    assert mine.mod is before


@pytest.mark.parametrize(
    "decision", [["x", "y"], 3, [4.5, 3.5], [True, 16]], ids=["str", "scalar", "float", "bool"]
)
def test_a_bad_perfect_tile_decision_is_a_schedule_error(decision):
    sch = tir.Schedule(tilelang.parse(ACCUMULATE))
    (i,) = sch.get_loops("C")
    with pytest.raises(ScheduleError, match="sample_perfect_tile"):
        sch.sample_perfect_tile(i, 2, decision=decision)


@pytest.mark.parametrize("decision", [True, "a", 2, -1, 0.0])
def test_a_bad_categorical_decision_is_a_schedule_error(decision):
    sch = tir.Schedule(tilelang.parse(ACCUMULATE))
    with pytest.raises(ScheduleError, match="sample_categorical"):
        sch.sample_categorical([1, 2], [0.5, 0.5], decision=decision)


REDUCE_THEN_MAP = """
@T.prim_func
def main(A: T.Buffer((4, 4), "float32"), Out: T.Buffer((4, 4), "float32")):
    T0 = T.alloc_buffer((4, 4), "float32")
    for i, j, k in T.grid(4, 4, 4):
        with T.block("S0"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                T0[vi, vj] = T.float32(0)
            T0[vi, vj] = T0[vi, vj] + A[vi, vk] * T.float32(0.5)
    for i, j in T.grid(4, 4):
        with T.block("S1"):
            vi, vj = T.axis.remap("SS", [i, j])
            Out[vi, vj] = T0[vi, 3 - vj] + T.float32(3)
"""


def test_consumer_under_a_reduction_loop_keeps_the_accumulator_alive():
    # After reverse_compute_at under k the accumulator T0 is only used inside the k
    # loop, but it must not be allocated (and reset) per k iteration when lowered.
    mod = tilelang.parse(REDUCE_THEN_MAP)
    sch = tir.Schedule(mod)
    _, _, k = sch.get_loops("S0")
    sch.reverse_compute_at(sch.get_block("S1"), k)
    assert_same_numbers(mod, sch.mod)


NESTED_PRODUCER = """
@T.prim_func
def main(A: T.Buffer((8, 6), "float32"), Out: T.Buffer((8, 6), "float32")):
    T0 = T.alloc_buffer((8, 6), "float32")
    for i, j in T.grid(8, 6):
        with T.block("S0"):
            vi, vj = T.axis.remap("SS", [i, j])
            T0[vi, vj] = A[vi, 5 - vj] + T.float32(3)
    for i, j in T.grid(8, 6):
        with T.block("S1"):
            vi, vj = T.axis.remap("SS", [i, j])
            Out[vi, vj] = T0[vi, vj] * T.float32(2) - T.float32(1)
"""


def test_compute_inline_refuses_a_producer_read_outside_its_scope():
    sch = tir.Schedule(tilelang.parse(NESTED_PRODUCER))
    i, _ = sch.get_loops("S0")
    sch.blockize(i)  # S0 now sits in the scope of block S0_o; S1 reads T0 outside it
    before = sch.mod
    with pytest.raises(ScheduleError, match="compute_inline.*outside its scope"):
        sch.compute_inline(sch.get_block("S0"))
    assert sch.mod is before

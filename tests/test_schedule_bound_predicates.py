"""Primitives that sweep a region past an iterator's domain or a buffer's end add
TVM's bound predicate (``T.where(j + ax0 < 16)``) instead of touching memory out of
bounds; compute_inline leaves no reference to the inlined buffer behind."""

from __future__ import annotations

import numpy as np
import pytest

import tilelang
from tilelang import ScheduleError, tir
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.functor import post_order_visit

# C[v] reads B[v] and B[v + 1]: under loop j the region is [j, j + 1], which at
# j = 15 runs one element past B.
NEIGHBOUR = """
@T.prim_func
def main(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((16,), "float32")
    for i in range(16):
        with T.block("B"):
            v = T.axis.spatial(16, i)
            B[v] = A[v] * T.float32(2)
    for j in range(16):
        with T.block("C"):
            v = T.axis.spatial(16, j)
            T.reads(B[v:v + 2])
            T.writes(C[v])
            C[v] = T.if_then_else(v < 15, T.max(B[v], B[v + 1]), B[v])
"""

# The consumer of a 2-D producer tiled by 5 over 16 columns: the last tile sweeps
# columns 15..19 of a 16-wide domain.
TILED = """
@T.prim_func
def main(A: T.Buffer((8, 16), "float32"), C: T.Buffer((8, 16), "float32")):
    B = T.alloc_buffer((8, 16), "float32")
    for i, j in T.grid(8, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] + T.float32(1)
    for i, j_0, j_1 in T.grid(8, 4, 5):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            vj = T.axis.spatial(16, j_0 * 5 + j_1)
            T.where(j_0 * 5 + j_1 < 16)
            C[vi, vj] = B[vi, vj] * T.float32(3)
"""


def run(mod, seed=0):
    func = mod["main"]
    rng = np.random.default_rng(seed)
    arrays = [rng.random(tuple(int(s) for s in b.shape), "float32") for b in func.buffers]
    tilelang.build(mod, target="python")["main"](*arrays)
    return arrays


def predicates(mod, name):
    found = []

    def visit(node):
        if isinstance(node, S.BlockRealize) and node.block.name_hint == name:
            found.append(node.predicate)

    post_order_visit(mod["main"].body, visit)
    return found


def assert_same_numbers(mod, scheduled):
    for want, got in zip(run(mod), run(scheduled)):
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_compute_at_past_the_buffer_end_gets_bound_predicate():
    mod = tilelang.parse(NEIGHBOUR)
    sch = tir.Schedule(mod)
    (j,) = sch.get_loops("C")
    sch.compute_at(sch.get_block("B"), j)
    (pred,) = predicates(sch.mod, "B")
    assert "j + ax0 < 16" in sch.mod.script()
    assert not isinstance(pred, E.IntImm)
    assert_same_numbers(mod, sch.mod)


def test_compute_at_at_a_ragged_tile_edge_gets_bound_predicate():
    mod = tilelang.parse(TILED)
    sch = tir.Schedule(mod)
    _, j_0, _ = sch.get_loops("C")
    sch.compute_at(sch.get_block("B"), j_0)
    assert "T.where(j_0 * 5 + ax0 < 16)" in sch.mod.script()
    assert_same_numbers(mod, sch.mod)


def test_reverse_compute_at_past_the_domain_gets_bound_predicate():
    text = TILED.replace("for i, j_0, j_1 in T.grid(8, 4, 5):", "for i, j in T.grid(8, 16):")
    text = text.replace("j_0 * 5 + j_1", "j").replace("            T.where(j < 16)\n", "")
    # Tile the producer raggedly and move the consumer under the tile loop.
    mod = tilelang.parse(text)
    sch = tir.Schedule(mod)
    _, j = sch.get_loops("B")
    j_0, _ = sch.split(j, factors=[None, 5])
    sch.reverse_compute_at(sch.get_block("C"), j_0)
    assert "T.where(j_0 * 5 + ax0 < 16)" in sch.mod.script()
    assert_same_numbers(mod, sch.mod)


def test_compute_at_clips_a_region_to_a_constant_domain():
    # Under loop i of C the consumer reads B[0:16] (all of it): no predicate needed.
    mod = tilelang.parse(TILED)
    sch = tir.Schedule(mod)
    i, _, _ = sch.get_loops("C")
    sch.compute_at(sch.get_block("B"), i)
    (pred,) = predicates(sch.mod, "B")
    assert isinstance(pred, E.IntImm) and pred.value == 1
    assert_same_numbers(mod, sch.mod)


INLINE_WHERE = """
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16), "float32")
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.where(B[i, j] < T.float32(1))
            C[vi, vj] = B[vi, vj] + T.float32(1)
"""


def test_compute_inline_substitutes_into_the_consumer_predicate():
    mod = tilelang.parse(INLINE_WHERE)
    sch = tir.Schedule(mod)
    sch.compute_inline(sch.get_block("B"))
    text = sch.mod.script()
    assert "B[" not in text and "T.where(A[i, j] * T.float32(2) < T.float32(1))" in text
    assert_same_numbers(mod, sch.mod)


ACCESS_PTR = """
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16), "float32")
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(B[0:16, 0:16])
            T.writes(C[vi, vj])
            T.evaluate(B.access_ptr("r", extent=16))
            C[vi, vj] = B[vi, vj] + T.float32(1)
"""

MATCHED = """
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16), "float32")
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            Bb = T.match_buffer(B[vi:vi + 1, vj], (1, 1))
            C[vi, vj] = Bb[0, 0] + T.float32(1)
"""


@pytest.mark.parametrize("text", [ACCESS_PTR, MATCHED], ids=["access_ptr", "match_buffer"])
def test_compute_inline_refuses_opaque_consumers(text):
    sch = tir.Schedule(tilelang.parse(text))
    before = sch.mod
    with pytest.raises(ScheduleError, match="compute_inline.*opaquely"):
        sch.compute_inline(sch.get_block("B"))
    assert sch.mod is before


OVERCOMPUTED = """
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), C: T.Buffer((15, 15), "float32")):
    B = T.alloc_buffer((16, 16), "float32")
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(15, 15):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)
"""


def test_reverse_compute_inline_of_an_overcomputing_producer_is_predicated():
    # The producer sweeps 16x16 but C is only 15x15: storing C[15, j] would be
    # out of bounds without the predicate.
    mod = tilelang.parse(OVERCOMPUTED)
    sch = tir.Schedule(mod)
    sch.reverse_compute_inline(sch.get_block("C"))
    assert "T.where(i < 15 and j < 15)" in sch.mod.script()
    assert_same_numbers(mod, sch.mod)


def test_reverse_compute_inline_with_equal_symbolic_domains_needs_no_predicate():
    text = OVERCOMPUTED.replace("(15, 15)", "(16, 16)").replace("T.grid(15, 15)", "T.grid(16, 16)")
    sch = tir.Schedule(tilelang.parse(text))
    sch.reverse_compute_inline(sch.get_block("C"))
    assert "T.where" not in sch.mod.script()


ROWSUM = """
@T.prim_func
def main(A: T.Buffer((8, 16), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8, 16), "float32")
    for i, k in T.grid(8, 16):
        with T.block("B"):
            vi, vk = T.axis.remap("SS", [i, k])
            B[vi, vk] = A[vi, vk] * T.float32(2)
    for i, k in T.grid(8, 16):
        with T.block("C"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                C[vi] = T.float32(0)
            C[vi] = C[vi] + B[vi, vk]
"""


def test_reverse_compute_at_cuts_a_reduction_into_ordered_chunks():
    mod = tilelang.parse(ROWSUM)
    sch = tir.Schedule(mod)
    _, k = sch.get_loops("B")
    k_0, _ = sch.split(k, factors=[4, 4])
    sch.reverse_compute_at(sch.get_block("C"), k_0)
    assert "T.axis.reduce(16, k_0 * 4 + ax0)" in sch.mod.script()
    assert_same_numbers(mod, sch.mod)


def test_reverse_compute_at_refuses_overlapping_reduction_chunks():
    # The consumer reads a sliding window: chunks of k would overlap and be summed twice.
    text = ROWSUM.replace(
        "C[vi] = C[vi] + B[vi, vk]", "C[vi] = C[vi] + B[vi, vk] + B[vi, T.min(vk + 1, 15)]"
    )
    sch = tir.Schedule(tilelang.parse(text))
    _, k = sch.get_loops("B")
    k_0, _ = sch.split(k, factors=[4, 4])
    before = sch.mod
    with pytest.raises(ScheduleError, match="reverse_compute_at"):
        sch.reverse_compute_at(sch.get_block("C"), k_0)
    assert sch.mod is before


REVERSED = """
@T.prim_func
def main(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((16,), "float32")
    for i in range(16):
        with T.block("B"):
            v = T.axis.spatial(16, i)
            B[v] = A[v] * T.float32(2)
    for i_0, i_1 in T.grid(4, 4):
        with T.block("C"):
            v = T.axis.spatial(16, i_0 * 4 + i_1)
            C[v] = B[15 - v] + T.float32(1)
"""


def test_compute_at_with_a_reversed_index():
    mod = tilelang.parse(REVERSED)
    sch = tir.Schedule(mod)
    i_0, _ = sch.get_loops("C")
    sch.compute_at(sch.get_block("B"), i_0)
    assert "T.axis.spatial(16, 12 - i_0 * 4 + ax0)" in sch.mod.script()
    assert_same_numbers(mod, sch.mod)


def test_reverse_compute_at_with_floordiv_and_floormod_indices():
    text = """
@T.prim_func
def main(A: T.Buffer((4, 4), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((4, 4), "float32")
    for i, j in T.grid(4, 4):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for k in range(16):
        with T.block("C"):
            v = T.axis.spatial(16, k)
            C[v] = B[v // 4, v % 4] + T.float32(1)
"""
    mod = tilelang.parse(text)
    sch = tir.Schedule(mod)
    i, _ = sch.get_loops("B")
    sch.reverse_compute_at(sch.get_block("C"), i)
    assert "T.axis.spatial(16, i * 4 + ax0)" in sch.mod.script()
    assert_same_numbers(mod, sch.mod)


AFFINE_CONSUMER = """
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), C: T.Buffer((2, 8, 4, 4), "float32")):
    B = T.alloc_buffer((16, 16), "float32")
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j, k, l in T.grid(2, 8, 4, 4):
        with T.block("C"):
            vi, vj, vk, vl = T.axis.remap("SSSS", [i, j, k, l])
            C[vi, vj, vk, vl] = B[(vi * 128 + vj * 16 + vk * 4 + vl) // 16,
                                  (vi * 128 + vj * 16 + vk * 4 + vl) % 16] * B[
                (vi * 128 + vj * 16 + vk * 4 + vl) // 16, (vi * 128 + vj * 16 + vk * 4 + vl) % 16]
"""


def test_reverse_compute_inline_through_an_affine_load():
    # The consumer's iterators are recovered from the producer's element by
    # inverting the iterator map of the load; both loads become the producer value.
    mod = tilelang.parse(AFFINE_CONSUMER)
    sch = tir.Schedule(mod)
    sch.reverse_compute_inline(sch.get_block("C"))
    assert 'T.block("C")' not in sch.mod.script()
    assert_same_numbers(mod, sch.mod)


def test_reverse_compute_inline_refuses_a_consumer_the_producer_does_not_cover():
    text = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), D: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((8,), "float32")
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] * T.float32(2)
    for i in range(16):
        with T.block("C"):
            vi = T.axis.spatial(16, i)
            D[vi] = T.if_then_else(vi >= 8, B[vi - 8], T.float32(0))
"""
    sch = tir.Schedule(tilelang.parse(text))
    before = sch.mod
    with pytest.raises(ScheduleError, match="does not write every element"):
        sch.reverse_compute_inline(sch.get_block("C"))
    assert sch.mod is before

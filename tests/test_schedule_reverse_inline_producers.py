"""reverse_compute_inline into producers TVM accepts: one with its own predicate
(kept, not repeated) and one accumulating in place (an init over spatial iterators),
into which only a plain copy may be inlined."""

from __future__ import annotations

import numpy as np
import pytest

import tilelang
from tilelang import ScheduleError, tir
from tilelang.ir import assert_structural_equal

PREDICATED = """
@T.prim_func
def main(A: T.Buffer((8, 4), "float32"), C: T.Buffer((7, 4), "float32")):
    B = T.alloc_buffer((7, 4), "float32")
    for i, j in T.grid(8, 4):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.where(i < 7)
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(7, 4):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)
"""

PREDICATED_INLINED = """
@T.prim_func
def main(A: T.Buffer((8, 4), "float32"), C: T.Buffer((7, 4), "float32")):
    for i, j in T.grid(8, 4):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.where(i < 7)
            C[vi, vj] = A[vi, vj] * T.float32(2) + T.float32(1)
"""

ACCUMULATING = """
@T.prim_func
def main(A: T.Buffer((4, 6), "float32"), S: T.Buffer((4,), "float32"), C: T.Buffer((6, 4), "float32")):
    B = T.alloc_buffer((4, 6), "float32")
    for i, j in T.grid(4, 6):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi, vj], S[vi])
            T.writes(B[vi, vj])
            with T.init():
                B[vi, vj] = T.float32(0)
            B[vi, vj] = B[vi, vj] + A[vi, vj] * S[vi]
    for i, j in T.grid(6, 4):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = {value}
"""

ACCUMULATING_INLINED = """
@T.prim_func
def main(A: T.Buffer((4, 6), "float32"), S: T.Buffer((4,), "float32"), C: T.Buffer((6, 4), "float32")):
    for i, j in T.grid(4, 6):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi, vj], S[vi])
            T.writes(C[vj, vi])
            with T.init():
                C[vj, vi] = T.float32(0)
            C[vj, vi] = C[vj, vi] + A[vi, vj] * S[vi]
"""


def run(mod, shapes):
    rng = np.random.default_rng(0)
    arrays = [rng.random(s, "float32") for s in shapes]
    tilelang.build(mod, target="python")["main"](*arrays)
    return arrays


def test_a_predicated_producer_keeps_its_predicate_once():
    mod = tilelang.parse(PREDICATED)
    sch = tir.Schedule(mod)
    sch.reverse_compute_inline(sch.get_block("C"))
    assert_structural_equal(sch.mod["main"], tilelang.parse(PREDICATED_INLINED)["main"])
    want, got = run(mod, [(8, 4), (7, 4)]), run(sch.mod, [(8, 4), (7, 4)])
    np.testing.assert_allclose(got[1], want[1], rtol=1e-6)


def test_a_copy_is_inlined_into_an_accumulating_producer():
    mod = tilelang.parse(ACCUMULATING.format(value="B[vj, vi]"))
    sch = tir.Schedule(mod)
    sch.reverse_compute_inline(sch.get_block("C"))
    assert_structural_equal(sch.mod["main"], tilelang.parse(ACCUMULATING_INLINED)["main"])
    shapes = [(4, 6), (4,), (6, 4)]
    np.testing.assert_allclose(run(sch.mod, shapes)[2], run(mod, shapes)[2], rtol=1e-6)


def test_only_a_copy_may_be_inlined_into_an_accumulating_producer():
    mod = tilelang.parse(ACCUMULATING.format(value="B[vj, vi] * T.float32(2)"))
    sch = tir.Schedule(mod)
    before = sch.mod
    with pytest.raises(ScheduleError, match="accumulates into B"):
        sch.reverse_compute_inline(sch.get_block("C"))
    assert sch.mod is before


ACCESS_PTR = """
@T.prim_func
def main(L: T.Buffer((64,), "int8"), X: T.Buffer((8,), "float32"), Y: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,), "float32")
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = X[vi] * T.float32(2)
    for i in range(8):
        with T.block("Y"):
            vi = T.axis.spatial(8, i)
            T.reads(L[0:64], B[vi])
            T.writes(Y[vi])
            T.evaluate(L.access_ptr("r"))
            Y[vi] = B[vi] + T.float32(1)
"""


def test_inlining_keeps_a_read_through_access_ptr_in_the_regions():
    sch = tir.Schedule(tilelang.parse(ACCESS_PTR))
    sch.compute_inline(sch.get_block("B"))
    (realize,) = [r for r in _realizes(sch.mod) if r.block.name_hint == "Y"]
    reads = {r.buffer.name: r for r in realize.block.reads}
    assert set(reads) == {"L", "X"}
    assert [int(x.extent) for x in reads["L"].region] == [64]
    assert [w.buffer.name for w in realize.block.writes] == ["Y"]


def _realizes(mod):
    from tilelang.ir import stmt as S
    from tilelang.ir.functor import post_order_visit

    found = []
    post_order_visit(
        mod["main"].body, lambda n: found.append(n) if isinstance(n, S.BlockRealize) else None
    )
    return found

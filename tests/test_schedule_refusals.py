"""Schedules TVM refuses are ScheduleErrors here too, with the schedule unchanged."""

from __future__ import annotations

import pytest

import tilelang
from tilelang import ScheduleError, tir

GRID = """
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32")):
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] + T.float32(1)
"""


def refused(sch, action, match):
    before = sch.mod
    with pytest.raises(ScheduleError, match=match):
        action()
    assert sch.mod is before


@pytest.mark.parametrize("how", ["bind", "annotate", "parallel"])
def test_split_and_fuse_refuse_bound_or_annotated_loops(how):
    sch = tir.Schedule(tilelang.parse(GRID))
    i, j = sch.get_loops("B")
    if how == "bind":
        sch.bind(j, "threadIdx.x")
    elif how == "annotate":
        sch.annotate(j, "pragma_unroll_explicit", 1)
    else:
        sch.parallel(j)
    refused(sch, lambda: sch.fuse(i, j), "fuse")
    refused(sch, lambda: sch.split(j, factors=[None, 4]), "split")


NOT_AFFINE = """
@T.prim_func
def main(A: T.Buffer((16, 128), "float32"), B: T.Buffer((16, 128), "float32")):
    for i, j in T.grid(16, 8):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            vj = T.axis.spatial(128, j * 16)
            B[vi, vj] = A[vi, vj] + T.float32(1)
"""

PARTLY_AFFINE = """
@T.prim_func
def main(A: T.Buffer((14, 4), "float32"), B: T.Buffer((14, 4), "float32")):
    for v0, v1, v2 in T.grid(3, 4, 4):
        with T.block("B"):
            i = T.axis.spatial(14, v0 * v0 + v1)
            j = T.axis.spatial(4, v2)
            B[i, j] = A[i, j] + T.float32(1)
"""

SCAN = """
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32")):
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            vj = T.axis.scan(16, j)
            B[vi, vj] = A[vi, vj] + T.float32(1)
"""


def test_reorder_refuses_strided_bindings():
    sch = tir.Schedule(tilelang.parse(NOT_AFFINE))
    i, j = sch.get_loops("B")
    refused(sch, lambda: sch.reorder(j, i), "reorder.*not affine")


def test_reorder_refuses_a_predicate_over_other_iterators():
    sch = tir.Schedule(tilelang.parse(GRID.replace(
        'vi, vj = T.axis.remap("SS", [i, j])',
        'vi, vj = T.axis.remap("SS", [i, j])\n            T.where(i * 16 + j < 100)',
    )))  # fmt: skip
    i, j = sch.get_loops("B")
    refused(sch, lambda: sch.reorder(j, i), "reorder.*not affine")


def test_reorder_checks_only_the_loops_it_moves():
    mod = tilelang.parse(PARTLY_AFFINE)
    sch = tir.Schedule(mod)
    v0, v1, v2 = sch.get_loops("B")
    refused(sch, lambda: sch.reorder(v0, v2, v1), "reorder.*not affine")
    sch.reorder(v2, v1)  # v0 stays outside: v0 * v0 is a constant there
    assert [sch.get(lp).loop_var.name for lp in sch.get_loops("B")] == ["v0", "v2", "v1"]


def test_reorder_refuses_scan_iterators():
    sch = tir.Schedule(tilelang.parse(SCAN))
    i, j = sch.get_loops("B")
    refused(sch, lambda: sch.reorder(j, i), "reorder.*neither spatial nor reduction")


NOT_QUASI_AFFINE = """
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16,), "float32")):
    for i, k in T.grid(16, 4):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            vk = T.axis.reduce(16, k * k)
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]
"""

NOT_COMPACT = """
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16,), "float32")):
    for i, k in T.grid(16, 16):
        with T.block("B"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                B[vk] = T.float32(0)
            B[vk] = B[vk] + A[vi, vk]
"""

IN_PLACE = """
@T.prim_func
def main(A: T.Buffer((16,), "float32")):
    for i in range(15):
        with T.block("opaque"):
            A[i + 1] = A[i + 1] + A[i]
"""


@pytest.mark.parametrize(
    "text, match",
    [(NOT_QUASI_AFFINE, "quasi-affine"), (NOT_COMPACT, "reduction iterator"),
     (IN_PLACE, "reads what it writes")],
    ids=["not_quasi_affine", "reduction_writes_by_reduce_iter", "in_place"],
)  # fmt: skip
@pytest.mark.parametrize("kind", ["parallel", "vectorize"])
def test_parallel_and_vectorize_need_compact_dataflow(text, match, kind):
    sch = tir.Schedule(tilelang.parse(text))
    outer = sch.get_loops("opaque" if "opaque" in text else "B")[0]
    refused(sch, lambda: getattr(sch, kind)(outer), f"{kind}.*{match}")


CHAIN = """
@T.prim_func
def main(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((16,), "float32")
    for i in range(16):
        with T.block("B0"):
            vi = T.axis.spatial(16, i)
            B[vi] = A[vi]
    for i in range(16):
        with T.block("B1"):
            vi = T.axis.spatial(16, i)
            B[vi] = A[vi] * T.float32(2)
    for i in range(16):
        with T.block("C"):
            vi = T.axis.spatial(16, i)
            C[vi] = B[vi] + T.float32(1)
"""


def test_cache_read_refuses_several_producers():
    sch = tir.Schedule(tilelang.parse(CHAIN))
    refused(sch, lambda: sch.cache_read(sch.get_block("C"), 0, "shared"), "several producers")


@pytest.mark.parametrize("scope", ["test_scope", "", "sharedx", "shared memory"])
def test_cache_and_set_scope_refuse_unknown_scopes(scope):
    sch = tir.Schedule(tilelang.parse(CHAIN))
    refused(sch, lambda: sch.cache_read("C", 0, scope), "cache_read.*invalid storage scope")
    refused(sch, lambda: sch.cache_write("C", 0, scope), "cache_write.*invalid storage scope")
    refused(sch, lambda: sch.set_scope("B0", 0, scope), "set_scope.*invalid storage scope")


def test_buffers_can_be_named():
    sch = tir.Schedule(tilelang.parse(CHAIN))
    sch.set_scope("B0", "B", "shared.dyn")
    assert 'scope="shared.dyn"' in sch.mod.script()
    sch.cache_write("C", "C", "local")
    assert "C_local" in sch.mod.script()


PARALLEL_REDUCTION = """
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(16):
        for k in T.parallel(16):
            with T.block("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]
"""


@pytest.mark.parametrize(
    "text, match",
    [(PARALLEL_REDUCTION, "not serial"), (NOT_QUASI_AFFINE, "quasi-affine")],
    ids=["parallel_loop", "not_quasi_affine"],
)
def test_rfactor_refuses_parallel_reduction_loops_and_non_affine_bindings(text, match):
    sch = tir.Schedule(tilelang.parse(text))
    _, k = sch.get_loops("B")
    refused(sch, lambda: sch.rfactor(k, 0), f"rfactor.*{match}")


TWO_PRODUCERS = """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), D: T.Buffer((8, 8), "float32")):
    B = T.alloc_buffer((8, 8), "float32")
    C = T.alloc_buffer((8, 8), "float32")
    for i, j in T.grid(8, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(8, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] + T.float32(1)
    for i, j in T.grid(8, 8):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = B[vi, vj] + C[vi, vj]
"""


def test_reverse_compute_at_needs_every_producer_under_the_loop():
    sch = tir.Schedule(tilelang.parse(TWO_PRODUCERS))
    i, _ = sch.get_loops("C")
    refused(sch, lambda: sch.reverse_compute_at(sch.get_block("D"), i), "all the producer")

"""reindex_cache_read / reindex_cache_write: the cache stage in the block's own
iteration space (IR against reviewed expected text, numbers against the python
reference backend), the errors (schedule unchanged), and replay of the trace, whose
index map prints as a lambda."""

from __future__ import annotations

import numpy as np
import pytest

import tilelang
from tilelang import tir
from tilelang.errors import ScheduleError
from tilelang.ir import assert_structural_equal

PRODUCER_CONSUMER = """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    B = T.alloc_buffer((8, 8))
    for i, j in T.grid(8, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(8, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)
"""

READ_EXPECTED = """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    B = T.alloc_buffer((8, 8))
    B_shared = T.alloc_buffer((8, 4, 2), scope="shared")
    for i, j in T.grid(8, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi, vj])
            T.writes(B[vi, vj])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(8, 8):
        with T.block("B_shared"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(B[vi, vj])
            T.writes(B_shared[vj, vi // 2, vi % 2])
            B_shared[vj, vi // 2, vi % 2] = B[vi, vj]
    for i, j in T.grid(8, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(B_shared[vj, vi // 2, vi % 2])
            T.writes(C[vi, vj])
            C[vi, vj] = B_shared[vj, vi // 2, vi % 2] + T.float32(1)
"""

ROW_SUM = """
@T.prim_func
def main(A: T.Buffer((4, 8, 6), "float32"), C: T.Buffer((4, 8), "float32")):
    B = T.alloc_buffer((4, 8))
    for i, j, k in T.grid(4, 8, 6):
        with T.block("B"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                B[vi, vj] = T.float32(0)
            B[vi, vj] = B[vi, vj] + A[vi, vj, vk]
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSS", [i, j, k])
            T.where(k == 5)
            C[vi, vj] = B[vi, vj] * T.float32(2)
"""

WRITE_EXPECTED = """
@T.prim_func
def main(A: T.Buffer((4, 8, 6), "float32"), C: T.Buffer((4, 8), "float32")):
    B = T.alloc_buffer((4, 8))
    B_local = T.alloc_buffer((8, 4), scope="local")
    for i, j, k in T.grid(4, 8, 6):
        with T.block("B"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            T.reads(A[vi, vj, vk])
            T.writes(B_local[vj, vi])
            with T.init():
                B_local[vj, vi] = T.float32(0)
            B_local[vj, vi] = B_local[vj, vi] + A[vi, vj, vk]
        with T.block("B_local"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(B_local[vj, vi])
            T.writes(B[vi, vj])
            B[vi, vj] = B_local[vj, vi]
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSS", [i, j, k])
            T.where(k == 5)
            T.reads(B[vi, vj])
            T.writes(C[vi, vj])
            C[vi, vj] = B[vi, vj] * T.float32(2)
"""


def run(mod, *shapes):
    rng = np.random.default_rng(0)
    a = rng.random(shapes[0], "float32")
    c = np.zeros(shapes[1], "float32")
    tilelang.build(mod, target="python")["main"](a, c)
    return a, c


def replays(sch, original):
    text_replay = tir.Schedule(original)
    exec("\n".join(sch.trace.as_python()), {}, {"sch": text_replay})  # noqa: S102
    assert_structural_equal(text_replay.mod["main"], sch.mod["main"])
    replay = tir.Schedule(original)
    sch.trace.apply_to_schedule(replay)
    assert_structural_equal(replay.mod["main"], sch.mod["main"])


def test_reindex_cache_read_ir_numbers_and_trace():
    mod = tilelang.parse(PRODUCER_CONSUMER)
    sch = tir.Schedule(mod)
    cache = sch.reindex_cache_read("C", 0, "shared", lambda i, j: (j, i // 2, i % 2))
    assert sch.get(cache).name_hint == "B_shared"
    assert_structural_equal(sch.mod["main"], tilelang.parse(READ_EXPECTED)["main"])
    a, c = run(sch.mod, (8, 8), (8, 8))
    np.testing.assert_allclose(c, a * 2 + 1)
    assert (
        'sch.reindex_cache_read(block=b0, read_buffer_index=0, storage_scope="shared", '
        "index_map=lambda i, j: (j, i // 2, i % 2))"
    ) in str(sch.trace)
    replays(sch, mod)


def test_reindex_cache_write_of_a_reduction_sits_before_its_consumer():
    mod = tilelang.parse(ROW_SUM)
    sch = tir.Schedule(mod)
    sch.reindex_cache_write("B", 0, "local", lambda i, j, k: (j, i))
    assert_structural_equal(sch.mod["main"], tilelang.parse(WRITE_EXPECTED)["main"])
    a, c = run(sch.mod, (4, 8, 6), (4, 8))
    np.testing.assert_allclose(c, a.sum(axis=2) * 2, rtol=1e-5)
    replays(sch, mod)


def test_reindex_cache_write_of_an_output_goes_to_the_end_of_the_scope():
    mod = tilelang.parse(PRODUCER_CONSUMER)
    sch = tir.Schedule(mod)
    sch.reindex_cache_write("C", 0, "local", lambda i, j: (j, i))
    body = sch.mod["main"].body.block.body.seq
    assert [s.body.body.block.name_hint for s in body] == ["B", "C", "C_local"]
    a, c = run(sch.mod, (8, 8), (8, 8))
    np.testing.assert_allclose(c, a * 2 + 1)


@pytest.mark.parametrize(
    "primitive, block, index_map, reason",
    [
        ("reindex_cache_read", "C", lambda i, j: j * 2, "appears in the old indices"),
        ("reindex_cache_write", "B", lambda i, j: i, "appears in the old indices"),
        ("reindex_cache_read", "C", lambda i, j: (i, i), "vj appears in the old indices"),
        ("reindex_cache_read", "C", lambda i: i, "bad index map"),
    ],
)
def test_mismatched_index_maps_are_refused(primitive, block, index_map, reason):
    sch = tir.Schedule(tilelang.parse(PRODUCER_CONSUMER))
    before = sch.mod
    with pytest.raises(ScheduleError) as info:
        getattr(sch, primitive)(block, 0, "shared", index_map)
    assert sch.mod is before
    assert str(info.value).startswith(primitive)
    assert reason in str(info.value)


def test_a_region_access_is_refused():
    mod = tilelang.parse("""
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32")):
    for i in range(8):
        with T.block("row"):
            vi = T.axis.remap("S", [i])
            T.reads(A[vi, 0:8])
            T.writes(B[vi, 0:8])
            for j in range(8):
                B[vi, j] = A[vi, j]
""")
    for primitive in ("reindex_cache_read", "reindex_cache_write"):
        sch = tir.Schedule(mod)
        before = sch.mod
        with pytest.raises(ScheduleError, match="single point"):
            getattr(sch, primitive)("row", 0, "shared", lambda i: (i,))
        assert sch.mod is before

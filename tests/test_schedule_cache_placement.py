"""Where cache_read / cache_write put their copy and which blocks use the cache, as TVM
decides it: in a loop shared by the writer and its first consumer, ``consumer_blocks``,
opaque uses (``access_ptr``, ``match_buffer``) moving with the loads, nested ``T.where``
sizing the cache. Checked by structural equality and python-backend numbers."""

from __future__ import annotations

import numpy as np
import pytest

import tilelang
from tilelang.errors import ScheduleError
from tilelang.ir import assert_structural_equal
from tilelang.schedule.state import Tree

# A writes A in chunks of 16 inside loop i, B reads each chunk in the same iteration,
# C reads all of A after the loop.
SHARED_LOOP = """
@T.prim_func
def main(X: T.Buffer((128,), "float32"), Y: T.Buffer((128,), "float32"),
         Z: T.Buffer((128,), "float32")):
    A = T.alloc_buffer((128,), "float32")
    for i in range(8):
        for j in range(16):
            with T.block("A"):
                vi = T.axis.spatial(128, i * 16 + j)
                A[vi] = X[vi] + T.float32(1)
        for j in range(16):
            with T.block("B"):
                vi = T.axis.spatial(128, i * 16 + j)
                Y[vi] = A[vi] * T.float32(2)
    for i in range(128):
        with T.block("C"):
            vi = T.axis.spatial(128, i)
            Z[vi] = A[vi] * T.float32(3)
"""

# cache_read of A for every consumer: the copy goes inside loop i, right after the
# writer, over the chunk of this iteration; B and C both read the cache.
SHARED_LOOP_READ_ALL = """
@T.prim_func
def main(X: T.Buffer((128,), "float32"), Y: T.Buffer((128,), "float32"),
         Z: T.Buffer((128,), "float32")):
    A = T.alloc_buffer((128,), "float32")
    A_shared = T.alloc_buffer((128,), "float32", scope="shared")
    for i in range(8):
        for j in range(16):
            with T.block("A"):
                vi = T.axis.spatial(128, i * 16 + j)
                A[vi] = X[vi] + T.float32(1)
        for k in range(16):
            with T.block("A_shared"):
                v = T.axis.spatial(128, i * 16 + k)
                A_shared[v] = A[v]
        for j in range(16):
            with T.block("B"):
                vi = T.axis.spatial(128, i * 16 + j)
                Y[vi] = A_shared[vi] * T.float32(2)
    for i in range(128):
        with T.block("C"):
            vi = T.axis.spatial(128, i)
            Z[vi] = A_shared[vi] * T.float32(3)
"""

# cache_read with consumer_blocks=[C]: B keeps reading A; the copy goes after loop i,
# before C, over the whole of A.
SHARED_LOOP_READ_C = """
@T.prim_func
def main(X: T.Buffer((128,), "float32"), Y: T.Buffer((128,), "float32"),
         Z: T.Buffer((128,), "float32")):
    A = T.alloc_buffer((128,), "float32")
    A_shared = T.alloc_buffer((128,), "float32", scope="shared")
    for i in range(8):
        for j in range(16):
            with T.block("A"):
                vi = T.axis.spatial(128, i * 16 + j)
                A[vi] = X[vi] + T.float32(1)
        for j in range(16):
            with T.block("B"):
                vi = T.axis.spatial(128, i * 16 + j)
                Y[vi] = A[vi] * T.float32(2)
    for k in range(128):
        with T.block("A_shared"):
            v = T.axis.spatial(128, k)
            A_shared[v] = A[v]
    for i in range(128):
        with T.block("C"):
            vi = T.axis.spatial(128, i)
            Z[vi] = A_shared[vi] * T.float32(3)
"""

# cache_write of A with consumer_blocks=[B]: B reads the cache in the loop; the copy
# back goes into the sequence holding the writer and C (the other reader), after
# loop i, over the whole buffer.
SHARED_LOOP_WRITE_B = """
@T.prim_func
def main(X: T.Buffer((128,), "float32"), Y: T.Buffer((128,), "float32"),
         Z: T.Buffer((128,), "float32")):
    A = T.alloc_buffer((128,), "float32")
    A_local = T.alloc_buffer((128,), "float32", scope="local")
    for i in range(8):
        for j in range(16):
            with T.block("A"):
                vi = T.axis.spatial(128, i * 16 + j)
                A_local[vi] = X[vi] + T.float32(1)
        for j in range(16):
            with T.block("B"):
                vi = T.axis.spatial(128, i * 16 + j)
                Y[vi] = A_local[vi] * T.float32(2)
    for k in range(128):
        with T.block("A_local"):
            v = T.axis.spatial(128, k)
            A[v] = A_local[v]
    for i in range(128):
        with T.block("C"):
            vi = T.axis.spatial(128, i)
            Z[vi] = A[vi] * T.float32(3)
"""

# cache_write of A when B reads it in the same loop: the copy back goes inside loop i,
# between the writer and B, over this iteration's chunk.
SHARED_LOOP_WRITE = """
@T.prim_func
def main(X: T.Buffer((128,), "float32"), Y: T.Buffer((128,), "float32"),
         Z: T.Buffer((128,), "float32")):
    A = T.alloc_buffer((128,), "float32")
    A_local = T.alloc_buffer((128,), "float32", scope="local")
    for i in range(8):
        for j in range(16):
            with T.block("A"):
                vi = T.axis.spatial(128, i * 16 + j)
                A_local[vi] = X[vi] + T.float32(1)
        for k in range(16):
            with T.block("A_local"):
                v = T.axis.spatial(128, i * 16 + k)
                A[v] = A_local[v]
        for j in range(16):
            with T.block("B"):
                vi = T.axis.spatial(128, i * 16 + j)
                Y[vi] = A[vi] * T.float32(2)
    for i in range(128):
        with T.block("C"):
            vi = T.axis.spatial(128, i)
            Z[vi] = A[vi] * T.float32(3)
"""

SHAPES = ((128,), (128,), (128,))


def _run(mod, shapes):
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal(shape).astype("float32") for shape in shapes]
    tilelang.build(mod, target="python")["main"](*arrays)
    return arrays


def _same_numbers(before, after, shapes=SHAPES):
    for got, want in zip(_run(after, shapes), _run(before, shapes)):
        np.testing.assert_allclose(got, want, rtol=1e-6)


def _check(before, sch, expected):
    assert_structural_equal(sch.mod["main"], tilelang.parse(expected)["main"])
    _same_numbers(before, sch.mod)


def test_cache_read_copy_goes_inside_the_loop_shared_with_the_writer():
    before = tilelang.parse(SHARED_LOOP)
    sch = tilelang.Schedule(before)
    sch.cache_read(sch.get_block("B"), 0, "shared")
    _check(before, sch, SHARED_LOOP_READ_ALL)


def test_cache_read_consumer_blocks_leave_the_others_alone():
    before = tilelang.parse(SHARED_LOOP)
    for consumers in (["C"], lambda s: [s.get_block("C")]):
        sch = tilelang.Schedule(before)
        names = consumers(sch) if callable(consumers) else consumers
        sch.cache_read(sch.get_block("B"), 0, "shared", consumer_blocks=names)
        _check(before, sch, SHARED_LOOP_READ_C)
    # naming every consumer is the default
    sch = tilelang.Schedule(before)
    sch.cache_read("B", 0, "shared", ["B", "C"])
    _check(before, sch, SHARED_LOOP_READ_ALL)


def test_cache_write_consumer_blocks_read_the_cache():
    before = tilelang.parse(SHARED_LOOP)
    sch = tilelang.Schedule(before)
    sch.cache_write(sch.get_block("A"), 0, "local", consumer_blocks=["B"])
    _check(before, sch, SHARED_LOOP_WRITE_B)


def test_cache_write_copy_back_goes_inside_the_loop_before_a_reader_there():
    before = tilelang.parse(SHARED_LOOP)
    sch = tilelang.Schedule(before)
    sch.cache_write(sch.get_block("A"), 0, "local")
    _check(before, sch, SHARED_LOOP_WRITE)


def test_consumer_blocks_are_traced_and_replayed():
    before = tilelang.parse(SHARED_LOOP)
    sch = tilelang.Schedule(before)
    sch.cache_read(sch.get_block("B"), 0, "shared", consumer_blocks=[sch.get_block("C")])
    assert "consumer_blocks=[" in str(sch.trace)
    again = tilelang.Schedule(before)
    sch.trace.apply_to_schedule(again, remove_postproc=False)
    assert_structural_equal(again.mod["main"], sch.mod["main"])


def test_cache_read_unknown_consumer_is_refused_and_schedule_unchanged():
    before = tilelang.parse(SHARED_LOOP)
    sch = tilelang.Schedule(before)
    old = sch.mod["main"]
    with pytest.raises(ScheduleError, match="Cannot find a block"):
        sch.cache_read("B", 0, "shared", consumer_blocks=["nope"])
    assert sch.mod["main"] is old


# Opaque uses of the input: access_ptr of A.data and a match_buffer view of A.
OPAQUE = """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"),
         C: T.Buffer((8, 8), "float32")):
    for i, j in T.grid(8, 8):
        with T.block("copy"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj]
    for i in range(2):
        with T.block("view"):
            vi = T.axis.spatial(2, i)
            T.reads(A[vi * 4:vi * 4 + 4, 0:8])
            T.writes(C[vi * 4:vi * 4 + 4, 0:8])
            A0 = T.match_buffer(A[vi * 4:vi * 4 + 4, 0:8], (4, 8), "float32", offset_factor=1)
            for x, y in T.grid(4, 8):
                C[vi * 4 + x, y] = A0[x, y] + T.float32(1)
            T.evaluate(T.tvm_access_ptr(T.type_annotation("float32"), A.data, 0, 64, 1))
"""

OPAQUE_READ = """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"),
         C: T.Buffer((8, 8), "float32")):
    A_global = T.alloc_buffer((8, 8), "float32")
    for ax0, ax1 in T.grid(8, 8):
        with T.block("A_global"):
            v0, v1 = T.axis.remap("SS", [ax0, ax1])
            A_global[v0, v1] = A[v0, v1]
    for i, j in T.grid(8, 8):
        with T.block("copy"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A_global[vi, vj]
    for i in range(2):
        with T.block("view"):
            vi = T.axis.spatial(2, i)
            T.reads(A_global[vi * 4:vi * 4 + 4, 0:8])
            T.writes(C[vi * 4:vi * 4 + 4, 0:8])
            A0 = T.match_buffer(A_global[vi * 4:vi * 4 + 4, 0:8], (4, 8), "float32",
                                offset_factor=1)
            for x, y in T.grid(4, 8):
                C[vi * 4 + x, y] = A0[x, y] + T.float32(1)
            T.evaluate(T.tvm_access_ptr(T.type_annotation("float32"), A_global.data, 0, 64, 1))
"""


def test_cache_read_moves_match_buffer_and_access_ptr_and_keeps_writes():
    before = tilelang.parse(OPAQUE)
    sch = tilelang.Schedule(before)
    sch.cache_read("copy", 0, "global")
    assert_structural_equal(sch.mod["main"], tilelang.parse(OPAQUE_READ)["main"])


# The block reads A only where its nested block's T.where holds: rows < 6, columns < 5.
NESTED_WHERE = """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), C: T.Buffer((6, 5), "float32")):
    for i, j in T.grid(8, 8):
        with T.block("outer"):
            vi, vj = T.axis.remap("SS", [i, j])
            with T.block("inner"):
                T.where(vi < 6 and vj < 5)
                C[vi, vj] = A[vi, vj] * T.float32(2)
"""


def test_nested_where_sizes_the_caches():
    before = tilelang.parse(NESTED_WHERE)
    for primitive, shape in (("cache_read", (6, 5)), ("cache_write", (6, 5))):
        sch = tilelang.Schedule(before)
        getattr(sch, primitive)(sch.get_block("outer"), 0, "local")
        root = sch.mod["main"].body.block
        assert [tuple(int(d.value) for d in b.shape) for b in root.alloc_buffers] == [shape]
        _same_numbers(before, sch.mod, ((8, 8), (6, 5)))


def test_nested_where_alternatives_take_the_union():
    text = NESTED_WHERE.replace(
        """            with T.block("inner"):
                T.where(vi < 6 and vj < 5)
                C[vi, vj] = A[vi, vj] * T.float32(2)""",
        """            with T.block("left"):
                T.where(vi < 2 and vj < 5)
                C[vi, vj] = A[vi, vj] * T.float32(2)
            with T.block("top"):
                T.where(vi < 6 and vj < 3)
                C[vi, vj] = A[vi, vj] * T.float32(3)""",
    )
    before = tilelang.parse(text)
    sch = tilelang.Schedule(before)
    sch.cache_read(sch.get_block("outer"), 0, "local")
    root = sch.mod["main"].body.block
    assert [tuple(int(d.value) for d in b.shape) for b in root.alloc_buffers] == [(6, 5)]
    _same_numbers(before, sch.mod, ((8, 8), (6, 5)))


SUBREGION = """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    B = T.alloc_buffer((8, 8), "float32")
    for i, j in T.grid(8, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B0 = T.match_buffer(B[vi, vj], (), offset_factor=1)
            B0[()] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(8, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            B1 = T.match_buffer(B[vi, vj], (), offset_factor=1)
            C[vi, vj] = B1[()] + T.float32(1)
"""


def test_set_scope_gives_match_buffer_views_the_scope():
    before = tilelang.parse(SUBREGION)
    sch = tilelang.Schedule(before)
    sch.set_scope("B", 0, "shared")
    expected = SUBREGION.replace(
        'B = T.alloc_buffer((8, 8), "float32")',
        'B = T.alloc_buffer((8, 8), "float32", scope="shared")',
    ).replace("(), offset_factor=1)", '(), scope="shared", offset_factor=1)')
    assert_structural_equal(sch.mod["main"], tilelang.parse(expected)["main"])
    _same_numbers(before, sch.mod, ((8, 8), (8, 8)))


CONSTANTS = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.allocate_const([0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7], "float32", [8])
    B_buf = T.decl_buffer((8,), "float32", data=B)
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = A[vi] + B_buf[vi]
"""

# the copies go inside the constant's declarations (they may read it)
CONSTANTS_CACHED = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    B_buf_global = T.alloc_buffer((8,), "float32")
    A_global = T.alloc_buffer((8,), "float32")
    C_local = T.alloc_buffer((8,), "float32", scope="local")
    B = T.allocate_const([0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7], "float32", [8])
    B_buf = T.decl_buffer((8,), "float32", data=B)
    for ax0 in range(8):
        with T.block("A_global"):
            v0 = T.axis.spatial(8, ax0)
            A_global[v0] = A[v0]
    for ax0 in range(8):
        with T.block("B_buf_global"):
            v0 = T.axis.spatial(8, ax0)
            B_buf_global[v0] = B_buf[v0]
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C_local[vi] = A_global[vi] + B_buf_global[vi]
    for ax0 in range(8):
        with T.block("C_local"):
            v0 = T.axis.spatial(8, ax0)
            C[v0] = C_local[v0]
"""


def test_stages_go_inside_constant_declarations():
    before = tilelang.parse(CONSTANTS)
    sch = tilelang.Schedule(before)
    sch.cache_read("C", 1, "global")
    sch.cache_read("C", 0, "global")
    sch.cache_write("C", 0, "local")
    assert_structural_equal(sch.mod["main"], tilelang.parse(CONSTANTS_CACHED)["main"])
    _same_numbers(before, sch.mod, ((8,), (8,)))


def test_cache_write_under_a_nested_where_needs_no_fill_but_alternatives_do():
    before = tilelang.parse(NESTED_WHERE)
    sch = tilelang.Schedule(before)
    sch.cache_write(sch.get_block("outer"), 0, "local")
    assert "C_local_in" not in sch.mod["main"].script()  # the cut positions are not copied
    # two writers under different T.where: the union box holds unwritten positions
    text = NESTED_WHERE.replace(
        """            with T.block("inner"):
                T.where(vi < 6 and vj < 5)
                C[vi, vj] = A[vi, vj] * T.float32(2)""",
        """            with T.block("left"):
                T.where(vi < 2 and vj < 5)
                C[vi, vj] = A[vi, vj] * T.float32(2)
            with T.block("top"):
                T.where(vi < 6 and vj < 3)
                C[vi, vj] = A[vi, vj] * T.float32(3)""",
    )
    before = tilelang.parse(text)
    sch = tilelang.Schedule(before)
    sch.cache_write(sch.get_block("outer"), 0, "local")
    assert "C_local_in" in sch.mod["main"].script()
    _same_numbers(before, sch.mod, ((8, 8), (6, 5)))


BEFORE_AND_AFTER = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), X: T.Buffer((8,), "float32"),
         Y: T.Buffer((8,), "float32"), Z: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("old"):
            vi = T.axis.spatial(8, i)
            Y[vi] = A[vi] + T.float32(1)
    for i in range(8):
        with T.block("A"):
            vi = T.axis.spatial(8, i)
            A[vi] = X[vi] * T.float32(2)
    for i in range(8):
        with T.block("new"):
            vi = T.axis.spatial(8, i)
            Z[vi] = A[vi] + T.float32(3)
"""

FOUR = ((8,), (8,), (8,), (8,))


def _same_four(before, after):
    for got, want in zip(_run(after, FOUR), _run(before, FOUR)):
        np.testing.assert_allclose(got, want, rtol=1e-6)


def _order(sch):
    items = sch.mod["main"].body.block.body.seq
    return [Tree(sch.mod["main"]).blocks_under(it)[0].block.name_hint for it in items]


def test_consumers_reading_before_the_writer_read_a_copy_made_first():
    before = tilelang.parse(BEFORE_AND_AFTER)
    sch = tilelang.Schedule(before)
    sch.cache_read("old", 0, "local", consumer_blocks=["old"])
    assert _order(sch) == ["A_local", "old", "A", "new"]  # TVM's in-place form
    _same_four(before, sch.mod)


@pytest.mark.parametrize(
    "primitive,target,consumers",
    [("cache_read", "new", ["old", "new"]), ("cache_write", "A", ["old"])],
)
def test_consumers_on_the_wrong_side_of_the_writer_are_refused(primitive, target, consumers):
    sch = tilelang.Schedule(tilelang.parse(BEFORE_AND_AFTER))
    old = sch.mod["main"]
    with pytest.raises(ScheduleError, match="before"):
        getattr(sch, primitive)(target, 0, "local", consumer_blocks=consumers)
    assert sch.mod["main"] is old


def test_a_consumer_not_reading_the_buffer_does_not_move_the_copy():
    before = tilelang.parse(BEFORE_AND_AFTER)
    sch = tilelang.Schedule(before)
    # "old" reads A but is not named; the named "A" does not read it: the copy of A
    # goes before "new"
    sch.cache_read("new", 0, "local", consumer_blocks=["new", "A"])
    assert _order(sch) == ["old", "A", "A_local", "new"]
    _same_four(before, sch.mod)


def test_a_consumer_outside_the_scope_is_refused():
    sch = tilelang.Schedule(tilelang.parse(SHARED_LOOP))
    sch.blockize(sch.get_loops("A")[1])  # A inside A_o
    with pytest.raises(ScheduleError, match="is not a block of its scope"):
        sch.cache_write("A", 0, "local", consumer_blocks=["A_o"])


def test_by_default_readers_of_the_old_values_keep_the_buffer():
    """TVM makes every block read the cache; a block reading the buffer before its
    writer would then read a cache not yet filled."""
    before = tilelang.parse(BEFORE_AND_AFTER)
    sch = tilelang.Schedule(before)
    sch.cache_read("new", 0, "local")
    assert _order(sch) == ["old", "A", "A_local", "new"]
    reads = {r.block.name_hint: r.block.reads for r in Tree(sch.mod["main"]).order}
    assert reads["old"][0].buffer.name == "A" and reads["new"][0].buffer.name == "A_local"
    _same_four(before, sch.mod)
    # applied to the early reader: the in-place form, the copy first
    sch = tilelang.Schedule(before)
    sch.cache_read("old", 0, "local")
    assert _order(sch) == ["A_local", "old", "A", "new"]
    _same_four(before, sch.mod)

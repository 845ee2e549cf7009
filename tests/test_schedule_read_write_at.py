"""read_at / write_at: golden IR, numbers against NumPy on every CPU backend, trace
replay, and a ScheduleError for each precondition that leaves the schedule unchanged."""

from __future__ import annotations

import numpy as np
import pytest

import tilelang
from tilelang.errors import ScheduleError
from tilelang.ir import structural_equal

# C = A @ B tiled: 4 row tiles of 16, the reduction in 8 chunks of 8
TILED = """
@T.prim_func
def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
    T.func_attr({"global_symbol": "main"})
    for i0, k0, i1, j, k1 in T.grid(4, 8, 16, 64, 8):
        with T.block("C"):
            vi = T.axis.spatial(64, i0 * 16 + i1)
            vj = T.axis.spatial(64, j)
            vk = T.axis.reduce(64, k0 * 8 + k1)
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""


def staged(*steps):
    sch = tilelang.Schedule(tilelang.parse(TILED))
    for primitive, loop, index, scope in steps:
        loops = sch.get_loops("C")
        getattr(sch, primitive)(loops[loop], "C", index, scope)
    return sch


BOTH = [("read_at", 1, 0, "shared"), ("read_at", 1, 1, "shared"), ("write_at", 0, 0, "local")]


def test_golden_and_replay(golden):
    sch = staged(*BOTH)
    golden(sch.mod["main"].script())
    again = tilelang.Schedule(tilelang.parse(TILED))
    sch.trace.apply_to_schedule(again)
    assert structural_equal(again.mod["main"], sch.mod["main"], map_free_vars=True)
    text = str(sch.trace)
    assert (
        'b7 = sch.read_at(loop=l2, block=b6, read_buffer_index=0, storage_scope="shared")' in text
    )
    assert "sch.write_at(loop=" in text


@pytest.mark.parametrize("target", ["python", "c", "llvm"])
@pytest.mark.parametrize("steps", [BOTH[:1], BOTH[:2], BOTH[2:], BOTH], ids=["a", "ab", "c", "abc"])
def test_computes_the_same(target, steps):
    rng = np.random.default_rng(4)
    a, b = rng.random((64, 64), np.float32), rng.random((64, 64), np.float32)
    c = np.zeros((64, 64), np.float32)
    tilelang.build(staged(*steps).mod, target=target)["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4)


def test_copy_block_is_returned_and_annotated():
    sch = tilelang.Schedule(tilelang.parse(TILED))
    copy = sch.read_at(sch.get_loops("C")[1], "C", 0, "shared")
    block = sch.get(copy)
    assert block.name_hint == "A_shared"
    assert block.annotations == {"auto_copy": True}
    assert [iv.dom.extent.value for iv in block.iter_vars] == [4, 8]


def expect_error(text, primitive, loop, index, needle, scope="shared"):
    sch = tilelang.Schedule(tilelang.parse(text))
    loops = sch.get_loops("C")
    before = sch.mod
    with pytest.raises(ScheduleError, match=needle):
        getattr(sch, primitive)(loops[loop], "C", index, scope)
    assert sch.mod is before


def test_error_index_and_scope():
    expect_error(TILED, "read_at", 1, 5, "read buffer index 5 is out of range")
    expect_error(TILED, "write_at", 1, 0, "invalid storage scope", scope="fast")


def test_error_reduction_spans_iterations():
    # C's reduction runs over k0: copying it back after each k0 iteration would copy
    # partial sums that the next iteration reads from the copy, which holds no sums
    expect_error(TILED, "write_at", 1, 0, "only a reduction that starts from its init")


def test_error_written_after_read():
    in_place = """
@T.prim_func
def main(A: T.Buffer((16,), "float32")):
    for i0, i1 in T.grid(4, 4):
        with T.block("C"):
            vi = T.axis.spatial(16, i0 * 4 + i1)
            T.reads(A[vi])
            T.writes(A[vi])
            A[vi] = A[vi] + T.float32(1)
"""
    expect_error(in_place, "read_at", 0, 0, "writes A at or after its first read")


def test_error_region_leaves_the_buffer():
    ragged = """
@T.prim_func
def main(A: T.Buffer((10,), "float32"), C: T.Buffer((10,), "float32")):
    for i0, i1 in T.grid(3, 4):
        with T.block("C"):
            T.where(i0 * 4 + i1 < 10)
            vi = T.axis.spatial(10, i0 * 4 + i1)
            C[vi] = A[vi] * T.float32(2)
"""
    expect_error(ragged, "read_at", 0, 0, "may leave the buffer")


def test_error_sparse_writes():
    strided = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), C: T.Buffer((16,), "float32")):
    for i0, i1 in T.grid(2, 4):
        with T.block("C"):
            vi = T.axis.spatial(8, i0 * 4 + i1)
            C[vi * 2] = A[vi]
"""
    expect_error(strided, "write_at", 0, 0, "does not write every element")


def test_error_block_not_under_loop():
    two = TILED.replace(
        "    for i0, k0, i1, j, k1",
        "    for x in range(4):\n"
        '        with T.block("D"):\n'
        '            vx = T.axis.remap("S", [x])\n'
        "            A[vx, 0] = T.float32(1)\n"
        "    for i0, k0, i1, j, k1",
    )
    sch = tilelang.Schedule(tilelang.parse(two))
    (x,) = sch.get_loops("D")
    before = sch.mod
    with pytest.raises(ScheduleError, match="is not under loop x"):
        sch.read_at(x, "C", 0, "shared")
    assert sch.mod is before

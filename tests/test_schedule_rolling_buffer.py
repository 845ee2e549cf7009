"""rolling_buffer: golden IR, numbers against NumPy on every CPU backend (a sliding
sum and a tiled max-pool cascade, perfect and ragged tiles), trace replay, and a
ScheduleError for each precondition that leaves the schedule unchanged."""

from __future__ import annotations

import numpy as np
import pytest

import tilelang
from tilelang.errors import ScheduleError
from tilelang.ir import structural_equal

# B is computed per tile of 4 outputs of C; each tile needs 6 rows of B, 2 shared
# with the previous tile
SLIDING = """
@T.prim_func
def main(A: T.Buffer((12,), "int32"), C: T.Buffer((8,), "int32")):
    T.func_attr({"global_symbol": "main"})
    B = T.alloc_buffer((10,), "int32")
    for i_0 in range(2):
        for ax0 in range(6):
            with T.block("B"):
                vi = T.axis.spatial(10, i_0 * 4 + ax0)
                B[vi] = A[vi] + A[vi + 1] + A[vi + 2]
        for i_1 in range(4):
            with T.block("C"):
                vi = T.axis.spatial(8, i_0 * 4 + i_1)
                C[vi] = B[vi] + B[vi + 1] + B[vi + 2]
"""

POOL = """
@T.prim_func
def main(A: T.Buffer((1, 12, 12, 4), "int8"), C: T.Buffer((1, 8, 8, 4), "int8")):
    T.func_attr({"global_symbol": "main"})
    B = T.alloc_buffer((1, 10, 10, 4), "int8")
    for i0, i1, i2, i3, i4, i5 in T.grid(1, 10, 10, 4, 3, 3):
        with T.block("B"):
            n, h, w, c, rh, rw = T.axis.remap("SSSSRR", [i0, i1, i2, i3, i4, i5])
            with T.init():
                B[n, h, w, c] = T.int8(-128)
            B[n, h, w, c] = T.max(B[n, h, w, c], A[n, h + rh, w + rw, c])
    for i0, i1, i2, i3, i4, i5 in T.grid(1, 8, 8, 4, 3, 3):
        with T.block("C"):
            n, h, w, c, rh, rw = T.axis.remap("SSSSRR", [i0, i1, i2, i3, i4, i5])
            with T.init():
                C[n, h, w, c] = T.int8(-128)
            C[n, h, w, c] = T.max(C[n, h, w, c], B[n, h + rh, w + rw, c])
"""


def sliding():
    sch = tilelang.Schedule(tilelang.parse(SLIDING))
    sch.rolling_buffer("B", 0)
    return sch


def tiled_pool(tile_h, tile_w):
    """The pool cascade with C tiled (tile_h, tile_w), B computed per tile."""
    sch = tilelang.Schedule(tilelang.parse(POOL))
    n, h, w, c, _, _ = sch.get_loops("C")
    h0, h1 = sch.split(h, [None, tile_h])
    w0, w1 = sch.split(w, [None, tile_w])
    sch.reorder(n, h0, w0, c, h1, w1)
    sch.compute_at("B", c)
    sch.rolling_buffer("B", 0)
    return sch


def window_sums(a, width):
    return sum(a[k : len(a) - width + 1 + k] for k in range(width))


def max_pool(a):
    n, h, w, c = a.shape
    out = np.full((n, h - 2, w - 2, c), -128, a.dtype)
    for dh in range(3):
        for dw in range(3):
            out = np.maximum(out, a[:, dh : dh + h - 2, dw : dw + w - 2, :])
    return out


def test_sliding_golden_and_replay(golden):
    sch = sliding()
    golden(sch.mod["main"].script())
    again = tilelang.Schedule(tilelang.parse(SLIDING))
    sch.trace.apply_to_schedule(again)
    assert structural_equal(again.mod["main"], sch.mod["main"], map_free_vars=True)
    assert "sch.rolling_buffer(block=b0, write_buffer_index=0)" in str(sch.trace)


@pytest.mark.parametrize("target", ["python", "c", "llvm"])
def test_sliding_computes_the_same(target):
    a = np.random.default_rng(1).integers(-100, 100, 12).astype(np.int32)
    c = np.zeros(8, np.int32)
    tilelang.build(sliding().mod, target=target)["main"](a, c)
    np.testing.assert_array_equal(c, window_sums(window_sums(a, 3), 3))


def test_pool_buffer_shrinks_to_one_tile():
    func = tiled_pool(4, 8).mod["main"]
    text = func.script()
    assert 'B = T.alloc_buffer((1, 6, 10, 4), "int8")' in text
    assert "T.where(i1_0 < 1 or 2 <= ax0)" in text
    assert "h = T.axis.opaque(10, i1_0 * 4 + ax0)" in text


@pytest.mark.parametrize("target", ["python", "c", "llvm"])
@pytest.mark.parametrize("tile", [(4, 8), (4, 4), (6, 6), (3, 5)])
def test_pool_cascade_computes_the_same(target, tile):
    a = np.random.default_rng(2).integers(-128, 128, (1, 12, 12, 4)).astype(np.int8)
    c = np.zeros((1, 8, 8, 4), np.int8)
    tilelang.build(tiled_pool(*tile).mod, target=target)["main"](a, c)
    np.testing.assert_array_equal(c, max_pool(max_pool(a)))


def expect_error(text, needle, index=0, block="B", prepare=None):
    sch = tilelang.Schedule(tilelang.parse(text))
    if prepare is not None:
        prepare(sch)
    before = sch.mod
    with pytest.raises(ScheduleError, match=needle):
        sch.rolling_buffer(block, index)
    assert sch.mod is before


def test_error_index_out_of_range():
    expect_error(SLIDING, "write buffer index 1 is out of range", index=1)


def test_error_output_buffer():
    expect_error(SLIDING, "C is an output of the function", block="C")


def test_error_no_shared_loop():
    # B is not computed per tile of C: no loop holds both
    expect_error(POOL, "must share a loop")


def test_error_tiles_do_not_overlap():
    no_overlap = SLIDING.replace("range(6)", "range(4)").replace(
        "A[vi] + A[vi + 1] + A[vi + 2]", "A[vi]"
    ).replace("B[vi] + B[vi + 1] + B[vi + 2]", "B[vi]")  # fmt: skip
    expect_error(no_overlap, "no axis of B rolls")


def test_error_parallel_tile_loop():
    # each tile reuses what the previous one computed: the tiles must run in order
    expect_error(SLIDING.replace("for i_0 in range(2)", "for i_0 in T.parallel(2)"),
                 "loop i_0 must run serially from 0")  # fmt: skip


def test_error_consumer_reads_outside_the_window():
    # C also reads the row before its tile, which the window no longer keeps
    reads_back = SLIDING.replace(
        "C[vi] = B[vi] + B[vi + 1] + B[vi + 2]",
        "C[vi] = B[vi] + B[vi + 1] + B[vi + 2] + B[T.max(vi - 1, 0)]",
    )
    expect_error(reads_back, "outside the window")


def test_error_other_writer():
    two_writers = SLIDING.replace(
        "        for i_1 in range(4):",
        "        for ax0 in range(6):\n"
        '            with T.block("B2"):\n'
        "                vi = T.axis.spatial(10, i_0 * 4 + ax0)\n"
        "                B[vi] = B[vi] * 2\n"
        "        for i_1 in range(4):",
    )
    expect_error(two_writers, "only read-after-write dependences")


def test_error_window_start_not_a_tile():
    # the window starts at i_0 * 4 + 1: not v * stride
    shifted = SLIDING.replace("(10,)", "(11,)").replace("B[vi] = A", "B[vi + 1] = A")
    shifted = shifted.replace("C[vi] = B[vi] + B[vi + 1] + B[vi + 2]",
                              "C[vi] = B[vi + 1] + B[vi + 2] + B[vi + 3]")  # fmt: skip
    expect_error(shifted, "starts at i_0 \\* 4 \\+ 1")


def test_error_reduction_across_tiles():
    # B's reduction runs over r, outside the tiles: the second pass would add to rows
    # the window no longer holds
    across = """
@T.prim_func
def main(A: T.Buffer((12,), "int32"), C: T.Buffer((8,), "int32")):
    B = T.alloc_buffer((10,), "int32")
    for r, i_0 in T.grid(2, 2):
        for ax0 in range(6):
            with T.block("B"):
                vi = T.axis.spatial(10, i_0 * 4 + ax0)
                vr = T.axis.reduce(2, r)
                with T.init():
                    B[vi] = 0
                B[vi] = B[vi] + A[vi + vr]
        for i_1 in range(4):
            with T.block("C"):
                vi = T.axis.spatial(8, i_0 * 4 + i_1)
                C[vi] = B[vi] + B[vi + 1] + B[vi + 2]
"""
    expect_error(across, "reduction iterator vr runs across tiles")


CASCADE3 = """
@T.prim_func
def main(A: T.Buffer((1, 24, 24, 2), "int8"), C: T.Buffer((1, 8, 8, 2), "int8")):
    T.func_attr({"global_symbol": "main"})
    B0 = T.alloc_buffer((1, 22, 22, 2), "int8")
    B1 = T.alloc_buffer((1, 10, 10, 2), "int8")
    for i0, i1, i2, i3, i4, i5 in T.grid(1, 22, 22, 2, 3, 3):
        with T.block("B0"):
            n, h, w, c, rh, rw = T.axis.remap("SSSSRR", [i0, i1, i2, i3, i4, i5])
            with T.init():
                B0[n, h, w, c] = T.int8(-128)
            B0[n, h, w, c] = T.max(B0[n, h, w, c], A[n, h + rh, w + rw, c])
    for i0, i1, i2, i3, i4, i5 in T.grid(1, 10, 10, 2, 3, 3):
        with T.block("B1"):
            n, h, w, c, rh, rw = T.axis.remap("SSSSRR", [i0, i1, i2, i3, i4, i5])
            with T.init():
                B1[n, h, w, c] = T.int8(-128)
            B1[n, h, w, c] = T.max(B1[n, h, w, c], B0[n, h * 2 + rh, w * 2 + rw, c])
    for i0, i1, i2, i3, i4, i5 in T.grid(1, 8, 8, 2, 3, 3):
        with T.block("C"):
            n, h, w, c, rh, rw = T.axis.remap("SSSSRR", [i0, i1, i2, i3, i4, i5])
            with T.init():
                C[n, h, w, c] = T.int8(-128)
            C[n, h, w, c] = T.max(C[n, h, w, c], B1[n, h + rh, w + rw, c])
"""


@pytest.mark.parametrize("target", ["python", "llvm"])
def test_two_rolled_stages_with_stride(target):
    # the second roll meets the first's opaque iterators; both windows shrink
    sch = tilelang.Schedule(tilelang.parse(CASCADE3))
    n, h, w, c, _, _ = sch.get_loops("C")
    h0, h1 = sch.split(h, [None, 4])
    w0, w1 = sch.split(w, [None, 4])
    sch.reorder(n, h0, w0, c, h1, w1)
    sch.compute_at("B1", c)
    sch.compute_at("B0", c)
    sch.rolling_buffer("B0", 0)
    sch.rolling_buffer("B1", 0)
    text = sch.mod["main"].script()
    assert 'B0 = T.alloc_buffer((1, 13, 22, 2), "int8")' in text
    assert 'B1 = T.alloc_buffer((1, 6, 10, 2), "int8")' in text
    a = np.random.default_rng(11).integers(-128, 128, (1, 24, 24, 2)).astype(np.int8)
    out = np.zeros((1, 8, 8, 2), np.int8)
    tilelang.build(sch.mod, target=target)["main"](a, out)
    b0 = max_pool(a)
    b1 = np.full((1, 10, 10, 2), -128, np.int8)
    for dh in range(3):
        for dw in range(3):
            b1 = np.maximum(b1, b0[:, dh : dh + 20 : 2, dw : dw + 20 : 2, :])
    np.testing.assert_array_equal(out, max_pool(b1))

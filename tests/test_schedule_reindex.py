"""reindex: golden IR, numbers on every CPU backend against the unscheduled function,
trace replay, and a ScheduleError for each precondition."""

from __future__ import annotations

import numpy as np
import pytest

import tilelang
from tilelang.errors import ScheduleError
from tilelang.ir import structural_equal

CONV_LIKE = """
@T.prim_func
def main(A: T.Buffer((10, 12), "float32"), W: T.Buffer((3, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    T.func_attr({"global_symbol": "main"})
    for i, j, r in T.grid(8, 8, 3):
        with T.block("C"):
            vi, vj, vr = T.axis.remap("SSR", [i, j, r])
            T.reads(C[vi, vj], A[vi + vr, vj // 8 * 4 + vj], W[vr, vj])
            T.writes(C[vi, vj])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi + vr, vj // 8 * 4 + vj] * W[vr, vj]
"""

TWO_READS = """
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32")):
    T.func_attr({"global_symbol": "main"})
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vj, vi] + A[vi, vj]
"""


def run(mod, target):
    rng = np.random.default_rng(0)
    a, w = rng.random((10, 12), np.float32), rng.random((3, 8), np.float32)
    c = np.zeros((8, 8), np.float32)
    tilelang.build(mod, target=target)["main"](a, w, c)
    return c


@pytest.mark.parametrize("buffer", [("read", 2), "A", ("write", 0)])
def test_reindex_golden_and_replay(golden, buffer):
    sch = tilelang.Schedule(tilelang.parse(CONV_LIKE))
    sch.reindex(sch.get_block("C"), buffer)
    name = buffer if isinstance(buffer, str) else f"{buffer[0]}_{buffer[1]}"
    golden(sch.mod["main"].script(), f"reindex_{name}")
    again = tilelang.Schedule(tilelang.parse(CONV_LIKE))
    sch.trace.apply_to_schedule(again)
    assert structural_equal(again.mod["main"], sch.mod["main"], map_free_vars=True)


@pytest.mark.parametrize("target", ["python", "c", "llvm"])
def test_reindex_computes_the_same(target):
    original = tilelang.parse(CONV_LIKE)
    sch = tilelang.Schedule(original)
    for buffer in (("read", 2), "A", ("write", 0)):
        sch.reindex("C", buffer)
    expected = run(original, "python")
    np.testing.assert_allclose(run(sch.mod, target), expected, rtol=1e-5)


def test_unused_iterator_is_dropped():
    # vj // 8 is 0 for vj < 8, so A's copy is indexed by (vi, vr, vj) only
    sch = tilelang.Schedule(tilelang.parse(CONV_LIKE))
    sch.reindex("C", "A")
    assert "A_reindex = T.alloc_buffer((8, 8, 3)" in sch.mod["main"].script()


def error(text, block, buffer, *needles):
    sch = tilelang.Schedule(tilelang.parse(text))
    before = sch.mod
    with pytest.raises(ScheduleError) as info:
        sch.reindex(block, buffer)
    for needle in needles:
        assert needle in str(info.value), str(info.value)
    assert sch.mod is before


def test_error_different_indices():
    error(TWO_READS, "B", "A", "reindex(", "A is accessed with different indices", "[vj, vi]")


def test_error_index_out_of_range():
    error(TWO_READS, "B", ("read", 3), "read buffer index 3 is out of range")


def test_error_unknown_buffer_name():
    error(TWO_READS, "B", "Z", "the block accesses no buffer 'Z'")


def test_error_malformed_buffer_spec():
    error(TWO_READS, "B", ("load", 0), 'expected ("read", index)')


def test_error_buffer_only_in_declared_regions():
    text = TWO_READS.replace("            B[vi, vj] = A[vj, vi] + A[vi, vj]",
                             "            T.reads(A[vi, vj], C[0])\n            T.writes(B[vi, vj])\n"
                             "            B[vi, vj] = A[vi, vj]")  # fmt: skip
    text = text.replace(
        'B: T.Buffer((16, 16), "float32")):',
        'B: T.Buffer((16, 16), "float32"), C: T.Buffer((1,), "float32")):',
    )
    error(text, "B", ("read", 1), "never accesses C")

"""annotate_buffer_access: the declared region and its annotation (golden), replay,
unchanged numbers on every CPU backend, and its ScheduleErrors."""

from __future__ import annotations

import numpy as np
import pytest

import tilelang
from tilelang.errors import ScheduleError
from tilelang.ir import structural_equal

STENCIL = """
@T.prim_func
def main(A: T.Buffer((10, 10), "float32"), B: T.Buffer((8, 8), "float32")):
    T.func_attr({"global_symbol": "main"})
    for i, j in T.grid(8, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi:vi + 3, vj + 1])
            T.writes(B[vi, vj])
            B[vi, vj] = A[vi, vj + 1] + A[vi + 1, vj + 1] + A[vi + 2, vj + 1]
"""


def annotated():
    sch = tilelang.Schedule(tilelang.parse(STENCIL))
    sch.annotate_buffer_access("B", 0, "read", lambda vi, vj: ((vi, vi + 3), (vj, vj + 3)))
    sch.annotate_buffer_access("B", 0, "write", lambda vi, vj: (vi, vj))
    return sch


def test_golden_and_replay(golden):
    sch = annotated()
    golden(sch.mod["main"].script())
    again = tilelang.Schedule(tilelang.parse(STENCIL))
    sch.trace.apply_to_schedule(again)
    assert structural_equal(again.mod["main"], sch.mod["main"], map_free_vars=True)
    assert "lambda v0, v1: ((v0, v0 + 3), (v1, v1 + 3),)" in str(sch.trace)


def test_annotating_again_replaces_the_region():
    sch = annotated()
    sch.annotate_buffer_access("B", 0, "read", lambda vi, vj: ((vi, vi + 3), (vj + 1, vj + 2)))
    block = sch.get(sch.get_block("B"))
    assert [str(r.extent) for r in block.reads[0].region] == ["3", "1"]
    assert [int(x) for x in block.annotations["explicit_read_region"]] == [0]


@pytest.mark.parametrize("target", ["python", "c", "llvm"])
def test_numbers_unchanged(target):
    a = np.random.default_rng(0).random((10, 10), np.float32)
    b = np.zeros((8, 8), np.float32)
    tilelang.build(annotated().mod, target=target)["main"](a, b)
    np.testing.assert_allclose(b, a[0:8, 1:9] + a[1:9, 1:9] + a[2:10, 1:9], rtol=1e-6)


@pytest.mark.parametrize(
    "args,needle",
    [
        ((0, "load", lambda vi, vj: (vi, vj)), 'buf_type must be "read" or "write"'),
        ((1, "read", lambda vi, vj: (vi, vj)), "read buffer index 1 is out of range"),
        ((0, "read", lambda vi: (vi, vi)), "the region function failed"),
        ((0, "read", lambda vi, vj: ((vi, vi + 1),)), "must give 2 (begin, end) pairs"),
    ],
)
def test_errors(args, needle):
    sch = tilelang.Schedule(tilelang.parse(STENCIL))
    before = sch.mod
    with pytest.raises(ScheduleError) as info:
        sch.annotate_buffer_access("B", *args)
    assert needle in str(info.value)
    assert sch.mod is before

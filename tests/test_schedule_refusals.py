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

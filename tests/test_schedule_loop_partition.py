"""loop_partition: golden IR (TVM's block structure), numbers on every CPU backend,
replay, and a ScheduleError per precondition."""

from __future__ import annotations

import numpy as np
import pytest

import tilelang
from tilelang.errors import ScheduleError
from tilelang.ir import structural_equal

ELEMENTWISE = """
@T.prim_func
def main(A: T.Buffer((16, 8), "float32"), B: T.Buffer((16, 8), "float32")):
    T.func_attr({"global_symbol": "main"})
    for i, j in T.grid(16, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2) + T.Cast("float32", vi)
"""


def partitioned():
    sch = tilelang.Schedule(tilelang.parse(ELEMENTWISE))
    i, j = sch.get_loops("B")
    parts = sch.loop_partition(i, [2, None, 5])
    assert [sch.get(p).extent.value for p in parts] == [2, 9, 5]
    inner_i, inner_j = sch.get_loops("B_i1")
    sch.loop_partition(inner_j, [3])
    return sch


def test_golden_and_replay(golden):
    sch = partitioned()
    golden(sch.mod["main"].script())
    again = tilelang.Schedule(tilelang.parse(ELEMENTWISE))
    sch.trace.apply_to_schedule(again)
    assert structural_equal(again.mod["main"], sch.mod["main"], map_free_vars=True)


@pytest.mark.parametrize("target", ["python", "c", "llvm"])
def test_numbers_unchanged(target):
    a = np.random.default_rng(0).random((16, 8), np.float32)
    b = np.zeros((16, 8), np.float32)
    tilelang.build(partitioned().mod, target=target)["main"](a, b)
    np.testing.assert_allclose(b, a * 2 + np.arange(16, dtype=np.float32)[:, None], rtol=1e-6)


@pytest.mark.parametrize(
    "factors,needle",
    [
        ([8, 8], "add up to 16, not less than the extent 16"),
        ([None, None], "at most one factor may be None"),
        ([0, None], "factor 0 is 0; factors must be positive"),
        ([None, -2], "factor 1 is -2"),
    ],
)
def test_factor_errors(factors, needle):
    sch = tilelang.Schedule(tilelang.parse(ELEMENTWISE))
    i, _ = sch.get_loops("B")
    before = sch.mod
    with pytest.raises(ScheduleError, match=needle):
        sch.loop_partition(i, factors)
    assert sch.mod is before


def test_annotated_loop_is_refused():
    sch = tilelang.Schedule(tilelang.parse(ELEMENTWISE))
    i, _ = sch.get_loops("B")
    sch.annotate(i, "note", 1)
    with pytest.raises(ScheduleError, match="annotations or a thread binding"):
        sch.loop_partition(i, [4])


def test_loop_not_from_zero_is_refused():
    sch = tilelang.Schedule(tilelang.parse(ELEMENTWISE))
    i, _ = sch.get_loops("B")
    first, rest = sch.loop_partition(i, [4])
    with pytest.raises(ScheduleError, match="starts at 4, not 0"):
        sch.loop_partition(rest, [4])

"""add_unit_loop, unsafe_hide_buffer_access and the enter_postproc trace marker:
golden IR, numbers on every CPU backend, replay and ScheduleErrors."""

from __future__ import annotations

import numpy as np
import pytest

import tilelang
from tilelang.errors import ScheduleError
from tilelang.ir import structural_equal

GATHER = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), idx: T.Buffer((8,), "int32"), B: T.Buffer((8,), "float32")):
    T.func_attr({"global_symbol": "main"})
    for i in range(8):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            T.reads(A[0:8], idx[vi])
            T.writes(B[vi])
            B[vi] = A[idx[vi]]
"""


def scheduled():
    sch = tilelang.Schedule(tilelang.parse(GATHER))
    (i,) = sch.get_loops("B")
    u = sch.add_unit_loop(i)
    sch.add_unit_loop("B")
    sch.unsafe_hide_buffer_access("B", "read", [1])
    sch.enter_postproc()
    return sch, u


def test_golden_and_replay(golden):
    sch, u = scheduled()
    golden(sch.mod["main"].script())
    assert sch.get(u).extent.value == 1
    again = tilelang.Schedule(tilelang.parse(GATHER))
    sch.trace.apply_to_schedule(again)
    assert structural_equal(again.mod["main"], sch.mod["main"], map_free_vars=True)
    assert str(sch.trace).splitlines()[-1].strip() == "sch.enter_postproc()"


@pytest.mark.parametrize("target", ["python", "c", "llvm"])
def test_numbers_unchanged(target):
    sch, _ = scheduled()
    a = np.arange(8, dtype=np.float32) * 1.5
    idx = np.array([7, 0, 3, 3, 1, 6, 2, 5], np.int32)
    b = np.zeros(8, np.float32)
    tilelang.build(sch.mod, target=target)["main"](a, idx, b)
    np.testing.assert_array_equal(b, a[idx])


@pytest.mark.parametrize(
    "args,needle",
    [
        (("load", [0]), 'buf_type must be "read" or "write"'),
        (("read", [2]), "read buffer index 2 is out of range"),
        (("write", [0, 1]), "write buffer index 1 is out of range"),
    ],
)
def test_hide_errors(args, needle):
    sch = tilelang.Schedule(tilelang.parse(GATHER))
    before = sch.mod
    with pytest.raises(ScheduleError, match=needle):
        sch.unsafe_hide_buffer_access("B", *args)
    assert sch.mod is before


def test_no_unit_loop_above_the_root_block():
    text = GATHER.replace("    for i in range(8):\n        with T.block(\"B\"):",
                          "    with T.block(\"root\"):\n      for i in range(8):\n        with T.block(\"B\"):")  # fmt: skip
    sch = tilelang.Schedule(tilelang.parse(text))
    with pytest.raises(ScheduleError, match="cannot add a loop above the root block"):
        sch.add_unit_loop("root")

"""transform_layout: golden IR, numbers on every CPU backend (intermediate, parameter,
padded), replay, and a ScheduleError per precondition."""

from __future__ import annotations

import numpy as np
import pytest

import tilelang
from tilelang.errors import ScheduleError
from tilelang.ir import structural_equal

STAGES = """
@T.prim_func
def main(A: T.Buffer((14, 4), "float32"), C: T.Buffer((14, 4), "float32")):
    T.func_attr({"global_symbol": "main"})
    B = T.alloc_buffer((14, 4), "float32")
    for i, j in T.grid(14, 4):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(14, 4):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)
"""


def run(mod, target, a_shape=(14, 4)):
    a = np.random.default_rng(0).random((14, 4), np.float32)
    c = np.zeros((14, 4), np.float32)
    lib = tilelang.build(mod, target=target)["main"]
    if a_shape == (14, 4):
        lib(a, c)
        return c
    lib(np.ascontiguousarray(a.T), c)  # the parameter laid out as (4, 14)
    return c


def padded():
    sch = tilelang.Schedule(tilelang.parse(STAGES))
    sch.transform_layout("B", ("write", 0), lambda i, j: (i // 4, j, i % 4), pad_value=0.0)
    return sch


def test_golden_and_replay(golden):
    sch = padded()
    golden(sch.mod["main"].script())
    again = tilelang.Schedule(tilelang.parse(STAGES))
    sch.trace.apply_to_schedule(again)
    assert structural_equal(again.mod["main"], sch.mod["main"], map_free_vars=True)


@pytest.mark.parametrize("target", ["python", "c", "llvm"])
def test_padded_intermediate_computes_the_same(target):
    expected = run(tilelang.parse(STAGES), "python")
    np.testing.assert_allclose(run(padded().mod, target), expected, rtol=1e-6)


@pytest.mark.parametrize("target", ["python", "c", "llvm"])
def test_parameter_relayout(target):
    sch = tilelang.Schedule(tilelang.parse(STAGES))
    sch.transform_layout("B", "A", lambda i, j: (j, i))  # A is read transposed now
    func = sch.mod["main"]
    assert [int(x) for x in func.buffer_map[func.params[0]].shape] == [4, 14]
    expected = run(tilelang.parse(STAGES), "python")
    np.testing.assert_allclose(run(sch.mod, target, a_shape=(4, 14)), expected, rtol=1e-6)


def rejected(map_, needle, buffer=("write", 0), **kwargs):
    sch = tilelang.Schedule(tilelang.parse(STAGES))
    before = sch.mod
    with pytest.raises(ScheduleError, match=needle):
        sch.transform_layout("B", buffer, map_, **kwargs)
    assert sch.mod is before


def test_error_not_one_to_one():
    rejected(lambda i, j: (i // 2, j), "sends two elements to the same place")


def test_error_padding_needs_a_value():
    rejected(lambda i, j: (i // 4, j, i % 4), "give a pad_value")


def test_error_padding_a_parameter():
    rejected(lambda i, j: (i // 4, j, i % 4), "function parameter", buffer="A", pad_value=0.0)


def test_error_index_not_from_zero():
    rejected(lambda i, j: (i + 1, j), "starts at 1, not 0")


def test_error_map_fails():
    rejected(lambda i: (i,), "the index map failed")


def test_error_unknown_buffer():
    rejected(lambda i, j: (i, j), "accesses no buffer 'Z'", buffer="Z")

"""fuse_reduction_epilogue of a bias addition: golden IR, exact numbers (int32) on
every CPU backend, replay, and a ScheduleError per precondition (epilogues that go on
after the addition, ReLU and clipping, are in test_schedule_epilogue_finish.py)."""

from __future__ import annotations

import numpy as np
import pytest

import tilelang
from tilelang.errors import ScheduleError
from tilelang.ir import structural_equal

MATMUL_BIAS = """
@T.prim_func
def main(A: T.Buffer((8, 8), "int32"), B: T.Buffer((8, 8), "int32"), C: T.Buffer((8, 8), "int32"), D: T.Buffer((8, 8), "int32")):
    T.func_attr({"global_symbol": "main"})
    temp = T.alloc_buffer((8, 8), "int32")
    for i, j, k in T.grid(8, 8, 8):
        with T.block("multiply"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                temp[vi, vj] = 0
            temp[vi, vj] = temp[vi, vj] + A[vi, vk] * B[vj, vk]
    for i, j in T.grid(8, 8):
        with T.block("add"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = C[vi, vj] + temp[vi, vj]
"""


def fused():
    sch = tilelang.Schedule(tilelang.parse(MATMUL_BIAS))
    sch.fuse_reduction_epilogue("multiply", "add")
    return sch


def test_golden_and_replay(golden):
    sch = fused()
    golden(sch.mod["main"].script())
    again = tilelang.Schedule(tilelang.parse(MATMUL_BIAS))
    sch.trace.apply_to_schedule(again)
    assert structural_equal(again.mod["main"], sch.mod["main"], map_free_vars=True)


@pytest.mark.parametrize("target", ["python", "c", "llvm"])
def test_exact_numbers(target):
    rng = np.random.default_rng(0)
    a, b, c = (rng.integers(-50, 50, (8, 8), dtype=np.int32) for _ in range(3))
    d = np.zeros((8, 8), np.int32)
    tilelang.build(fused().mod, target=target)["main"](a, b, c, d)
    np.testing.assert_array_equal(d, a @ b.T + c)


def rejected(text, needle):
    sch = tilelang.Schedule(tilelang.parse(text))
    before = sch.mod
    with pytest.raises(ScheduleError, match=needle):
        sch.fuse_reduction_epilogue("multiply", "add")
    assert sch.mod is before


def test_nonzero_init_is_refused():
    rejected(MATMUL_BIAS.replace("temp[vi, vj] = 0", "temp[vi, vj] = 1"), "stores 1, not 0")


def test_not_a_reduction():
    rejected(MATMUL_BIAS.replace("temp[vi, vj] = temp[vi, vj] + A[vi, vk] * B[vj, vk]",
                                 "temp[vi, vj] = A[vi, vk] * B[vj, vk]"), "is not a reduction")  # fmt: skip


def test_second_reader_is_refused():
    text = MATMUL_BIAS.replace(
        '    for i, j in T.grid(8, 8):\n        with T.block("add"):',
        '    for i, j in T.grid(8, 8):\n        with T.block("peek"):\n'
        '            vi, vj = T.axis.remap("SS", [i, j])\n            C[vi, vj] = temp[vi, vj]\n'
        '    for i, j in T.grid(8, 8):\n        with T.block("add"):',
    )
    rejected(text, "must be read by the epilogue only")


def test_transposed_epilogue_maps_its_iterators():
    # D[j, i] = C[j, i] + temp[i, j]: the epilogue's (vi, vj) are the reduction's (vj, vi)
    sch = tilelang.Schedule(
        tilelang.parse(MATMUL_BIAS.replace("C[vi, vj] + temp[vi, vj]", "C[vi, vj] + temp[vj, vi]"))
    )
    sch.fuse_reduction_epilogue("multiply", "add")
    rng = np.random.default_rng(1)
    a, b, c = (rng.integers(-50, 50, (8, 8), dtype=np.int32) for _ in range(3))
    d = np.zeros((8, 8), np.int32)
    tilelang.build(sch.mod, target="c")["main"](a, b, c, d)
    np.testing.assert_array_equal(d, (a @ b.T).T + c)


def test_epilogue_iterator_not_indexing_temp_is_refused():
    rejected(
        MATMUL_BIAS.replace("C[vi, vj] + temp[vi, vj]", "C[vi, vj] + temp[vi, 0]"),
        "do not index temp directly",
    )


def test_block_between_using_the_output_is_refused():
    text = MATMUL_BIAS.replace(
        '    for i, j in T.grid(8, 8):\n        with T.block("add"):',
        '    for i, j in T.grid(8, 8):\n        with T.block("clear"):\n'
        '            vi, vj = T.axis.remap("SS", [i, j])\n            D[vi, vj] = 0\n'
        '    for i, j in T.grid(8, 8):\n        with T.block("add"):',
    )
    rejected(text, "between them uses D")

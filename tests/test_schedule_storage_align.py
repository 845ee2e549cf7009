"""storage_align: the annotation (golden), the padded strides lowering gives the
buffer, numbers on every CPU backend, and a ScheduleError per precondition."""

from __future__ import annotations

import numpy as np
import pytest

import tilelang
from tilelang.errors import ScheduleError
from tilelang.ir import stmt as S
from tilelang.ir.functor import post_order_visit
from tilelang.transform.storage_align import aligned_strides

TWO_STAGES = """
@T.prim_func
def main(A: T.Buffer((16, 12), "float32"), C: T.Buffer((16, 12), "float32")):
    T.func_attr({"global_symbol": "main"})
    B = T.alloc_buffer((16, 12), "float32")
    for i in range(16):
        for j in range(12):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * T.float32(2)
        for j in range(12):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = B[vi, vj] + T.float32(1)
"""


def aligned(axis=0, factor=16, offset=1):
    sch = tilelang.Schedule(tilelang.parse(TWO_STAGES))
    sch.storage_align("B", 0, axis=axis, factor=factor, offset=offset)
    return sch


def test_annotation_golden_and_replay(golden):
    sch = aligned()
    sch.storage_align("B", 0, axis=-1, factor=4, offset=0)
    sch.storage_align("B", 0, axis=0, factor=8, offset=3)  # replaces the first request
    golden(sch.mod["main"].script())
    again = tilelang.Schedule(tilelang.parse(TWO_STAGES))
    sch.trace.apply_to_schedule(again)
    assert again.mod["main"].script() == sch.mod["main"].script()


def test_strides_rule():
    assert [int(s) for s in aligned_strides(_shape(4, 12), {0: (16, 1)})] == [17, 1]
    assert [int(s) for s in aligned_strides(_shape(4, 12), {0: (4, 0)})] == [12, 1]
    # the innermost stride 1 becomes 2 (even), so the next is 10, raised to 15 (7 mod 8)
    assert [int(s) for s in aligned_strides(_shape(2, 3, 5), {1: (8, 7), 2: (2, 0)})] == [
        45, 15, 2]  # fmt: skip


def _shape(*dims):
    from tilelang.ir import expr as E

    return tuple(E.IntImm("int32", d) for d in dims)


TWO_NESTS = TWO_STAGES.replace(
    '        for j in range(12):\n            with T.block("C")',
    '    for i in range(16):\n        for j in range(12):\n            with T.block("C")',
)


def allocations(mod):
    found = []
    post_order_visit(
        mod["main"].body, lambda n: found.append(n) if isinstance(n, S.Allocate) else None
    )
    return found


def test_lowering_pads_the_allocation():
    # B stays (16, 12); its row stride becomes 17, so it spans 15 * 17 + 12 elements
    sch = tilelang.Schedule(tilelang.parse(TWO_NESTS))
    (alloc,) = allocations(tilelang.lower(sch.mod))
    assert [int(x) for x in alloc.extents] == [192]
    sch.storage_align("B", 0, axis=0, factor=16, offset=1)
    lowered = tilelang.lower(sch.mod)
    (alloc,) = allocations(lowered)
    assert [int(x) for x in alloc.extents] == [15 * 17 + 12]
    assert "B_1[i * 17 + j]" in lowered["main"].script()


@pytest.mark.parametrize("target", ["python", "c", "llvm"])
def test_aligned_buffer_computes_the_same(target):
    sch = tilelang.Schedule(tilelang.parse(TWO_NESTS))
    sch.storage_align("B", 0, axis=0, factor=16, offset=1)
    a = np.random.default_rng(0).random((16, 12), np.float32)
    c = np.zeros((16, 12), np.float32)
    tilelang.build(sch.mod, target=target)["main"](a, c)
    np.testing.assert_allclose(c, a * 2 + 1, rtol=1e-6)


def error(block, *args, needle, **kwargs):
    sch = tilelang.Schedule(tilelang.parse(TWO_STAGES))
    before = sch.mod
    with pytest.raises(ScheduleError, match=needle):
        sch.storage_align(block, *args, **kwargs)
    assert sch.mod is before


def test_errors():
    error("B", 1, axis=0, factor=16, offset=1, needle="write buffer index 1 is out of range")
    error("B", 0, axis=2, factor=16, offset=1, needle="axis 2 is out of range for 2-d B")
    error("B", 0, axis=0, factor=0, offset=1, needle="factor must be positive")
    error("B", 0, axis=0, factor=-1, offset=1, needle="factor must be positive")
    error("B", 0, axis=0, factor=4, offset=-1, needle="offset must be >= 0")
    error("C", 0, axis=0, factor=16, offset=1, needle="C is not allocated inside the function")


def test_malformed_existing_annotation():
    sch = tilelang.Schedule(tilelang.parse(TWO_STAGES))
    sch.annotate("B", "buffer_dim_align", [0])
    with pytest.raises(ScheduleError, match="is not a list of"):
        sch.storage_align("B", 0, axis=0, factor=16, offset=1)

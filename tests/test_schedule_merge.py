"""merge: golden IR, numbers on every CPU backend, trace replay and a ScheduleError
for each precondition (including the dependences merging would break)."""

from __future__ import annotations

import numpy as np
import pytest

import tilelang
from tilelang.errors import ScheduleError
from tilelang.ir import structural_equal

TWO_NESTS = """
@T.prim_func
def main(A: T.Buffer((8, 16), "float32"), C: T.Buffer((8, 16), "float32"), D: T.Buffer((8, 8), "float32")):
    T.func_attr({"global_symbol": "main"})
    B = T.alloc_buffer((8, 16), "float32")
    for i, j in T.grid(8, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i_0, j, i_1 in T.grid(4, 16, 2):
        with T.block("C"):
            vi = T.axis.spatial(8, i_0 * 2 + i_1)
            vj = T.axis.spatial(16, j)
            C[vi, vj] = B[vi, vj] + T.float32(1)
    for i_0, j, i_1 in T.grid(4, 8, 2):
        with T.block("D"):
            vi = T.axis.spatial(8, i_0 * 2 + i_1)
            vj = T.axis.spatial(8, j)
            D[vi, vj] = B[vi, vj * 2] - T.float32(1)
"""


def loops(sch, block):
    return sch.get_loops(block)


def merged():
    sch = tilelang.Schedule(tilelang.parse(TWO_NESTS))
    sch.merge(loops(sch, "C")[0], loops(sch, "D")[0])
    return sch


def test_merge_golden_and_replay(golden):
    sch = merged()
    golden(sch.mod["main"].script())
    again = tilelang.Schedule(tilelang.parse(TWO_NESTS))
    sch.trace.apply_to_schedule(again)
    assert structural_equal(again.mod["main"], sch.mod["main"], map_free_vars=True)
    assert "sch.merge(l" in str(sch.trace)


@pytest.mark.parametrize("target", ["python", "c", "llvm"])
def test_merge_computes_the_same(target):
    a = np.random.default_rng(0).random((8, 16), np.float32)
    c, d = np.zeros((8, 16), np.float32), np.zeros((8, 8), np.float32)
    tilelang.build(merged().mod, target=target)["main"](a, c, d)
    np.testing.assert_allclose(c, a * 2 + 1, rtol=1e-6)
    np.testing.assert_allclose(d, a[:, ::2] * 2 - 1, rtol=1e-6)


def expect_error(text, pick, needle):
    sch = tilelang.Schedule(tilelang.parse(text))
    before = sch.mod
    with pytest.raises(ScheduleError, match=needle):
        sch.merge(*pick(sch))
    assert sch.mod is before


def test_error_different_extents():
    expect_error(TWO_NESTS, lambda s: (loops(s, "C")[1], loops(s, "D")[1]),
                 "different extents")  # fmt: skip


def test_error_different_depths():
    expect_error(TWO_NESTS, lambda s: (loops(s, "C")[0], loops(s, "D")[1]),
                 "different depths")  # fmt: skip


def test_error_dependence_between_the_nests():
    # B feeds C: interleaving their iterations would read B before it is written
    expect_error(
        TWO_NESTS.replace("for i, j in T.grid(8, 16):", "for i, j in T.grid(4, 16):")
        .replace("vi, vj = T.axis.remap(\"SS\", [i, j])", "vi = T.axis.spatial(8, i * 2)\n            vj = T.axis.spatial(16, j)"),
        lambda s: (loops(s, "B")[0], loops(s, "C")[0]),
        "depend on each other through",
    )  # fmt: skip


def test_error_moving_past_a_consumer():
    text = TWO_NESTS.replace('D[vi, vj] = B[vi, vj * 2] - T.float32(1)',
                             'D[vi, vj] = C[vi, vj * 2] - T.float32(1)')  # fmt: skip
    text = text.replace(
        "    for i_0, j, i_1 in T.grid(4, 8, 2):",
        '    for i_0, j, i_1 in T.grid(4, 8, 2):\n        with T.block("E"):\n'
        "            vi = T.axis.spatial(8, i_0 * 2 + i_1)\n            vj = T.axis.spatial(8, j)\n"
        "            D[vi, vj] = C[vi, vj] * T.float32(0)\n"
        "    for i_0, j, i_1 in T.grid(4, 8, 2):",
        1,
    )
    # merging B's and D's nests would move B past C and E
    sch_text = text.replace(
        "for i, j in T.grid(8, 16):", "for i, j, k in T.grid(4, 8, 2):"
    ).replace(
        'vi, vj = T.axis.remap("SS", [i, j])\n            B[vi, vj]',
        "vi = T.axis.spatial(8, i * 2 + k)\n            vj = T.axis.spatial(16, j)\n            B[vi, vj]",
    )
    expect_error(sch_text, lambda s: (loops(s, "B")[0], loops(s, "E")[0]), "would move past")


def test_error_not_only_child():
    text = TWO_NESTS.replace(
        "    for i_0, j, i_1 in T.grid(4, 8, 2):\n        with T.block(\"D\"):",
        "    for i_0 in range(4):\n        for j, i_1 in T.grid(8, 2):\n"
        "            with T.block(\"E\"):\n                vi = T.axis.spatial(8, i_0 * 2 + i_1)\n"
        "                vj = T.axis.spatial(8, j)\n                D[vi, vj] = T.float32(0)\n"
        "        for j, i_1 in T.grid(8, 2):\n            with T.block(\"D\"):",
    ).replace("            vi = T.axis.spatial(8, i_0 * 2 + i_1)\n            vj = T.axis.spatial(8, j)\n            D[vi, vj] = B",
              "                vi = T.axis.spatial(8, i_0 * 2 + i_1)\n                vj = T.axis.spatial(8, j)\n                D[vi, vj] = B")  # fmt: skip
    expect_error(text, lambda s: (loops(s, "C")[1], loops(s, "D")[1]), "not the only child")


def test_error_annotated_loop():
    sch = tilelang.Schedule(tilelang.parse(TWO_NESTS))
    sch.parallel(loops(sch, "D")[0])
    with pytest.raises(ScheduleError, match="not a plain serial loop"):
        sch.merge(loops(sch, "C")[0], loops(sch, "D")[0])


def test_error_one_loop():
    expect_error(TWO_NESTS, lambda s: (loops(s, "C")[0],), "two or more distinct loops")


SIMPLE = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    T.func_attr({"global_symbol": "main"})
    for i in T.serial(START, 8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi]
    SCOPE
        for i in range(8):
            with T.block("C"):
                vi = T.axis.spatial(8, i)
                C[vi] = A[vi]
"""


def test_error_loop_not_starting_at_zero():
    text = SIMPLE.replace("START", "1").replace("    SCOPE\n", "    if True:\n")
    text = (
        text.replace("    if True:\n        for", "    for")
        .replace(
            '\n            with T.block("C"):\n                vi',
            '\n        with T.block("C"):\n            vi',
        )
        .replace("                C[vi]", "            C[vi]")
    )
    expect_error(text, lambda s: (loops(s, "B")[0], loops(s, "C")[0]), "starts at 1, not 0")


def test_error_different_scopes():
    text = SIMPLE.replace("START", "0").replace("SCOPE", 'with T.block("outer"):')
    expect_error(text, lambda s: (loops(s, "B")[0], loops(s, "C")[0]), "same block scope")

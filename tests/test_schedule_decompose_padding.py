"""decompose_padding / can_decompose_padding: golden IR, numbers on every CPU backend
against the unscheduled function, replay, and a ScheduleError per precondition."""

from __future__ import annotations

import numpy as np
import pytest

import tilelang
from tilelang.errors import ScheduleError
from tilelang.ir import expr as E
from tilelang.ir import structural_equal
from tilelang.schedule.state import Tree

PAD2D = """
@T.prim_func
def main(x: T.Buffer((6, 5), "float32"), y: T.Buffer((10, 9), "float32")):
    T.func_attr({"global_symbol": "main"})
    for i, j in T.grid(10, 9):
        with T.block("pad"):
            vi, vj = T.axis.remap("SS", [i, j])
            y[vi, vj] = T.if_then_else(2 <= vi and vi < 8 and 1 <= vj and vj < 6, x[vi - 2, vj - 1], T.float32(-1))
"""


def run(mod, target):
    x = np.random.default_rng(0).random((6, 5), np.float32)
    y = np.full((10, 9), 7, np.float32)
    tilelang.build(mod, target=target)["main"](x, y)
    return y


@pytest.mark.parametrize("at", [0, 1])
def test_golden_and_replay(golden, at):
    sch = tilelang.Schedule(tilelang.parse(PAD2D))
    loop = sch.get_loops("pad")[at]
    assert sch.can_decompose_padding("pad", loop)
    sch.decompose_padding("pad", loop)
    golden(sch.mod["main"].script(), f"at_loop_{at}")
    again = tilelang.Schedule(tilelang.parse(PAD2D))
    sch.trace.apply_to_schedule(again)
    assert structural_equal(again.mod["main"], sch.mod["main"], map_free_vars=True)


# (c, at=1) found GCC PR 114375 in gcc 12 (permuted masked loads read zeros; see
# tilelang.runtime.compiler.OLD_GCC_FLAGS, the C backend's workaround).
@pytest.mark.parametrize(
    "target,at", [("python", 0), ("c", 0), ("llvm", 0), ("python", 1), ("c", 1), ("llvm", 1)]
)
def test_numbers_unchanged(target, at):
    expected = run(tilelang.parse(PAD2D), "python")
    sch = tilelang.Schedule(tilelang.parse(PAD2D))
    sch.decompose_padding("pad", sch.get_loops("pad")[at])
    np.testing.assert_array_equal(run(sch.mod, target), expected)


def rejected(text, needle, at=0, block="pad"):
    sch = tilelang.Schedule(tilelang.parse(text))
    loop = sch.get_loops(block)[at] if at is not None else None
    assert not sch.can_decompose_padding(block, loop)
    before = sch.mod
    with pytest.raises(ScheduleError, match=needle):
        sch.decompose_padding(block, loop)
    assert sch.mod is before


def test_error_not_a_padding_block():
    rejected(PAD2D.replace("T.if_then_else(2 <= vi and vi < 8 and 1 <= vj and vj < 6, x[vi - 2, vj - 1], T.float32(-1))",
                           "x[vi % 6, vj % 5]"), "is not a padding block")  # fmt: skip


def test_error_pad_value_reads_a_buffer():
    rejected(PAD2D.replace("T.float32(-1))", "x[0, 0])"), "must not depend on buffers")


def test_error_condition_not_a_bound():
    rejected(
        PAD2D.replace("2 <= vi and", "vi % 2 == 0 and"), "cannot decompose the padding condition"
    )


def test_error_trivial_condition():
    rejected(PAD2D.replace("2 <= vi and vi < 8 and 1 <= vj and vj < 6", "0 <= vi and vj < 9"),
             "holds everywhere")  # fmt: skip


def test_error_empty_copy():
    rejected(PAD2D.replace("2 <= vi and vi < 8", "8 <= vi and vi < 2"), "leaves no value of vi")


def test_error_loop_not_above_the_block():
    text = (
        PAD2D
        + """
@T.prim_func
def other(z: T.Buffer((4,), "float32")):
    for k in range(4):
        with T.block("zero"):
            vk = T.axis.remap("S", [k])
            z[vk] = T.float32(0)
"""
    )
    text = PAD2D.replace(
        "    for i, j in T.grid(10, 9):",
        '    for k in range(4):\n        with T.block("zero"):\n'
        '            vk = T.axis.remap("S", [k])\n            y[vk, 0] = T.float32(0)\n'
        "    for i, j in T.grid(10, 9):",
    )
    sch = tilelang.Schedule(tilelang.parse(text))
    (k,) = sch.get_loops("zero")
    assert not sch.can_decompose_padding("pad", k)
    with pytest.raises(ScheduleError, match="loop k is not above the block"):
        sch.decompose_padding("pad", k)


def test_in_bound_predicate_is_one_left_nested_conjunction():
    """A block with a predicate of two conjuncts (two splits' T.where): the copy
    block's predicate is the bounds and then the block's own conjuncts, as one
    ``a and b and c ...`` (TVM's form), not ``(bounds) and (block's)``."""
    sch = tilelang.Schedule(tilelang.parse(PAD2D))
    i, j = sch.get_loops("pad")
    sch.split(i, factors=[3, 4])  # 12 > 10: T.where(i_0 * 4 + i_1 < 10)
    sch.split(j, factors=[2, 5])  # 10 > 9: and j_0 * 5 + j_1 < 9
    sch.decompose_padding("pad", sch.get_loops("pad")[0])
    realize = Tree(sch.mod["main"]).realizes["pad"][0]
    atoms, node = [], realize.predicate
    while isinstance(node, E.And):
        assert not isinstance(node.b, E.And)  # nested only on the left
        atoms.append(node.b)
        node = node.a
    atoms.append(node)
    assert [str(a) for a in reversed(atoms)] == [
        "2 <= i_0 * 4 + i_1",
        "i_0 * 4 + i_1 < 8",
        "1 <= j_0 * 5 + j_1",
        "j_0 * 5 + j_1 < 6",
        "i_0 * 4 + i_1 < 10",
        "j_0 * 5 + j_1 < 9",
    ]
    np.testing.assert_array_equal(run(sch.mod, "python"), run(tilelang.parse(PAD2D), "python"))

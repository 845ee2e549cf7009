"""set_axis_separator and the Buffer's axis_separators: printed and parsed back (in
T.Buffer, T.alloc_buffer, T.match_buffer), golden IR, numbers on every CPU backend
(the groups laid out row-major are the plain layout), trace replay, and a
ScheduleError for each precondition that leaves the schedule unchanged."""

from __future__ import annotations

import numpy as np
import pytest

import tilelang
from tilelang.errors import ScheduleError
from tilelang.ir import structural_equal

TWO_STAGES = """
@T.prim_func
def main(A: T.Buffer((8, 4, 16), "float32"), C: T.Buffer((8, 4, 16), "float32")):
    T.func_attr({"global_symbol": "main"})
    B = T.alloc_buffer((8, 4, 16), "float32")
    for i, j, k in T.grid(8, 4, 16):
        with T.block("B"):
            vi, vj, vk = T.axis.remap("SSS", [i, j, k])
            B[vi, vj, vk] = A[vi, vj, vk] * T.float32(2)
    for i, j, k in T.grid(8, 4, 16):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSS", [i, j, k])
            C[vi, vj, vk] = B[vi, vj, vk] + T.float32(1)
"""


def function(mod):
    return mod["main"] if hasattr(mod, "functions") else mod


def separated():
    sch = tilelang.Schedule(tilelang.parse(TWO_STAGES))
    sch.set_axis_separator("B", ("write", 0), [1])
    sch.set_axis_separator("B", "A", [1, 2])
    return sch


def test_golden_round_trip_and_replay(golden):
    sch = separated()
    text = sch.mod["main"].script()
    golden(text)
    assert 'A: T.Buffer((8, 4, 16), "float32", axis_separators=[1, 2])' in text
    assert structural_equal(function(tilelang.parse(text)), sch.mod["main"], map_free_vars=True)
    again = tilelang.Schedule(tilelang.parse(TWO_STAGES))
    sch.trace.apply_to_schedule(again)
    assert structural_equal(again.mod["main"], sch.mod["main"], map_free_vars=True)


def test_separators_take_part_in_structural_equality():
    plain = function(tilelang.parse(TWO_STAGES))
    assert not structural_equal(plain, separated().mod["main"], map_free_vars=True)


def test_match_buffer_parses_and_prints_separators():
    text = """
@T.prim_func
def main(a: T.handle):
    A = T.match_buffer(a, (4, 8), "float32", axis_separators=[1])
    for i, j in T.grid(4, 8):
        with T.block("A"):
            vi, vj = T.axis.remap("SS", [i, j])
            A[vi, vj] = T.float32(0)
"""
    func = function(tilelang.parse(text))
    assert next(iter(func.buffer_map.values())).axis_separators == (1,)
    assert "axis_separators=[1]" in func.script()


@pytest.mark.parametrize("target", ["python", "c", "llvm"])
def test_computes_the_same(target):
    a = np.random.default_rng(10).random((8, 4, 16), np.float32)
    c = np.zeros((8, 4, 16), np.float32)
    tilelang.build(separated().mod, target=target)["main"](a, c)
    np.testing.assert_allclose(c, a * 2 + 1, rtol=1e-6)


@pytest.mark.parametrize(
    "separators",
    [[0], [3], [2, 1], [1, 1], ["1"], 1],
    ids=["zero", "rank", "down", "twice", "str", "int"],
)
def test_error_bad_separators(separators):
    sch = tilelang.Schedule(tilelang.parse(TWO_STAGES))
    before = sch.mod
    with pytest.raises(ScheduleError, match="axis separators must be increasing"):
        sch.set_axis_separator("B", ("write", 0), separators)
    assert sch.mod is before


def test_error_buffer_index():
    sch = tilelang.Schedule(tilelang.parse(TWO_STAGES))
    with pytest.raises(ScheduleError, match="write buffer index 1 is out of range"):
        sch.set_axis_separator("B", ("write", 1), [1])


SUBREGIONS = """
@T.prim_func
def main(A: T.Buffer((16, 8), "float32"), C: T.Buffer((16, 8), "float32")):
    T.func_attr({"global_symbol": "main"})
    B = T.alloc_buffer((16, 8), "float32")
    for i, j in T.grid(16, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B_point = T.match_buffer(B[vi, vj], (), offset_factor=1)
            B_point[()] = A[vi, vj] * T.float32(2)
    for i in range(16):
        with T.block("C"):
            vi = T.axis.remap("S", [i])
            B_row = T.match_buffer(B[vi : vi + 1, 0:8], (1, 8), offset_factor=1)
            for j in range(8):
                with T.block("C_inner"):
                    vj = T.axis.remap("S", [j])
                    B_elem = T.match_buffer(B_row[0, vj], (), offset_factor=1)
                    C[vi, vj] = B_elem[()] + B_row[0, 7 - vj]
"""


def test_match_buffer_views_get_separators_as_tvm_gives_them(golden):
    sch = tilelang.Schedule(tilelang.parse(SUBREGIONS))
    sch.set_axis_separator("B", ("write", 0), [1])
    text = sch.mod["main"].script()
    golden(text)
    # the scalar views: as many zeros; the 2-d view: the same separators; the view of
    # the view: zeros again
    assert text.count("offset_factor=1, axis_separators=[0])") == 2
    assert (
        'B_row = T.match_buffer(B[vi, 0:8], (1, 8), "float32", offset_factor=1, '
        "axis_separators=[1])" in text
    )
    assert structural_equal(function(tilelang.parse(text)), sch.mod["main"], map_free_vars=True)
    again = tilelang.Schedule(tilelang.parse(SUBREGIONS))
    sch.trace.apply_to_schedule(again)
    assert structural_equal(again.mod["main"], sch.mod["main"], map_free_vars=True)


@pytest.mark.parametrize("target", ["python", "c", "llvm"])
def test_match_buffer_views_keep_the_numbers(target):
    sch = tilelang.Schedule(tilelang.parse(SUBREGIONS))
    sch.set_axis_separator("B", ("write", 0), [1])
    a = np.random.default_rng(0).standard_normal((16, 8)).astype(np.float32)
    c = np.zeros_like(a)
    tilelang.build(sch.mod, target=target)["main"](a, c)
    np.testing.assert_allclose(c, a * 2 + (a * 2)[:, ::-1], rtol=1e-6)


def test_error_on_a_view_itself():
    sch = tilelang.Schedule(tilelang.parse(SUBREGIONS))
    before = sch.mod
    with pytest.raises(ScheduleError, match="B_row is a T.match_buffer view"):
        sch.set_axis_separator("C_inner", ("read", 0), [1])
    assert sch.mod is before


def test_transform_layout_marks_separators_as_tvm_spells_them():
    from tilelang.tir import IndexMap

    sch = tilelang.Schedule(tilelang.parse(TWO_STAGES))
    sch.transform_layout("B", "B", lambda i, j, k: [i, IndexMap.AXIS_SEPARATOR, k, j])
    text = sch.mod["main"].script()
    assert 'B = T.alloc_buffer((8, 16, 4), "float32", axis_separators=[1])' in text
    assert "IndexMap.AXIS_SEPARATOR" in str(sch.trace)
    again = tilelang.Schedule(tilelang.parse(TWO_STAGES))
    sch.trace.apply_to_schedule(again)
    assert structural_equal(again.mod["main"], sch.mod["main"], map_free_vars=True)
    a = np.random.default_rng(12).random((8, 4, 16), np.float32)
    c = np.zeros((8, 4, 16), np.float32)
    tilelang.build(sch.mod, target="llvm")["main"](a, c)
    np.testing.assert_allclose(c, a * 2 + 1, rtol=1e-6)


@pytest.mark.parametrize("where", ["first", "twice"])
def test_transform_layout_refuses_a_misplaced_separator(where):
    from tilelang.tir import IndexMap

    sep = IndexMap.AXIS_SEPARATOR
    index_map = {
        "first": lambda i, j, k: [sep, i, j, k],
        "twice": lambda i, j, k: [i, sep, sep, j, k],
    }[where]
    sch = tilelang.Schedule(tilelang.parse(TWO_STAGES))
    before = sch.mod
    with pytest.raises(ScheduleError, match="AXIS_SEPARATOR must stand between outputs"):
        sch.transform_layout("B", "B", index_map)
    assert sch.mod is before

"""Schedule options and small API points TVM's tests rely on: ``error_render_level``
(how a ScheduleError reads), dict-valued annotations, and ``func_working_on``
comparing equal to the module's GlobalVar."""

from __future__ import annotations

import pytest

import tilelang
from tilelang import tir
from tilelang.errors import ScheduleError
from tilelang.ir import IRModule

SOURCE = """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32")):
    for i, j in T.grid(8, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
"""


def _schedule(**options):
    return tir.Schedule(tilelang.parse(SOURCE)["main"], **options)


def test_detail_level_names_the_missing_block():
    sch = _schedule()
    with pytest.raises(ScheduleError) as info:
        sch.get_block("nope")
    (msg,) = info.value.args
    assert "Cannot find a block with the name: nope" in msg


def test_fast_level_gives_the_short_reason_only():
    sch = _schedule(error_render_level="fast")
    with pytest.raises(ScheduleError) as info:
        sch.get_block("nope")
    (msg,) = info.value.args
    assert msg == "ScheduleError: get_block: Cannot find a block with the specified name"
    assert info.value.primitive == "get_block"


def test_none_level_renders_nothing_and_the_schedule_is_unchanged():
    sch = _schedule(error_render_level="none")
    before = sch.mod["main"]
    with pytest.raises(ScheduleError) as info:
        sch.cache_read(sch.get_block("B"), 5, "global")  # it reads one buffer
    assert info.value.args == ("ScheduleError: (not rendered)",)
    assert sch.mod["main"] is before


def test_render_level_is_kept_by_copy_and_checked():
    sch = _schedule(error_render_level="none").copy()
    with pytest.raises(ScheduleError, match=r"\(not rendered\)"):
        sch.get_block("nope")
    with pytest.raises(ScheduleError, match="error_render_level"):
        _schedule(error_render_level="loud")


def test_dict_annotation_values_on_loops_and_blocks():
    sch = _schedule()
    block = sch.get_block("B")
    i, _ = sch.get_loops(block)
    value = {"arr": [0, 0], "key": 3}
    sch.annotate(i, "note", value)
    sch.annotate(block, "note", value)
    assert sch.get(i).annotations["note"] == value
    assert sch.get(block).annotations["note"] == value
    # what is printed parses back to the same annotations
    again = tilelang.parse(sch.mod["main"].script())["main"]
    tilelang.ir.assert_structural_equal(again, sch.mod["main"])
    sch.unannotate(i, "note")
    assert "note" not in sch.get(i).annotations


def test_annotation_dict_keys_must_be_strings():
    sch = _schedule()
    with pytest.raises(ScheduleError, match="string-keyed dicts"):
        sch.annotate(sch.get_block("B"), "note", {1: 2})


def test_func_working_on_equals_the_global_var():
    mod = IRModule({"f": tilelang.parse(SOURCE)["main"], "g": tilelang.parse(SOURCE)["main"]})
    sch = tir.Schedule(mod)
    assert sch.func_working_on is None
    sch.work_on("g")
    assert sch.func_working_on == "g"
    assert sch.func_working_on == sch.mod.get_global_var("g")
    assert sch.func_working_on != sch.mod.get_global_var("f")

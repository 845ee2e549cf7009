"""Pass infrastructure: Pass, prim_func_pass/module_pass, Sequential, PassContext
(opt levels, disabled/required passes, config, instruments) and the lowering phases."""

from __future__ import annotations

import io

import pytest

import tilelang
from tilelang import transform
from tilelang.ir import For, ForKind, IRModule, post_order_visit
from tilelang.transform import (
    PassContext,
    PassInfo,
    PassTimingInstrument,
    PrintIR,
    Sequential,
    module_pass,
    prim_func_pass,
)

SOURCE = """
@T.prim_func
def add_one(A: T.Buffer((8,), "float32")):
    for i in T.unroll(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            A[vi] = A[vi] * T.float32(1) + T.float32(1)
"""


def _mod() -> IRModule:
    return tilelang.parse(SOURCE)


def _count(node, cls) -> int:
    found = []
    post_order_visit(node, lambda n: found.append(n) if isinstance(n, cls) else None)
    return len(found)


def _renamer(tag: str):
    @prim_func_pass(opt_level=1, name=f"rename_{tag}")
    def rename(func, mod, ctx):
        return func.with_attr("tag", func.attrs.get("tag", "") + tag)

    return rename


def test_prim_func_pass_decorator_forms():
    @prim_func_pass(opt_level=0)
    def mark(func, mod, ctx):
        return func.with_attr("marked", True)

    assert mark.info == PassInfo(0, "mark")
    assert _mod() is not mark(_mod())
    assert mark(_mod())["add_one"].attrs["marked"] is True

    direct = prim_func_pass(lambda f, m, c: f.with_attr("x", 1), opt_level=0, name="direct")
    assert direct(_mod())["add_one"].attrs["x"] == 1

    @prim_func_pass(opt_level=0, name="ClassPass")
    class Counter:
        def __init__(self, value):
            self.value = value

        def transform_function(self, func, mod, ctx):
            return func.with_attr("count", self.value)

    assert Counter(7)(_mod())["add_one"].attrs["count"] == 7
    assert Counter(7).info.name == "ClassPass"


def test_module_pass_and_sequential_order():
    @module_pass(opt_level=0)
    def drop_all(mod, ctx):
        return IRModule({})

    assert len(drop_all(_mod())) == 0
    seq = Sequential([_renamer("a"), _renamer("b")], opt_level=0, name="seq")
    assert seq(_mod())["add_one"].attrs["tag"] == "ab"


def test_opt_level_disabled_and_required_passes():
    seq = Sequential([_renamer("a"), _renamer("b")])
    with PassContext(opt_level=0):
        assert "tag" not in seq(_mod())["add_one"].attrs  # both need opt_level 1
    with PassContext(opt_level=0, required_pass=["rename_b"]):
        assert seq(_mod())["add_one"].attrs["tag"] == "b"
    with PassContext(opt_level=3, disabled_pass=["rename_a"]):
        assert seq(_mod())["add_one"].attrs["tag"] == "b"
    assert PassContext.current().opt_level == 2  # the default outside any context


def test_contexts_nest():
    with PassContext(opt_level=1) as outer:
        with PassContext(opt_level=3) as inner:
            assert PassContext.current() is inner
        assert PassContext.current() is outer


class _Recorder:
    def __init__(self, veto=()):
        self.events, self.veto = [], set(veto)

    def enter_pass_ctx(self):
        self.events.append("enter")

    def exit_pass_ctx(self):
        self.events.append("exit")

    def should_run(self, mod, info):
        return info.name not in self.veto

    def run_before_pass(self, mod, info):
        self.events.append(f"before {info.name}")

    def run_after_pass(self, mod, info):
        self.events.append(f"after {info.name}")


def test_instruments_see_every_pass_and_can_veto():
    recorder = _Recorder(veto={"rename_a"})
    with PassContext(opt_level=3, instruments=[recorder]):
        out = Sequential([_renamer("a"), _renamer("b")])(_mod())
    assert out["add_one"].attrs["tag"] == "b"
    assert recorder.events == ["enter", "before rename_b", "after rename_b", "exit"]


def test_disabling_lowering_passes():
    with PassContext(disabled_pass=["tir.UnrollLoop"]):
        kept = tilelang.lower(_mod())
    assert _count(kept["add_one"].body, For) == 1
    unrolled = tilelang.lower(_mod())
    assert _count(unrolled["add_one"].body, For) == 0
    loops = []
    post_order_visit(kept["add_one"].body, lambda n: loops.append(n) if isinstance(n, For) else 0)
    assert loops[0].kind == ForKind.UNROLLED


def test_add_lower_pass_inserts_a_printing_pass(capsys):
    printed = []

    @prim_func_pass(opt_level=0)
    def print_tir(f, mod, ctx):
        printed.append(f)
        print(f)
        return f

    with PassContext(opt_level=3, config={"tir.add_lower_pass": [(3, print_tir)]}):
        lowered = tilelang.lower(_mod())
    assert len(printed) == 1 and printed[0] is lowered["add_one"]
    out = capsys.readouterr().out
    assert "A_1[0] = A_1[0] + T.float32(1)" in out
    assert "T.block" not in out


def test_add_lower_pass_runs_after_its_phase():
    seen = {}

    def probe(phase):
        @prim_func_pass(opt_level=0, name=f"probe{phase}")
        def look(f, mod, ctx):
            seen[phase] = _count(f.body, tilelang.ir.BlockRealize)
            return f

        return look

    config = {"tir.add_lower_pass": [(phase, probe(phase)) for phase in range(4)]}
    with PassContext(config=config):
        tilelang.lower(_mod())
    assert seen[0] > 0 and seen[1] == 0 and seen[3] == 0
    with pytest.raises(ValueError, match="phase"):
        with PassContext(config={"tir.add_lower_pass": [(7, probe(7))]}):
            tilelang.lower(_mod())


def test_print_ir_instrument():
    out = io.StringIO()
    instrument = PrintIR(
        print_before=["tir.FlattenBuffer"], print_after=["FlattenBuffer"], file=out
    )
    with PassContext(instruments=[instrument]):
        tilelang.lower(_mod())
    text = out.getvalue()
    assert text.count("# IR before tir.FlattenBuffer") == 1
    assert text.count("# IR after tir.FlattenBuffer") == 1
    before, after = text.split("# IR after tir.FlattenBuffer")
    assert "A[i] = " in before and "A_1[i] = " in after


def test_print_after_all_prints_each_pass():
    out = io.StringIO()
    with PassContext(instruments=[PrintIR(print_after_all=True, file=out)]):
        tilelang.lower(_mod())
    names = [p.info.name for p in transform.lower_passes()]
    assert out.getvalue().count("# IR after") == len(names)


def test_pass_timing_instrument_renders_a_table():
    timing = PassTimingInstrument()
    with PassContext(instruments=[timing]):
        tilelang.lower(_mod())
    totals = timing.totals()
    assert "tir.FlattenBuffer" in totals and all(t >= 0 for t in totals.values())
    table = timing.render()
    assert table.splitlines()[0].split() == ["pass", "ms", "share"]
    assert table.splitlines()[-1].startswith("total")


def test_tvm_style_spellings():
    assert tilelang.transform.PassContext is PassContext
    assert tilelang.transform.prim_func_pass is prim_func_pass
    assert [p.info.name for p in transform.phases()[0]] == [
        "tir.VerifyWellFormed",
        "tl.VerifyBufferBounds",
    ]

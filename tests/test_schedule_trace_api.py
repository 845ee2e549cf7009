"""Traces as TVM builds them: InstructionKind / Instruction (inputs, attrs, outputs),
Trace(insts, decisions) with get_decision, append, pop, simplified, with_decision,
as_python, and the JSON form that replays on another schedule."""

from __future__ import annotations

import json

import pytest

import tilelang
from tilelang import tir
from tilelang.ir import assert_structural_equal
from tilelang.schedule import (
    BlockRV,
    ExprRV,
    Instruction,
    InstructionKind,
    LoopRV,
    Trace,
)

TWO_STAGES = """
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16), "float32")
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = B[vi, vj] + T.float32(1)
"""

INLINED = """
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = A[vi, vj] * T.float32(2) + T.float32(1)
"""


def get_block(name, out):
    return Instruction(InstructionKind.get("GetBlock"), [], [name, "main"], [out])


def compute_inline(block):
    return Instruction(InstructionKind.get("ComputeInline"), [block], [], [])


def test_kinds_are_looked_up_by_tvm_name():
    kind = InstructionKind.get("GetLoops")
    assert kind.name == "GetLoops" and kind.method == "get_loops" and kind.is_pure
    assert InstructionKind.get("GetSBlock") is InstructionKind.get("GetBlock")
    assert not InstructionKind.get("EnterPostproc").is_pure
    assert InstructionKind.get("Split").same_as(InstructionKind.get("Split"))
    with pytest.raises(ValueError, match="unknown instruction kind"):
        InstructionKind.get("NoSuchKind")


def test_instruction_prints_with_placeholders():
    block, l0, l1 = BlockRV(), LoopRV(), LoopRV()
    inst = Instruction(InstructionKind.get("GetLoops"), [block], [], [l0, l1])
    assert str(inst) == "_, _ = sch.get_loops(block=_)"
    assert inst.inputs[0].same_as(block) and inst.outputs == (l0, l1)
    split = Instruction(InstructionKind.get("Split"), [l0, None, 4], [True, False], [l1])
    assert str(split) == (
        "_, = sch.split(loop=_, factors=[None, 4], preserve_unit_iters=True, "
        "disable_predication=False)"
    )


def test_recorded_calls_split_into_inputs_and_attrs_as_tvm_does():
    sch = tir.Schedule(tilelang.parse(TWO_STAGES))
    block = sch.get_block("B")
    i, j = sch.get_loops(block)
    sch.split(j, factors=[None, 4])
    sch.annotate(i, "key", "value")
    *_, split, annotate = sch.trace.insts
    assert split.kind.name == "Split"
    assert split.inputs == (j, None, 4) and split.attrs == (True, False)
    assert annotate.kind.name == "Annotate"
    assert annotate.inputs == (i, "value") and annotate.attrs == ("key",)


def test_trace_from_instructions_prints_replays_and_pops():
    b0 = BlockRV()
    trace = Trace([get_block("B", b0), compute_inline(b0)], {})
    assert str(trace).splitlines() == [
        "def apply_trace(sch: tir.Schedule) -> None:",
        '  b0 = sch.get_block(name="B", func_name="main")',
        "  sch.compute_inline(block=b0)",
    ]
    sch = tir.Schedule(tilelang.parse(TWO_STAGES))
    trace.apply_to_schedule(sch, remove_postproc=False)
    assert_structural_equal(sch.mod["main"], tilelang.parse(INLINED)["main"])
    last = trace.insts[-1]
    assert trace.pop() is last and len(trace.insts) == 1
    assert Trace().pop() is None
    assert str(Trace([], {})).endswith("  pass")


def test_simplified_drops_unused_lookups_and_cuts_postprocessing():
    b0, b1 = BlockRV(), BlockRV()
    insts = [
        get_block("B", b0),
        compute_inline(b0),
        get_block("C", b1),
        Instruction(InstructionKind.get("EnterPostproc")),
        compute_inline(b1),
    ]
    trace = Trace(insts, {})
    assert [i.kind.name for i in trace.simplified(remove_postproc=True).insts] == [
        "GetBlock",
        "ComputeInline",
    ]
    assert trace.simplified(remove_postproc=False).insts == insts
    # an unused lookup goes, an effect stays even when its outputs are unused
    l0, l1, l2 = LoopRV(), LoopRV(), LoopRV()
    loops = Instruction(InstructionKind.get("GetLoops"), [b0], [], [l0, l1])
    split = Instruction(InstructionKind.get("Split"), [l1, None, 4], [True, False], [l2])
    unused = Instruction(InstructionKind.get("GetLoops"), [b0], [], [LoopRV()])
    kept = Trace([get_block("B", b0), loops, unused, split], {}).simplified(False).insts
    assert [i.kind.name for i in kept] == ["GetBlock", "GetLoops", "Split"]


def test_decisions_with_list_values_and_with_decision():
    sch = tir.Schedule(tilelang.parse(TWO_STAGES), seed=3)
    (_, j) = sch.get_loops(sch.get_block("B"))
    factors = sch.sample_perfect_tile(j, n=2, max_innermost_factor=4)
    sample = sch.trace.insts[-1]
    drawn = [sch.get(f) for f in factors]
    assert sch.trace.decisions == {sample: drawn}
    assert sch.trace.get_decision(sample) == drawn
    forced = sch.trace.with_decision(sample, [8, 2])
    assert forced.get_decision(sample) == [8, 2] and forced.insts == sch.trace.insts
    assert sch.trace.get_decision(sample) == drawn  # the original is untouched
    replay = tir.Schedule(tilelang.parse(TWO_STAGES))
    forced.apply_to_schedule(replay)
    assert [i.kind.name for i in replay.trace.insts][-1] == "SamplePerfectTile"
    assert replay.trace.get_decision(replay.trace.insts[-1]) == [8, 2]


def test_decision_provider_chooses_on_replay():
    sch = tir.Schedule(tilelang.parse(TWO_STAGES))
    sch.sample_categorical([1, 2, 3], [0.2, 0.3, 0.5], decision=0)
    replay = tir.Schedule(tilelang.parse(TWO_STAGES))
    seen = []

    def provider(inst, inputs, attrs, decision):
        seen.append((inst.kind.name, list(attrs[0]), decision))
        return 2

    sch.trace.apply_to_schedule(replay, decision_provider=provider)
    assert seen == [("SampleCategorical", [1, 2, 3], 0)]
    (rv,) = replay.trace.insts[-1].outputs
    assert replay.get(rv) == 3


def test_json_round_trip_keeps_strings_apart_from_handles():
    for annotation in ("SSRSSR", "", '""', '"', "b0"):
        b0 = BlockRV()
        annotate = Instruction(InstructionKind.get("Annotate"), [b0, annotation], ["key"], [])
        data = Trace([get_block("B", b0), annotate], {}).as_json()
        assert data[0][1] == ["Annotate", ["b0", f'"{annotation}"'], ["key"], []]
        data = json.loads(json.dumps(data))  # plain JSON data
        sch = tir.Schedule(tilelang.parse(TWO_STAGES))
        Trace.apply_json_to_schedule(data, sch)
        assert sch.get(sch.get_block("B")).annotations == {"key": annotation}


def test_json_keeps_decisions_and_replays_them():
    sch = tir.Schedule(tilelang.parse(TWO_STAGES), seed=5)
    (i, j) = sch.get_loops(sch.get_block("B"))
    j0, j1 = sch.split(j, sch.sample_perfect_tile(j, n=2))
    data = sch.trace.as_json()
    assert data[0][0] == ["GetBlock", [], ["B", "main"], ["b0"]]
    assert data[1] == [[2, sch.trace.get_decision(sch.trace.insts[2])]]
    again = tir.Schedule(tilelang.parse(TWO_STAGES))
    Trace.apply_json_to_schedule(json.loads(json.dumps(data)), again)
    assert_structural_equal(again.mod["main"], sch.mod["main"])
    assert str(Trace.from_json(data)) == str(sch.trace)
    with pytest.raises(ValueError):
        Trace.apply_json_to_schedule([[["GetLoops", ["b9"], [], ["l0"]]], []], again)


def test_symbolic_loop_is_tiled_trivially_and_replays():
    mod = tilelang.parse("""
@T.prim_func
def main(a: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n, 8))
    for i, j in T.grid(n, 8):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            A[vi, vj] = T.float32(1)
""")
    sch = tir.Schedule(mod)
    i, _ = sch.get_loops(sch.get_block("B"))
    factors = sch.sample_perfect_tile(i, n=3)
    assert factors[0] is None and [sch.get(f) for f in factors[1:]] == [1, 1]
    sch.split(i, factors)
    # as in TVM, the None output takes a number of its own
    assert "  _, v4, v5 = sch.sample_perfect_tile(loop=l1, n=3" in str(sch.trace)
    replay = tir.Schedule(mod)
    sch.trace.apply_to_schedule(replay)
    assert_structural_equal(replay.mod["main"], sch.mod["main"])


def test_expr_rv_outputs_print_as_v():
    trace = Trace(
        [Instruction(InstructionKind.get("SampleCategorical"), [], [[3], [1.0]], [ExprRV()])], {}
    )
    assert trace.as_python() == ["v0 = sch.sample_categorical(candidates=[3], probs=[1.0])"]

"""The schedule state (ScheduleState, StmtSRef, replace), block-scope dependencies, and
the state API of Schedule: state, get_sref, work_on, get_output_blocks,
sample_compute_location, and the error types TVM raises for unknown handles and
functions."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

import tilelang
from tilelang import tir
from tilelang.errors import ScheduleError
from tilelang.ir import For, IRModule, assert_structural_equal, structural_equal
from tilelang.ir import stmt as S
from tilelang.schedule import DepKind, ScheduleState
from tilelang.schedule.state import stmt_children

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

MATMUL = """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32"),
         C: T.Buffer((8, 8), "float32")):
    for i, j in T.grid(8, 8):
        with T.block("init"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[vi, vj] = T.float32(0)
        for k in range(8):
            with T.block("update"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]
"""

READ_THEN_WRITE = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"),
         C: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("C"):
            vi = T.axis.remap("S", [i])
            C[vi] = B[vi] + T.float32(1)
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[vi] * T.float32(2)
"""


def blocks(func) -> dict:
    found = {}
    stack = [func.body]
    while stack:
        node = stack.pop()
        if isinstance(node, S.Block):
            found[node.name_hint] = node
        stack.extend(stmt_children(node))
    return found


def test_get_sref_is_stable_and_knows_its_parent():
    mod = tilelang.parse(TWO_STAGES)
    state = ScheduleState(mod["main"])
    block_b = blocks(state.mod["main"])["B"]
    sref = state.get_sref(block_b)
    assert sref.stmt is block_b and state.get_sref(block_b) is sref
    assert isinstance(sref.parent.stmt, For) and sref.parent.parent.parent.stmt.name_hint == "root"
    assert state.get_sref(state.mod["main"].body) is None  # a BlockRealize has no sref
    assert state.get_sref(blocks(tilelang.parse(TWO_STAGES)["main"])["B"]) is None


def test_replace_copies_the_path_and_updates_references():
    mod = tilelang.parse(TWO_STAGES)
    state = ScheduleState(mod)
    old_func = state.mod["main"]
    first, second = old_func.body.block.body.seq
    kept = state.get_sref(second)
    removed = state.get_sref(first)
    root = state.get_sref(old_func.body.block)
    target = S.BlockRealize([], True, S.Block([], [], [], "target", second))
    state.replace(state.get_sref(first), target)
    assert state.mod["main"] is not old_func and old_func.body.block.body.seq[0] is first
    assert state.mod["main"].body.block.body.seq[0] is target
    assert removed.stmt is None  # its loop left the module
    assert kept.stmt is second  # kept: the same node
    assert root.stmt is state.mod["main"].body.block  # on the copied path: the copy


def test_replace_reuses_block_references_when_asked():
    state = ScheduleState(tilelang.parse(TWO_STAGES))
    block_b = blocks(state.mod["main"])["B"]
    sref = state.get_sref(block_b)
    new_block = blocks(tilelang.parse(MATMUL)["main"])["init"]
    state.replace(sref, new_block, {block_b: new_block})
    assert sref.stmt is new_block and state.get_sref(new_block) is sref
    with pytest.raises(ScheduleError, match="cannot replace"):
        state.replace(sref, S.Evaluate(0))


def test_replace_touches_one_function_of_a_module():
    main, other = tilelang.parse(TWO_STAGES)["main"], tilelang.parse(TWO_STAGES)["main"]
    state = ScheduleState(IRModule({"main": main, "other": other}))
    state.replace(state.get_sref(main.body.block), blocks(tilelang.parse(MATMUL)["main"])["root"])
    assert state.mod["other"] is other and state.mod["main"] is not main
    assert not structural_equal(state.mod["main"], main)


def test_block_scope_dependencies():
    for text, edges in [
        (TWO_STAGES, {("B", "C", DepKind.RAW)}),
        (MATMUL, {("init", "update", DepKind.RAW), ("init", "update", DepKind.WAW)}),
        (READ_THEN_WRITE, {("C", "B", DepKind.WAR)}),
    ]:
        state = ScheduleState(tilelang.parse(text))
        found = blocks(state.mod["main"])
        scope = state.get_block_scope(state.get_sref(found["root"]))
        got = set()
        for block in found.values():
            for dep in scope.get_deps_by_src(state.get_sref(block)):
                assert dep in scope.get_deps_by_dst(dep.dst)
                got.add((dep.src.stmt.name_hint, dep.dst.stmt.name_hint, dep.kind))
        assert got == edges


def test_schedule_state_follows_primitives():
    sch = tir.Schedule(tilelang.parse(MATMUL))
    assert sch.state.mod is sch.mod
    update = sch.get_block("update")
    sref = sch.get_sref(update)
    assert sref.stmt is sch.get(update) and sch.state.get_sref(sch.get(update)) is sref
    i, j, k = sch.get_loops(update)
    loop_sref = sch.get_sref(k)
    sch.annotate(update, "note", 1)
    sch.unroll(k)
    # the block and loop were rebuilt; their references follow them
    assert sref.stmt is sch.get(update) and sref.stmt.annotations == {"note": 1}
    assert loop_sref.stmt is sch.get(k) and loop_sref.stmt.kind == S.ForKind.UNROLLED
    copy = sch.copy()
    assert copy.get_sref(i) is not sch.get_sref(i)
    assert copy.get_sref(i).stmt is sch.get_sref(i).stmt


def test_unknown_handles_raise_index_errors():
    sch = tir.Schedule(tilelang.parse(MATMUL))
    other = sch.copy()
    block = sch.get_block("update")
    (i, *_) = sch.get_loops(block)
    i0, _ = sch.split(i, factors=[2, 4])
    for call in (lambda: other.get_sref(i0), lambda: other.get(i0), lambda: other.fuse(i0)):
        with pytest.raises(IndexError):
            call()
    sch.remove_rv(block)
    with pytest.raises(IndexError):
        sch.get(block)
    with pytest.raises(ScheduleError):  # also a ScheduleError
        sch.get_loops(block)


def test_work_on_names_the_function_of_lookups():
    two = tilelang.parse(TWO_STAGES)["main"]
    sch = tir.Schedule(IRModule({"f": two, "g": tilelang.parse(MATMUL)["main"]}))
    with pytest.raises(ValueError, match="which function to be working on"):
        sch.get_block("B")
    sch.work_on("g")
    assert sch.func_working_on == "g"
    assert sch.get(sch.get_block("update")).name_hint == "update"
    with pytest.raises(ValueError):
        sch.work_on("nope")


def test_get_output_blocks():
    sch = tir.Schedule(tilelang.parse(TWO_STAGES))
    assert [sch.get(b).name_hint for b in sch.get_output_blocks("root")] == ["C"]
    sch = tir.Schedule(tilelang.parse(MATMUL))
    assert [sch.get(b).name_hint for b in sch.get_output_blocks("root")] == ["init", "update"]
    sch.blockize(sch.get_loops("update")[2])
    names = [sch.get(b).name_hint for b in sch.get_output_blocks("root")]
    assert names == ["init", "update_o", "update"]
    assert "get_output_blocks(block=b" in str(sch.trace)


def test_sample_compute_location_candidates_and_replay():
    mod = tilelang.parse(TWO_STAGES)
    sch = tir.Schedule(mod, seed=0)
    drawn = Counter()
    for _ in range(200):
        sch.sample_compute_location("B")
        drawn[sch.trace.get_decision(sch.trace.insts[-1])] += 1
    # inline (-2), root (-1), or at loop i (0) or j (1) of the consumer
    assert set(drawn) == {-2, -1, 0, 1}
    a = np.random.default_rng(0).random((16, 16), "float32")
    for decision in (-2, -1, 0, 1):
        sch = tir.Schedule(mod)
        loop = sch.sample_compute_location("B", decision=decision)
        sch.compute_at("B", loop)
        c = np.zeros((16, 16), "float32")
        tilelang.build(sch.mod, target="python")["main"](a, c)
        np.testing.assert_allclose(c, a * 2 + 1)
        replay = tir.Schedule(mod)
        sch.trace.apply_to_schedule(replay)
        assert_structural_equal(replay.mod["main"], sch.mod["main"])
    inlined = tir.Schedule(mod)
    inlined.compute_at("B", inlined.sample_compute_location("B", decision=-2))
    assert set(blocks(inlined.mod["main"])) == {"root", "C"}
    stays = tir.Schedule(mod)
    stays.compute_at("B", stays.sample_compute_location("B", decision=-1))
    assert stays.mod["main"] is mod["main"]


def test_sample_compute_location_replays_a_stale_decision_at_the_nearest_candidate():
    sch = tir.Schedule(tilelang.parse(TWO_STAGES))
    # the consumer C has two loops: a decision past them falls back to the inner one
    loop = sch.sample_compute_location("B", decision=5)
    assert sch.trace.get_decision(sch.trace.insts[-1]) == 1
    assert sch.get(loop) is sch.get(sch.get_loops("C")[1])
    # init is already under every loop of its consumer: only "root" remains
    sch = tir.Schedule(tilelang.parse(MATMUL))
    sch.sample_compute_location("init", decision=1)
    assert sch.trace.get_decision(sch.trace.insts[-1]) == -1


LOOP_CARRIED = """
@T.prim_func
def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"),
         C: T.Buffer((8,), "float32")):
    for i in range(8):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[vi] * T.float32(2)
        with T.block("C"):
            vi = T.axis.remap("S", [i])
            T.reads(B[vi - 1])
            C[vi] = T.if_then_else(vi >= 1, B[vi - 1], T.float32(0))
"""

NOT_AFFINE = """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32")):
    for i, j in T.grid(8, 8):
        with T.block("diag"):
            vi = T.axis.spatial(8, i)
            vj = T.axis.spatial(8, i)
            A[vi, vj] = T.float32(1)
    for i in range(16):
        with T.block("tile"):
            vi = T.axis.spatial(8, i // 2)
            A[vi, 0] = T.float32(2)
"""

SHARED_ACROSS_THREADS = """
@T.prim_func
def main(A: T.Buffer((8, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    B = T.alloc_buffer((8, 8), scope="shared")
    for i in T.thread_binding(8, thread="threadIdx.x"):
        for j in range(8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * T.float32(2)
        for j in range(8):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vj, vi] = B[vj, vi] + T.float32(1)
"""


def flags(text):
    state = ScheduleState(tilelang.parse(text))
    found = blocks(state.mod["main"])
    return {name: tuple(state._get_cached_flags(state.get_sref(b))) for name, b in found.items()}


def test_cached_flags():
    assert set(flags(TWO_STAGES).values()) == {(True, True, True)}
    assert set(flags(MATMUL).values()) == {(True, True, True)}
    # a later block overwrites what an earlier one reads: the root is no stage pipeline
    assert flags(READ_THEN_WRITE)["root"] == (True, True, False)
    # C reads B[i - 1], which the same iteration of i has not produced
    got = flags(LOOP_CARRIED)
    assert got["C"] == (True, False, True) and got["root"] == (True, True, False)
    # diag binds two iterators to one loop; tile's i // 2 is a quasi-affine split
    got = flags(NOT_AFFINE)
    assert got["diag"][0] is False and got["tile"][0] is True
    # a shared buffer is produced by every thread of the loop before any reads it
    assert flags(SHARED_ACROSS_THREADS)["C"] == (True, True, True)
    local = SHARED_ACROSS_THREADS.replace('scope="shared"', 'scope="local"')
    assert flags(local)["C"] == (True, False, True)


PADDED_PRODUCER = """
@T.prim_func
def main(X: T.Buffer((16,), "float32"), Y: T.Buffer((16,), "float32")):
    cache = T.alloc_buffer((16,))
    for o in range(4):
        for a in range(6):
            with T.block("cache"):
                v = T.axis.spatial(16, o * 4 - 1 + a)
                T.where(1 <= o * 4 + a and o * 4 + a < LIMIT)
                cache[v] = X[v]
        for b, k in T.grid(4, 3):
            with T.block("use"):
                v = T.axis.spatial(16, o * 4 + b)
                vk = T.axis.reduce(3, k)
                T.reads(cache[v + vk - 1])
                with T.init():
                    Y[v] = T.float32(0)
                Y[v] = Y[v] + T.if_then_else(1 <= v + vk and v + vk < 17, cache[v + vk - 1],
                                             T.float32(0))
"""


def test_cached_flags_of_a_predicated_producer():
    # the predicate only cuts what falls outside the buffer: the reads are covered
    assert flags(PADDED_PRODUCER.replace("LIMIT", "17"))["use"] == (True, True, True)
    # it cuts the last element inside the buffer too: not covered
    assert flags(PADDED_PRODUCER.replace("LIMIT", "16"))["use"] == (True, False, True)


@pytest.mark.parametrize("decision", [[2, 8], "1", 1.5, True])
def test_sample_compute_location_refuses_a_decision_that_is_not_an_int(decision):
    sch = tir.Schedule(tilelang.parse(TWO_STAGES))
    before = sch.mod
    with pytest.raises(ScheduleError, match="sample_compute_location.*decision"):
        sch.sample_compute_location("B", decision=decision)
    assert sch.mod is before
    assert all(inst.kind.name != "sample_compute_location" for inst in sch.trace.insts)

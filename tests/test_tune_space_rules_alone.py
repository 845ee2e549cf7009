"""The rules space beyond tiled reductions (tilelang/tune/space_rules.py,
tilelang/schedule/rules/alone.py): blocks without a tiling plan (elementwise,
transpose, pooling) have decisions of their own, and producers left at the root (a
convolution's padding) get a compute location drawn by sample_compute_location. Every
sampled trace replays to the same module and computes what NumPy computes."""

from __future__ import annotations

import random

import numpy as np
import pytest

import tilelang
from tilelang.ir import assert_structural_equal
from tilelang.ir import stmt as S
from tilelang.ir.structural import structural_equal
from tilelang.schedule.common import find_block
from tilelang.schedule.navigation import get_consumers
from tilelang.schedule.rules import Machine, default_schedule
from tilelang.schedule.rules.alone import AlonePlan, plan_alone
from tilelang.schedule.rules.analysis import leaf_blocks
from tilelang.schedule.state import Tree
from tilelang.testing import default_workloads as W
from tilelang.tune import replay, tune_tir
from tilelang.tune.space import apply_space, decisions_of, mutate
from tilelang.tune.space_rules import RulesSpace

AVX512 = Machine(512, 32)  # fixed, so the decisions do not depend on the host

POOL = """
@T.prim_func
def pool(A: T.Buffer((8, 32, 32), "float32"), B: T.Buffer((8, 16, 16), "float32")):
    T.func_attr({"global_symbol": "pool", "tir.noalias": True})
    for c, h, w, kh, kw in T.grid(8, 16, 16, 2, 2):
        with T.block("B"):
            vc, vh, vw, vkh, vkw = T.axis.remap("SSSRR", [c, h, w, kh, kw])
            with T.init():
                B[vc, vh, vw] = T.float32(-3.0e38)
            B[vc, vh, vw] = T.max(B[vc, vh, vw], A[vc, vh * 2 + vkh, vw * 2 + vkw])
"""

SCALE = """
@T.prim_func
def scale(A: T.Buffer((64, 128), "float32"), C: T.Buffer((128,), "float32"),
          B: T.Buffer((64, 128), "float32")):
    T.func_attr({"global_symbol": "scale", "tir.noalias": True})
    for i, j in T.grid(64, 128):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = T.exp(A[vi, vj]) * C[vj]
"""


def _pool_reference(a):
    return a.reshape(8, 16, 2, 16, 2).max(axis=(2, 4))


CASES = {
    "pool": (POOL, [(8, 32, 32)], _pool_reference),
    "scale": (SCALE, [(64, 128), (128,)], lambda a, c: np.exp(a) * c),
}


def _case(name):
    """(module, function name, inputs maker, reference) of a case or default workload."""
    if name in CASES:
        text, shapes, reference = CASES[name]

        def inputs(seed):
            rng = np.random.default_rng(seed)
            return [rng.standard_normal(s).astype("float32") for s in shapes]

        mod = tilelang.parse(text)
        out_shape = reference(*inputs(0)).shape
        return mod, name, lambda seed: inputs(seed) + [np.zeros(out_shape, "float32")], reference
    workload = {
        "transpose": W.transpose(64, 64),
        "conv2d": W.conv2d(8, 16, 10, 10),
        "depthwise": W.depthwise_conv2d(8, 10, 10),
    }[name]
    return tilelang.parse(workload.tir), workload.name, workload.arguments, workload.reference


NAMES = ["pool", "scale", "transpose", "conv2d", "depthwise"]


def _decisions(sch):
    return [
        (i.kind.name, sch.trace.get_decision(i)) for i in sch.trace.insts if i.kind.has_decision
    ]


def _check_numbers(mod, func_name, sch, make_args, reference, seed):
    args = make_args(seed)
    tilelang.build(sch.mod, "llvm")[func_name](*args)
    np.testing.assert_allclose(args[-1], reference(*args[:-1]), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name", NAMES)
def test_first_choices_are_still_the_default_schedule(name):
    mod, *_ = _case(name)
    sch = apply_space(mod, RulesSpace(AVX512), seed=3, rest=0)
    assert_structural_equal(sch.mod, default_schedule(mod, AVX512).mod)
    assert _decisions(sch)  # the space has decisions here now


@pytest.mark.parametrize("name", NAMES)
def test_sampled_traces_replay_and_compute_what_numpy_computes(name):
    mod, func_name, make_args, reference = _case(name)
    space = RulesSpace(AVX512)
    distinct = []
    for seed in range(8):
        sch = apply_space(mod, space, seed)
        replayed = replay(mod, sch.trace)
        assert_structural_equal(replayed.mod, sch.mod)
        if any(structural_equal(sch.mod, other) for other in distinct):
            continue
        distinct.append(sch.mod)
        _check_numbers(mod, func_name, replayed, make_args, reference, seed)
    assert len(distinct) >= 3  # the draws change the schedule, not only the trace


def test_alone_plans_of_the_rules_and_their_draws():
    mod = tilelang.parse(POOL)
    (info,) = leaf_blocks(mod["pool"])
    # 8 x 16 x 16 x 4 iterations: too little work to wake a second thread
    assert plan_alone(info, AVX512) == AlonePlan(0, 0, False, False)
    seen = set()
    for seed in range(12):
        sch = apply_space(mod, RulesSpace(AVX512), seed)
        kinds = [i.kind.name for i in sch.trace.insts]
        seen.add(("Parallel" in kinds, "Unroll" in kinds))
    assert seen == {(False, False), (False, True), (True, False), (True, True)}
    transpose = tilelang.parse(W.transpose(64, 64).tir)
    (info,) = leaf_blocks(transpose["transpose"])
    assert plan_alone(info, AVX512).transpose_tile == 64  # 256 bytes: the whole row
    splits = set()
    for seed in range(12):
        sch = apply_space(transpose, RulesSpace(AVX512), seed)
        loops = [lp.extent.value for lp in _loops(sch.mod["transpose"].body)]
        splits.add(tuple(loops))
    assert (4, 64, 16) in splits  # the rules' tile: a vector of columns by the run
    assert len(splits) >= 3  # other tiles, or none


def _loops(stmt):
    from tilelang.ir.functor import StmtExprVisitor

    found = []

    class Loops(StmtExprVisitor):
        def visit_for(self, node):
            found.append(node)
            self.generic_visit(node)

    Loops().visit(stmt)
    return found


@pytest.mark.parametrize("name", ["conv2d", "depthwise"])
def test_the_padding_is_computed_at_a_sampled_location(name):
    mod, func_name, make_args, reference = _case(name)
    space = RulesSpace(AVX512)
    locations = set()
    for seed in range(10):
        sch = apply_space(mod, space, seed)
        (location,) = [d for k, d in _decisions(sch) if k == "SampleComputeLocation"]
        locations.add(location)
        kinds = [i.kind.name for i in sch.trace.insts]
        # a loop (>= 0) or inline (-2) moves the padding; root (-1) leaves it
        assert ("ComputeAt" in kinds) == (location != -1)
        if location >= 0:
            # the padding block now sits in the convolution's loop nest
            tree = Tree(sch.mod[func_name])
            pad = tree.loops_above(find_block(tree, "pad", "test"))
            (reader,) = get_consumers(sch.mod[func_name], "pad")
            consumer = tree.loops_above(find_block(tree, reader, "test"))
            assert pad and pad[0] is consumer[0]
            _check_numbers(mod, func_name, replay(mod, sch.trace), make_args, reference, seed)
    assert any(loc >= 0 for loc in locations)
    assert len(locations) >= 3


def test_forced_decisions_rebuild_the_candidate_and_a_mutation_keeps_the_others():
    mod, *_ = _case("conv2d")
    space = RulesSpace(AVX512)
    parent = apply_space(mod, space, seed=5)
    forced = decisions_of(parent.trace)
    again = apply_space(mod, space, seed=99, forced=forced)
    assert_structural_equal(again.mod, parent.mod)
    assert decisions_of(again.trace) == forced
    for seed in range(4):
        child = mutate(mod, space, parent.trace, random.Random(seed))
        after = decisions_of(child.trace)
        assert len(after) == len(forced)
        assert sum(a != b for a, b in zip(forced, after)) <= 1


def test_tuning_an_elementwise_function_searches_the_rules_space(tmp_path):
    mod, func_name, make_args, reference = _case("scale")
    db = tune_tir(mod, "llvm", space="rules", max_trials=4, work_dir=tmp_path,
                  num_trials_per_iter=2, repeat=1, min_repeat_ms=0.0, progress=False,
                  cost_model=None)  # fmt: skip
    records = db.records(mod, "llvm")
    assert len(records) == 4
    assert_structural_equal(replay(mod, records[0].as_trace()).mod, default_schedule(mod).mod)
    assert len({str(r.as_trace()) for r in records}) == 4  # not the default four times
    _check_numbers(mod, func_name, db.query_schedule(mod, "llvm"), make_args, reference, 2)


def test_the_write_back_of_a_tiled_reduction_moves_out_within_the_parallel_loop():
    from tilelang.schedule.rules.tiling import plan_tiling
    from tilelang.tune.space_rules import write_back_depths

    small = W.matmul(64, 64, 64)
    mod = tilelang.parse(small.tir)
    (info,) = leaf_blocks(mod["matmul"])
    plan = plan_tiling(info, AVX512)
    assert plan.write_back_depth == 0  # the rules: under the innermost outer loop
    # 64 x 64 x 64 is too little work for threads: any depth whose tile fits
    assert write_back_depths(info, plan, AVX512) == [0, 1]
    large = tilelang.parse(W.matmul(256, 256, 256).tir)
    (big,) = leaf_blocks(large["matmul"])
    # parallel (32 x 8 outer tiles, the first parallel): out to the parallel loop, no
    # further, so each thread writes back its own tile
    assert write_back_depths(big, plan_tiling(big, AVX512), AVX512) == [0, 1]
    checked = 0
    for seed in range(6):
        sch = apply_space(large, RulesSpace(AVX512), seed)
        if "CacheWrite" not in [i.kind.name for i in sch.trace.insts]:
            continue  # the L1-blocked plan accumulates in the output itself
        tree = Tree(sch.mod["matmul"])
        above = tree.loops_above(find_block(tree, "C_local", "test"))
        assert above[0].kind is S.ForKind.PARALLEL
        checked += 1
    assert checked
    depths = set()
    for seed in range(10):
        sch = apply_space(mod, RulesSpace(AVX512), seed)
        tree = Tree(sch.mod["matmul"])
        depths.add(len(tree.loops_above(find_block(tree, "C_local", "test"))))
        _check_numbers(
            mod, "matmul", replay(mod, sch.trace), small.arguments, small.reference, seed
        )
    assert len(depths) >= 2  # written back under different loops


BATCH_SOFTMAX = """
@T.prim_func
def bsoftmax(A: T.Buffer((4, 8, 64), "float32"), B: T.Buffer((4, 8, 64), "float32")):
    T.func_attr({"global_symbol": "bsoftmax", "tir.noalias": True})
    mx = T.alloc_buffer((4, 8), "float32")
    e = T.alloc_buffer((4, 8, 64), "float32")
    sm = T.alloc_buffer((4, 8), "float32")
    for b, i, k in T.grid(4, 8, 64):
        with T.block("maxelem"):
            vb, vi, vk = T.axis.remap("SSR", [b, i, k])
            with T.init():
                mx[vb, vi] = T.float32(-3.4028234663852886e38)
            mx[vb, vi] = T.max(mx[vb, vi], A[vb, vi, vk])
    for b, i, k in T.grid(4, 8, 64):
        with T.block("exp"):
            vb, vi, vk = T.axis.remap("SSS", [b, i, k])
            e[vb, vi, vk] = T.exp(A[vb, vi, vk] - mx[vb, vi])
    for b, i, k in T.grid(4, 8, 64):
        with T.block("expsum"):
            vb, vi, vk = T.axis.remap("SSR", [b, i, k])
            with T.init():
                sm[vb, vi] = T.float32(0)
            sm[vb, vi] = sm[vb, vi] + e[vb, vi, vk]
    for b, i, k in T.grid(4, 8, 64):
        with T.block("norm"):
            vb, vi, vk = T.axis.remap("SSS", [b, i, k])
            B[vb, vi, vk] = e[vb, vi, vk] / sm[vb, vi]
"""


def _softmax_reference(a):
    e = np.exp(a - a.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def test_a_row_fusion_draws_its_row_loop_and_its_vector_partial_results():
    mod = tilelang.parse(BATCH_SOFTMAX)
    first = apply_space(mod, RulesSpace(AVX512), seed=0, rest=0)
    assert_structural_equal(first.mod, default_schedule(mod, AVX512).mod)
    shapes = set()
    for seed in range(10):
        sch = apply_space(mod, RulesSpace(AVX512), seed)
        decisions = [d for k, d in _decisions(sch) if k == "SampleCategorical"]
        assert len(decisions) == 2  # the row loop (i, or b further out) and rfactor or not
        replayed = replay(mod, sch.trace)
        assert_structural_equal(replayed.mod, sch.mod)
        tree = Tree(sch.mod["bsoftmax"])
        exp = tree.loops_above(find_block(tree, "exp", "test"))
        norm = tree.loops_above(find_block(tree, "norm", "test"))
        shared = sum(1 for x, y in zip(exp, norm) if x is y)  # the row loop's depth + 1
        rfactor = "RFactor" in [i.kind.name for i in sch.trace.insts]
        shapes.add((tuple(decisions), shared, rfactor))
        rng = np.random.default_rng(seed)
        a = rng.standard_normal((4, 8, 64)).astype("float32")
        out = np.zeros_like(a)
        tilelang.build(replayed.mod, "llvm")["bsoftmax"](a, out)
        np.testing.assert_allclose(out, _softmax_reference(a), rtol=1e-5, atol=1e-6)
    # the producers computed under i (the rules: b and i shared with the normalising
    # block) or under b further out; vector partial results or not (under b the
    # rfactor is refused and the plain fusion is what runs)
    assert {s[0][0] for s in shapes} == {0, 1} and {s[0][1] for s in shapes} == {0, 1}
    assert {(s[0][0], s[1]) for s in shapes} == {(0, 2), (1, 1)}
    assert {(s[0], s[2]) for s in shapes} >= {((0, 0), True), ((0, 1), False)}

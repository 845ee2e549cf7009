"""Search spaces seeded from the default rules (tilelang/tune/space_rules.py): the
first-choice candidate is the default build, sampled candidates compute what the
program computes, and the tuner measures the default first."""

from __future__ import annotations

import numpy as np
import pytest

import tilelang
from tilelang.ir import assert_structural_equal
from tilelang.ir.structural import structural_equal
from tilelang.schedule.rules import Machine, default_schedule
from tilelang.testing import default_workloads as W
from tilelang.tune import replay, tune_tir
from tilelang.tune.space import apply_space, decisions_of, mutate
from tilelang.tune.space_rules import RulesOrGenericSpace, RulesSpace

AVX512 = Machine(512, 32)  # fixed, so the decisions do not depend on the host
WORKLOADS = [
    W.matmul(64, 64, 64),
    W.matmul(48, 64, 32, relu=True),
    W.batch_matmul(2, 32, 32, 32),
    W.conv2d(8, 16, 10, 10),
]
IDS = [w.name for w in WORKLOADS]


@pytest.mark.parametrize("workload", WORKLOADS, ids=IDS)
def test_first_choices_are_the_default_schedule(workload):
    mod = tilelang.parse(workload.tir)
    expected = default_schedule(mod, AVX512).mod
    for space in (RulesSpace(AVX512), RulesOrGenericSpace(AVX512)):
        sch = apply_space(mod, space, seed=7, rest=0)
        assert_structural_equal(sch.mod, expected)
        # every categorical draw took its first candidate; every producer stayed at
        # the root (-1), where the rules leave it
        for inst in sch.trace.insts:
            if inst.kind.has_decision:
                root = inst.kind == "sample_compute_location"
                assert sch.trace.get_decision(inst) == (-1 if root else 0)


@pytest.mark.parametrize("workload", WORKLOADS, ids=IDS)
def test_sampled_candidates_compute_the_program_and_replay(workload):
    mod = tilelang.parse(workload.tir)
    space = RulesSpace(AVX512)
    distinct = []
    for seed in range(6):
        sch = apply_space(mod, space, seed)
        assert "sample_categorical" in [inst.kind for inst in sch.trace.insts]
        assert_structural_equal(replay(mod, sch.trace).mod, sch.mod)
        if any(structural_equal(sch.mod, other) for other in distinct):
            continue
        distinct.append(sch.mod)
        args = workload.arguments(seed=seed)
        tilelang.build(sch.mod, "llvm")[workload.name](*args)
        np.testing.assert_allclose(args[-1], workload.reference(*args[:-1]), rtol=1e-4, atol=1e-4)
    assert len(distinct) >= 3  # the draws change the schedule, not just the trace


def test_mutation_keeps_the_other_plan_sizes():
    import random

    mod = tilelang.parse(WORKLOADS[0].tir)
    space = RulesSpace(AVX512)
    parent = apply_space(mod, space, seed=3)
    child = mutate(mod, space, parent.trace, random.Random(5))
    before, after = decisions_of(parent.trace), decisions_of(child.trace)
    # a draw that changes the structure (packing, k blocking) adds or drops the draws
    # it decides, here the write-back location's
    assert abs(len(before) - len(after)) <= 1
    assert sum(a != b for a, b in zip(before, after)) <= 1


def test_tuning_the_rules_space_starts_from_the_default_build(tmp_path):
    workload = W.matmul(64, 64, 64)
    mod = tilelang.parse(workload.tir)
    db = tune_tir(mod, "llvm", space="rules", max_trials=4, work_dir=tmp_path,
                  num_trials_per_iter=2, repeat=1, min_repeat_ms=0.0, progress=False,
                  cost_model=None)  # fmt: skip
    records = db.records(mod, "llvm")
    assert len(records) == 4
    assert_structural_equal(replay(mod, records[0].as_trace()).mod, default_schedule(mod).mod)
    best = db.query_best(mod, "llvm")[0]
    assert best.latency <= records[0].latency  # never worse than the default build
    args = workload.arguments(seed=1)
    tilelang.build(db.query_schedule(mod, "llvm").mod, "llvm")[workload.name](*args)
    np.testing.assert_allclose(args[-1], workload.reference(*args[:-1]), rtol=1e-4, atol=1e-4)


def test_unknown_space_name_is_a_clear_error(tmp_path):
    from tilelang.errors import ArgumentError

    with pytest.raises(ArgumentError, match="'auto', 'rules' or 'generic'"):
        tune_tir(tilelang.parse(WORKLOADS[0].tir), space="rule", work_dir=tmp_path)


@pytest.mark.parametrize("workload", WORKLOADS, ids=IDS)
def test_packing_the_vector_operand_computes_the_program(workload):
    """Every candidate that draws TilePlan.pack reads the packed operand through a
    copy computed under the vector tiles' loop (run in parallel above the row tiles')
    and computes what the program computes."""
    from tilelang.schedule.rules import tiling

    mod = tilelang.parse(workload.tir)
    plans = []
    original = tiling.apply_tiling

    def record(sch, func_name, info, plan, consumers):
        plans.append(plan)
        return original(sch, func_name, info, plan, consumers)

    packed = 0
    tiling.apply_tiling = record
    try:
        for seed in range(40):
            plans.clear()
            try:
                sch = apply_space(mod, RulesSpace(AVX512), seed)
            except tilelang.ScheduleError:
                continue
            if not any(p.pack for p in plans) or "cache_read" not in str(sch.trace):
                continue
            packed += 1
            args = workload.arguments(seed=seed)
            tilelang.build(sch.mod, "llvm")[workload.name](*args)
            want = workload.reference(*args[:-1])
            np.testing.assert_allclose(args[-1], want, rtol=1e-4, atol=1e-4)
    finally:
        tiling.apply_tiling = original
    if workload.name in ("matmul", "batch_matmul"):
        assert packed >= 1  # the space offers it where an operand ignores the rows


def test_packed_matmul_copies_b_per_vector_tile():
    mod = tilelang.parse(W.matmul(64, 64, 64).tir)
    packed = [
        sch for sch in (apply_space(mod, RulesSpace(AVX512), seed) for seed in range(40))
        if "cache_read" in str(sch.trace)
    ]  # fmt: skip
    assert packed  # about one draw in four packs here
    text = packed[0].mod.script()
    assert 'T.block("B_global")' in text
    head = text.split('T.block("B_global")')[0]
    # the copy runs inside the loop over the vector tiles (j), above the rows' loop
    # (64^3 is too little work to run in parallel)
    assert "for j_0 in range(2)" in head and "for i_0" not in head

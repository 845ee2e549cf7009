"""Screening by decisions (tilelang.tune.screen): features read off a trace's sampling
decisions, mutations that stay within the choices the space offered, ranking quality
on the recorded 256^3 matmul candidates, and the tuner scoring thousands a round."""

from __future__ import annotations

import io
import json
import math
import random
from pathlib import Path

import numpy as np
import pytest
from test_schedule_state import TWO_STAGES

import tilelang
from tilelang.errors import ScheduleError
from tilelang.testing.workloads import matmul
from tilelang.tune import tune_tir
from tilelang.tune.cost_model import CostModel, kendall_tau
from tilelang.tune.database import TuningRecord
from tilelang.tune.screen import (
    PAD,
    WIDTH,
    Screen,
    decision_features,
    decision_key,
    mutate_decisions,
    sampling_steps,
)
from tilelang.tune.space import DecisionSchedule, apply_space, decisions_of, resolve_space
from tilelang.tune.trace_json import trace_to_json

DATA = Path(__file__).parent / "data" / "tune_matmul256_llvm.jsonl"


@pytest.fixture(scope="module")
def records():
    return [TuningRecord.from_json(json.loads(line)) for line in DATA.read_text().splitlines()]


def test_decision_features_read_tilings_and_categoricals(records):
    steps = sampling_steps(records[0].trace)
    kinds = [s["kind"] for s in steps]
    assert kinds[:3] == ["sample_perfect_tile"] * 3 and kinds[3:] == ["sample_categorical"] * 2
    assert steps[0]["decision"] == [1, 8, 2, 16]
    vector = decision_features(steps)
    assert vector.shape == (WIDTH,)
    # the first tiling: log2 of each factor, then of the inner 1, 2, 3 factors' product
    assert list(vector[:7]) == [0.0, 3.0, 1.0, 4.0, 4.0, 5.0, 8.0]
    assert vector[-1] == PAD
    # another decision list at the same steps: the first factors change, the rest not
    other = [[2, 4, 2, 16]] + [s["decision"] for s in steps[1:]]
    changed = decision_features(steps, other)
    assert list(changed[:4]) == [1.0, 2.0, 1.0, 4.0] and list(changed[7:]) == list(vector[7:])


def test_mutations_stay_within_the_choices_of_each_step(records):
    rng = random.Random(0)
    steps = sampling_steps(records[1].trace)
    decisions = [s["decision"] for s in steps]
    for _ in range(200):
        child = mutate_decisions(steps, decisions, rng)
        assert child is not None and child != decisions and len(child) == len(decisions)
        for step, old, new in zip(steps, decisions, child):
            if step["kind"] == "sample_perfect_tile":
                assert len(new) == len(old) and math.prod(new) == math.prod(old)
                if new != old:
                    assert new[-1] <= step["args"]["max_innermost_factor"]
            else:
                assert 0 <= new < len(step["args"]["candidates"])
    location = [{"kind": "sample_compute_location", "args": {}, "decision": 2}]
    assert mutate_decisions(location, [2], rng) is None  # its choices depend on the IR


def test_mutants_are_candidates_of_the_space():
    """A mutant's decisions, forced on the space, give a schedule whose trace takes
    exactly those decisions (the tilings and categoricals were ones it offered),
    unless the space refuses the draw."""
    mod = matmul(128)
    space = resolve_space("generic", "llvm")
    parent = None
    for seed in range(1, 50):  # the first draw the space accepts
        try:
            parent = apply_space(mod, space, seed)
            break
        except ScheduleError:
            continue
    steps = sampling_steps(trace_to_json(parent.trace))
    rng = random.Random(1)
    applied = same = 0
    for _ in range(20):
        child = mutate_decisions(steps, [s["decision"] for s in steps], rng)
        try:
            built = apply_space(mod, space, 7, child)
        except ScheduleError:
            continue  # the space refuses some draws (a too narrow vector): so does the tuner
        applied += 1
        same += decisions_of(built.trace) == child
    assert applied >= 10 and same >= applied - 2, (applied, same)


@pytest.mark.parametrize("backend", ["lightgbm", "numpy"])
def test_screen_ranks_held_back_candidates_better_than_chance(records, backend):
    """Trained on 60 recorded candidates' decisions, the screen orders the other
    valid ones (as the IR model's test does with lowered-IR features)."""
    if backend == "lightgbm":
        pytest.importorskip("lightgbm")
    valid = [r for r in records if math.isfinite(r.latency)]
    order = np.random.default_rng(0).permutation(len(valid))
    train, test = order[:60], order[60:]
    screen = Screen(CostModel(backend, seed=0))
    screen.update([valid[i].trace for i in train], [valid[i].latency for i in train])
    scores = screen.model.predict([decision_features(sampling_steps(valid[i].trace)) for i in test])
    tau = kendall_tau(scores, [-valid[i].latency for i in test])
    assert tau > (0.3 if backend == "lightgbm" else 0.15), tau


def test_propose_scores_a_population_and_leaves_out_seen(records):
    screen = Screen(CostModel("numpy"))
    screen.update([r.trace for r in records], [r.latency for r in records])
    parents = [r.trace for r in records[:8]]
    seen = {decision_key([s["decision"] for s in sampling_steps(r.trace)]) for r in records}
    proposals, scored = screen.propose(parents, 50, 2048, seen, random.Random(0))
    assert scored >= 1500 and len(proposals) == 50
    keys = [decision_key(d) for _, d in proposals]
    assert len(set(keys)) == 50 and not set(keys) & seen
    scores = screen.model.predict([decision_features(s, d) for s, d in proposals])
    assert list(scores) == sorted(scores, reverse=True)  # best-scored first


def test_guided_rounds_score_thousands_and_say_so(tmp_path):
    out = io.StringIO()
    db = tune_tir(matmul(64), "llvm", space="generic", max_trials=24, num_trials_per_iter=8,
                  work_dir=tmp_path, cost_model="numpy", pool_factor=2, population=1024,
                  repeat=1, min_repeat_ms=0.0, stream=out, seed=2)  # fmt: skip
    text = out.getvalue()
    scored = [int(line.split("scored ")[1].split("/")[0]) for line in text.splitlines()
              if "scored " in line and line.startswith("[")]  # fmt: skip
    assert scored and min(scored) >= 1000, text
    assert text.splitlines()[-2].split("|")[-1].strip().isdigit()  # the table's column
    assert len([r for r in db.records(matmul(64), "llvm") if not r.remeasured]) == 24


def test_without_the_screen_a_round_scores_its_pool(tmp_path):
    """population=0: the pool is pool_factor x the batch, drawn from the space and
    ranked by the IR model alone, and the report says so."""
    out = io.StringIO()
    tune_tir(matmul(64), "llvm", space="generic", max_trials=16, num_trials_per_iter=8,
             work_dir=tmp_path, cost_model="numpy", pool_factor=2, population=0,
             repeat=1, min_repeat_ms=0.0, stream=out, seed=2)  # fmt: skip
    assert "scored 16/round" in out.getvalue()


def test_malformed_stored_decisions_do_not_stop_the_screen():
    """A record is data read back from disk: a categorical index out of range or a
    tiling that is not a list of ints is scored as missing and never mutated."""
    steps = [
        {"kind": "sample_categorical", "args": {"candidates": [4, 8]}, "decision": 7},
        {"kind": "sample_perfect_tile", "args": {"n": 2}, "decision": "x"},
        {"kind": "sample_perfect_tile", "args": {"n": 2}, "decision": [1, "y"]},
    ]
    vector = decision_features(steps)
    assert list(vector[:6]) == [7.0, PAD, 0.0, 0.0, 0.0, PAD]  # "y" counts as a factor 1
    assert mutate_decisions(steps[1:], [s["decision"] for s in steps[1:]], random.Random(0)) is None


def test_a_forced_decision_of_another_kind_is_drawn_afresh():
    """A screened decision list is positional: after a draw that changes the space's
    structure, a tiling may land on a compute-location draw. The space redraws it
    instead of failing (a whole-model tuning run once stopped with a TypeError)."""
    sch = DecisionSchedule(tilelang.parse(TWO_STAGES), seed=0, forced=[[4, 4], 7])
    loop = sch.sample_compute_location(sch.get_block("B"))
    sch.sample_categorical([1, 2], [0.5, 0.5])
    location, category = [i for i in sch.trace.insts if i.kind.has_decision]
    assert sch.trace.get_decision(location) in {-2, -1, 0, 1}
    assert sch.trace.get_decision(category) in {0, 1}
    sch.compute_at(sch.get_block("B"), loop)

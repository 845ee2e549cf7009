"""Timing candidates by CPU time (``clock="cpu"``) for one-thread targets."""

from __future__ import annotations

import itertools

import pytest

import tilelang
from tilelang.runtime.module import TimeEvaluator
from tilelang.testing.workloads import matmul
from tilelang.tune import tune_tir
from tilelang.tune.runner import Measurer


def test_the_time_evaluator_reads_the_clock_it_is_given():
    lib = tilelang.build(matmul(16), "llvm -num-cores=1")
    ticks = itertools.count()  # each reading one second later than the last
    timer = TimeEvaluator(lib.get_function("main"), 4, 3, 0.0, clock=lambda: next(ticks))
    arrays = Measurer(matmul(16), "llvm -num-cores=1").inputs
    assert timer(*arrays).results == (0.25, 0.25, 0.25)  # 1 s over 4 calls, 3 times


def test_cpu_clock_tunes_a_one_thread_target(tmp_path):
    target = "llvm -num-cores=1"
    db = tune_tir(matmul(32), target, max_trials=3, num_trials_per_iter=3, cost_model=None,
                  repeat=2, min_repeat_ms=0.0, work_dir=tmp_path, progress=False,
                  clock="cpu", confirm=1)  # fmt: skip
    records = db.records(matmul(32), str(tilelang.Target(target)))
    assert len([r for r in records if not r.remeasured]) == 3
    assert all(r.valid and len(r.run_secs) >= 2 and min(r.run_secs) > 0 for r in records)


@pytest.mark.parametrize("target", ["llvm", "llvm -num-cores=2", "python"])
def test_cpu_clock_is_refused_where_cpu_time_is_not_latency(target):
    with pytest.raises(tilelang.ArgumentError, match="one-thread CPU target"):
        tune_tir(matmul(16), target, max_trials=1, clock="cpu", progress=False)


def test_an_unknown_clock_is_refused():
    with pytest.raises(tilelang.ArgumentError, match="clock must be"):
        tune_tir(matmul(16), "llvm", max_trials=1, clock="gpu", progress=False)

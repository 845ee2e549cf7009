"""tilelang.tune: SEED §3 search, the generic space, the database, reuse, rejection."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import types
import warnings

import numpy as np
import pytest

import tilelang
from tilelang.errors import ArgumentError
from tilelang.ir import expr as E
from tilelang.ir.functor import StmtExprMutator
from tilelang.ir.structural import structural_equal
from tilelang.schedule import Schedule
from tilelang.testing.workloads import matmul
from tilelang.tune import (
    JSONDatabase,
    apply_space,
    compile_tir,
    generic_space,
    mutate,
    replay,
    stochastic_schedule_mm,
    trace_from_json,
    trace_to_json,
    tune_tir,
    workload_hash,
)
from tilelang.tune import runner as tune_runner
from tilelang.tune.progress import Progress, best_so_far, save_plot, summary_table
from tilelang.tune.space import decisions_of

# quick measurements: these tests check behaviour, not speed
FAST = {"repeat": 2, "min_repeat_ms": 1.0, "progress": False}


def run_matmul(mod, n, target="llvm"):
    rng = np.random.default_rng(1)
    a, b = (rng.uniform(-1, 1, (n, n)).astype("float32") for _ in range(2))
    c = np.zeros((n, n), "float32")
    tilelang.build(mod, target)["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


def replay_printed(mod, trace_text: str) -> Schedule:
    """Executes ``print(trace)`` output on a fresh schedule, as a user would."""
    namespace = {"tir": types.SimpleNamespace(Schedule=Schedule)}
    exec(trace_text, namespace)
    sch = Schedule(mod)
    namespace["apply_trace"](sch)
    return sch


# ----------------------------------------------------------------- SEED §3


def test_stochastic_schedule_random_search_128(tmp_path):
    mod = matmul(128)
    db = tune_tir(mod, "llvm", space=stochastic_schedule_mm, max_trials=8, seed=3,
                  work_dir=tmp_path, **FAST)  # fmt: skip
    records = db.records(mod, "llvm")
    # the space has 5 points (j = 128 split with an innermost factor <= 16): each is
    # measured once, then the search stops instead of measuring duplicates
    assert len(records) == 5 and all(r.valid for r in records)
    assert sorted(list(r.as_trace().decisions.values())[0][1] for r in records) == [1, 2, 4, 8, 16]
    best = db.query_best(mod, "llvm")[0]
    assert best.latency == min(r.latency for r in records)
    printed = str(best.as_trace())
    assert "sch.sample_perfect_tile(loop=l2, n=2, max_innermost_factor=16, decision=[" in printed
    # the printed trace of the best candidate replays to the same IR
    scheduled = compile_tir(db, mod, "llvm")
    assert structural_equal(replay_printed(mod, printed).mod, scheduled)
    run_matmul(scheduled, 128)


def test_generic_space_128_matches_numpy_and_replays(tmp_path):
    mod = matmul(128)
    db = tune_tir(mod, "llvm", space="generic", max_trials=8, seed=0, work_dir=tmp_path,
                  num_trials_per_iter=4, **FAST)  # fmt: skip
    best = db.query_best(mod, "llvm")[0]
    printed = str(best.as_trace())
    for step in ("cache_write", "sample_perfect_tile", "parallel", "vectorize",
                 "decompose_reduction"):  # fmt: skip
        assert f"sch.{step}(" in printed
    scheduled = compile_tir(db, mod, "llvm")
    assert structural_equal(replay_printed(mod, printed).mod, scheduled)
    assert 'scope="local"' in scheduled.script()
    run_matmul(scheduled, 128)


def test_generic_space_mm_relu_fuses_the_consumer():
    mod = tilelang.parse_file("samples/mm_relu.tir")
    for seed in range(40):
        try:
            sch = apply_space(mod, generic_space, seed)
            break
        except tilelang.ScheduleError:
            continue
    text = sch.mod.script()
    # the ReLU is computed under the tile, reading the local accumulator directly
    assert "T.max(Y_local[" in text and 'with T.block("Y_local")' not in text
    rng = np.random.default_rng(0)
    a, b = (rng.uniform(-1, 1, (128, 128)).astype("float32") for _ in range(2))
    c = np.zeros((128, 128), "float32")
    tilelang.build(sch.mod, "llvm")["mm_relu"](a, b, c)
    np.testing.assert_allclose(c, np.maximum(a @ b, 0), rtol=1e-4, atol=1e-4)


def test_mutation_redraws_exactly_one_decision():
    import random

    mod = matmul(64)
    parent = apply_space(mod, stochastic_schedule_mm, 5)
    rng = random.Random(0)
    for _ in range(5):
        child = mutate(mod, stochastic_schedule_mm, parent.trace, rng)
        assert len(decisions_of(child.trace)) == len(decisions_of(parent.trace)) == 1
    auto = None
    for seed in range(40):
        try:
            auto = apply_space(mod, generic_space, seed)
            break
        except tilelang.ScheduleError:
            continue
    before = decisions_of(auto.trace)
    for _ in range(10):
        try:
            child = mutate(mod, generic_space, auto.trace, rng)
        except tilelang.ScheduleError:
            continue
        after = decisions_of(child.trace)
        assert len(after) == len(before)
        assert sum(x != y for x, y in zip(before, after)) <= 1


# ----------------------------------------------------------------- reuse and rejection


def test_second_run_reuses_the_database_without_measuring(tmp_path, monkeypatch):
    mod = matmul(64)
    db = tune_tir(mod, "llvm", space=stochastic_schedule_mm, max_trials=3, work_dir=tmp_path,
                  **FAST)  # fmt: skip
    first = compile_tir(db, mod, "llvm")
    lines = (tmp_path / "database.jsonl").read_text().splitlines()
    assert len(lines) == 3

    def no_measuring(*args, **kwargs):
        raise AssertionError("the second run measured a candidate")

    monkeypatch.setattr(tune_runner.Measurer, "__init__", no_measuring)
    monkeypatch.setattr(tune_runner.Measurer, "measure", no_measuring)
    again = tune_tir(matmul(64), "llvm", space=stochastic_schedule_mm, max_trials=3,
                     work_dir=tmp_path, **FAST)  # fmt: skip
    assert (tmp_path / "database.jsonl").read_text().splitlines() == lines
    assert structural_equal(compile_tir(again, matmul(64), "llvm"), first)


class _AddInsteadOfMul(StmtExprMutator):
    def visit_mul(self, op):
        return E.Add(self.visit(op.a), self.visit(op.b))


def wrong_space(sch):
    """A user "schedule" that rewrites the IR to compute something else."""
    stochastic_schedule_mm(sch)
    func = sch.mod["main"]
    return Schedule(func.with_body(_AddInsteadOfMul()(func.body)))


def test_miscomputing_candidates_are_rejected(tmp_path):
    mod = matmul(64)
    db = tune_tir(mod, "llvm", space=wrong_space, max_trials=2, work_dir=tmp_path, **FAST)
    records = db.records(mod, "llvm")
    assert records and all(not r.valid and "wrong result" in r.error for r in records)
    assert db.query_best(mod, "llvm") == []
    with pytest.raises(ArgumentError, match="no valid record"):
        compile_tir(db, mod, "llvm")


def test_bad_arguments_raise_clear_errors(tmp_path):
    with pytest.raises(ArgumentError, match="space must be"):
        tune_tir(matmul(16), space="nonsense", work_dir=tmp_path)
    with pytest.raises(ArgumentError, match="IRModule or a PrimFunc"):
        tune_tir("not a module", work_dir=tmp_path)


# ----------------------------------------------------------------- database


def test_database_skips_corrupt_lines_and_keys_by_target(tmp_path):
    mod = matmul(16)
    sch = apply_space(mod, stochastic_schedule_mm, 1)
    db = JSONDatabase(tmp_path)
    from tilelang.tune.database import make_record

    db.commit(make_record(workload_hash(mod), "llvm", sch.trace, (2e-3, 1e-3, 3e-3)))
    db.commit(make_record(workload_hash(mod), "c", sch.trace, (1e-4,)))
    with open(tmp_path / "database.jsonl", "a") as f:
        f.write('{"workload": "torn", "trace": [')  # a crash in the middle of a line
    with pytest.warns(UserWarning, match="corrupt tuning record"):
        again = JSONDatabase(tmp_path)
    assert len(again) == 2
    (best,) = again.query_best(mod, "llvm")
    assert best.latency == 2e-3 and best.target == "llvm"
    # a record appended after the torn line is a line of its own and reads back
    again.commit(make_record(workload_hash(mod), "llvm", sch.trace, (5e-4,)))
    with pytest.warns(UserWarning):
        third = JSONDatabase(tmp_path)
    assert third.query_best(mod, "llvm")[0].latency == 5e-4
    assert structural_equal(third.query_schedule(mod, "llvm").mod, sch.mod)


def test_trace_json_round_trip_replays_the_same_ir():
    mod = tilelang.parse_file("samples/mm_relu.tir")
    for seed in range(40):
        try:
            sch = apply_space(mod, generic_space, seed)
            break
        except tilelang.ScheduleError:
            continue
    data = json.loads(json.dumps(trace_to_json(sch.trace)))
    trace = trace_from_json(data)
    assert str(trace) == str(sch.trace)
    assert structural_equal(replay(mod, trace).mod, sch.mod)
    with pytest.raises(ArgumentError, match="malformed"):
        trace_from_json([{"kind": "split"}])


def test_workload_hash_is_structural_and_stable_across_processes():
    text = open("samples/mm_relu.tir").read()
    key = workload_hash(tilelang.parse(text))
    assert workload_hash(tilelang.parse(text.replace("vi", "row"))) == key  # alpha-renaming
    assert workload_hash(tilelang.parse(text.replace("128", "64"))) != key
    code = (
        "import tilelang; from tilelang.tune import workload_hash; "
        "print(workload_hash(tilelang.parse_file('samples/mm_relu.tir')))"
    )
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert other.stdout.strip() == key


# ----------------------------------------------------------------- feedback


def test_progress_plain_text_and_summary_table():
    stream = io.StringIO()
    bar = Progress(4, 2e9, stream)
    bar.update(1, float("inf"))
    bar.update(2, 0.5)
    lines = stream.getvalue().splitlines()
    assert lines[0].endswith("1/4 trials  no valid candidate yet")
    assert lines[1] == "[############------------] 2/4 trials  best 500.0000 ms  4.00 GFLOP/s"
    table = summary_table("main", 2e9, 0.5, 4)
    assert "Speed (GFLOPS)" in table and "4.0000" in table and "500000.0000" in table
    assert best_so_far([3.0, float("inf"), 1.0, 2.0]) == [3.0, 3.0, 1.0, 1.0]


def test_tune_prints_progress_and_table(tmp_path):
    stream = io.StringIO()
    mod = matmul(32)
    tune_tir(mod, space=stochastic_schedule_mm, max_trials=2, work_dir=tmp_path, repeat=1,
             min_repeat_ms=0.0, stream=stream)  # fmt: skip
    out = stream.getvalue()
    assert "2/2 trials  best" in out and "GFLOP/s" in out
    assert "| main | 65536 |" in out  # 2 * 32^3 FLOP


def test_plot_saved_or_skipped(tmp_path):
    path = tmp_path / "curve.png"
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        with pytest.warns(UserWarning, match="matplotlib"):
            assert save_plot(path, [1e-3, 5e-4], 1e9) is False
        assert not path.exists()
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert save_plot(path, [1e-3, 5e-4], 1e9) is True
        assert path.read_bytes()[:4] == b"\x89PNG"


# ----------------------------------------------------------------- executors


def test_builds_on_any_executor(tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    mod = matmul(32)
    with ThreadPoolExecutor(1) as pool:
        db = tune_tir(mod, space=stochastic_schedule_mm, max_trials=2, work_dir=tmp_path,
                      executor=pool, **FAST)  # fmt: skip
    assert len(db.query_best(mod, "llvm")) == 1


def test_builds_on_a_local_dask_cluster(tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    mod = matmul(32)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:  # fmt: skip
        with distributed.Client(cluster) as client:
            db = tune_tir(mod, space=stochastic_schedule_mm, max_trials=2, work_dir=tmp_path,
                          executor=client.get_executor(), **FAST)  # fmt: skip
    assert len(db.query_best(mod, "llvm")) == 1


def test_command_line_tuning_options(tmp_path):
    import argparse

    from tilelang.tune.cli import add_arguments, tune_module

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args(["--tune", "2", "--database", str(tmp_path)])
    scheduled = tune_module(matmul(32), args)
    run_matmul(scheduled, 32)
    assert (tmp_path / "database.jsonl").read_text().count("\n") == 2
    with pytest.raises(ArgumentError, match="positive number"):
        tune_module(matmul(32), parser.parse_args(["--tune", "0"]))

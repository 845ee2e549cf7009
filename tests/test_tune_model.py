"""Whole-model tuning: task extraction with deduplication, the task schedulers'
allocations, tune_relax end to end (NumPy), per-task reporting, and the Dask path."""

from __future__ import annotations

import io
import math
from pathlib import Path

import numpy as np
import pytest

import tilelang
from tilelang import meta_schedule as ms
from tilelang import relax
from tilelang.ir import assert_structural_equal
from tilelang.schedule.rules import default_schedule
from tilelang.tune import replay
from tilelang.tune.report import task_table
from tilelang.tune.task_scheduler import GradientScheduler, RoundRobinScheduler, allocate
from tilelang.tune.tasks import extract_tasks
from tilelang.tune.tune_model import apply_best, compile_relax, tune_relax

MODEL = Path(__file__).resolve().parent / "data" / "tune_model_mlp.tir"
FAST = {"repeat": 1, "min_repeat_ms": 0.0, "cost_model": None}


def _model():
    return tilelang.parse(MODEL.read_text())


def _inputs(seed=0):
    rng = np.random.default_rng(seed)
    shapes = [(4, 32), (32, 32), (32, 32), (8, 32)]
    return [rng.standard_normal(s).astype("float32") for s in shapes]


def _expected(x, w0, w1, w2):
    h = np.maximum(x @ w0.T, 0)
    h = np.maximum(h @ w1.T, 0)
    return h @ w2.T


def _run(ex, args):
    vm = relax.VirtualMachine(ex, tilelang.cpu())
    return vm["main"](*args).numpy()


# ----------------------------------------------------------------- extraction


def test_structurally_equal_functions_are_one_task():
    tasks = extract_tasks(_model())
    # the ReLU after layer_a and after layer_b is fused into it, as relax.build does:
    # the tasks are the functions the build runs. layer_a + relu and layer_b + relu
    # differ only in names: one task called twice
    assert [(t.name, t.func_names, t.weight) for t in tasks] == [
        ("fused_layer_a_relu", ("fused_layer_a_relu", "fused_layer_b_relu"), 2),
        ("layer_c", ("layer_c",), 1),
    ]
    assert len({t.workload for t in tasks}) == 2
    fused = tasks[0].mod["main"]
    assert len(fused.params) == 3  # x, w -> out: the intermediate is internal
    assert all(list(t.mod.functions) == ["main"] for t in tasks)


def test_different_shapes_or_block_names_are_different_tasks():
    text = MODEL.read_text()
    # another block name: traces name blocks, so the workloads must differ
    renamed = text.replace(
        'with T.block("Z"):\n                va', 'with T.block("O"):\n                va'
    )
    assert renamed != text
    assert [t.weight for t in extract_tasks(tilelang.parse(renamed))] == [1, 1, 1]


# ----------------------------------------------------------------- schedulers


class FakeTask:
    """A task whose best latency after ``n`` trials is ``curve(n)``; its space holds
    ``size`` candidates."""

    def __init__(self, weight, curve, size=10**9):
        self.weight, self.curve, self.size = weight, curve, size
        self.trials, self.exhausted = 0, False

    def best_sec(self):
        return self.curve(self.trials) if self.trials else math.inf


def _allocate(tasks, budget, batch, scheduler, cap=None):
    picks = []

    def step(task, count):
        picks.append(tasks.index(task))
        n = min(count, task.size - task.trials)
        task.trials += n
        task.exhausted = task.trials >= task.size
        return n

    allocate(tasks, budget, batch, scheduler, step, cap)
    return picks


def decaying(start, floor=0.0):
    return lambda n: floor + start / n


def test_every_task_gets_a_warm_up_batch_first():
    tasks = [FakeTask(1, decaying(1.0)) for _ in range(3)]
    picks = _allocate(tasks, 30, 2, GradientScheduler())
    assert picks[:3] == [0, 1, 2]
    assert sum(t.trials for t in tasks) == 30


def test_gradient_gives_more_trials_to_the_heavier_task():
    light, heavy = FakeTask(1, decaying(1e-3)), FakeTask(4, decaying(1e-3))
    _allocate([light, heavy], 40, 2, GradientScheduler())
    # with best ~ 1/trials the gains even out at trials ~ sqrt(weight): about 2x
    assert heavy.trials >= 1.5 * light.trials
    assert light.trials >= 2  # its warm-up batch


def test_gradient_favours_the_slow_task_over_the_fast_one():
    slow, fast = FakeTask(1, decaying(1e-2)), FakeTask(1, decaying(1e-4))
    _allocate([fast, slow], 40, 2, GradientScheduler())
    assert slow.trials >= 30 and fast.trials >= 2


def test_expected_gain_counts_recent_improvement():
    scheduler = GradientScheduler(alpha=0.5, window=2)
    task = FakeTask(1, decaying(1.0))
    improving = [4.0, 3.0, 2.0]
    stalled = [2.0, 2.0, 2.0]
    assert scheduler.expected_gain(task, improving) == pytest.approx(0.5 * 1.0 + 0.5 * 2 / 3)
    assert scheduler.expected_gain(task, stalled) == pytest.approx(0.5 * 2 / 3)
    assert scheduler.expected_gain(task, [math.inf]) == 0.0  # no valid candidate: last


def test_round_robin_splits_evenly_and_budget_caps_and_exhaustion_hold():
    tasks = [FakeTask(1, decaying(1.0)), FakeTask(9, decaying(1.0)), FakeTask(1, decaying(5.0))]
    _allocate(tasks, 12, 2, RoundRobinScheduler())
    assert [t.trials for t in tasks] == [4, 4, 4]
    tasks = [FakeTask(1, decaying(1.0), size=3), FakeTask(1, decaying(1.0))]
    picks = _allocate(tasks, 20, 2, GradientScheduler(), cap=10)
    assert [t.trials for t in tasks] == [3, 10]  # the small space ran out, the cap held
    assert picks.count(0) <= 3


# ----------------------------------------------------------------- end to end


def test_tune_relax_shares_the_budget_and_builds_the_tuned_model(tmp_path):
    mod = _model()
    stream = io.StringIO()
    plot = tmp_path / "tasks.png"
    result = tune_relax(mod, None, "llvm", tmp_path, 7, num_trials_per_iter=2,
                        stream=stream, plot=plot, **FAST)  # fmt: skip
    trials = {t["name"]: t["trials"] for t in result.tasks}
    assert sum(trials.values()) == 7 == len(result.database)
    assert min(trials.values()) >= 2  # every task had its warm-up batch
    # each task's first candidate is the default build's schedule
    for task in extract_tasks(mod):
        first = result.database.records(task.mod, "llvm")[0]
        assert_structural_equal(
            replay(task.mod, first.as_trace()).mod, default_schedule(task.mod).mod
        )
    summary = {t["name"]: t for t in result.tasks}
    assert summary["fused_layer_a_relu"]["weight"] == 2
    assert summary["fused_layer_a_relu"]["func_names"] == (
        "fused_layer_a_relu",
        "fused_layer_b_relu",
    )
    assert result.latency == pytest.approx(sum(t["weight"] * t["best_sec"] for t in result.tasks))
    out = stream.getvalue()
    assert "Total trials: 7" in out and "Weighted Latency" in out and "task layer_c" in out
    assert plot.read_bytes()[:4] == b"\x89PNG"  # one best-so-far curve per task
    # both functions of the deduplicated task get its best schedule
    tuned = apply_best(result.database, mod, "llvm")
    best = result.database.query_schedule(extract_tasks(mod)[0].mod, "llvm").mod["main"]
    for name in ("fused_layer_a_relu", "fused_layer_b_relu"):
        assert_structural_equal(tuned[name].with_attr("global_symbol", "main"), best)
    args = _inputs()
    np.testing.assert_allclose(_run(compile_relax(result.database, mod, "llvm"), args),
                               _expected(*args), rtol=1e-4, atol=1e-4)  # fmt: skip
    # a second run with the same budget measures nothing
    again = tune_relax(mod, None, "llvm", tmp_path, 7, progress=False, **FAST)
    assert len(again.database) == 7


def test_tune_relax_takes_tvms_argument_order_and_op_names(tmp_path):
    mod = _model()
    names = [t.name for t in extract_tasks(mod)]
    assert "layer_c" in names and len(names) > 1
    # positional (mod, params, target, work_dir, max_trials, max_trials_per_task,
    # op_names): the same call as ms.relax_integration.tune_relax's
    result = tune_relax(mod, None, "llvm", tmp_path, 3, 3, ["layer_c"], progress=False, **FAST)
    assert [t["name"] for t in result.tasks] == ["layer_c"]
    assert len(result.database) == 3
    db = ms.relax_integration.tune_relax(
        mod, None, "llvm", str(tmp_path / "ms"), 2, 2, ["layer_c"], num_trials_per_iter=1
    )
    assert len(db) == 2
    layer_c = next(t for t in extract_tasks(mod) if t.name == "layer_c")
    assert len(db.records(layer_c.mod, "llvm")) == 2
    # the earlier order (mod, target, ...) is refused with the order named
    with pytest.raises(tilelang.ArgumentError, match="target comes third"):
        tune_relax(mod, "llvm", max_trials=1, work_dir=tmp_path, progress=False)


def test_task_table_and_per_task_plot(tmp_path):
    rows = [
        {"name": "a", "flop": 2e9, "weight": 2, "best_sec": 0.5, "trials": 3, "model_tau": 0.25,
         "scored": 2064},
        {"name": "b", "flop": 1e9, "weight": 1, "best_sec": math.inf, "trials": 1},
    ]  # fmt: skip
    table = task_table(rows)
    lines = table.splitlines()
    assert "Weighted Latency (us)" in lines[0] and "Model tau" in lines[0]
    assert lines[0].rstrip().endswith("Scored/round")
    assert "1000000.0000" in lines[2] and lines[2].rstrip().endswith("0.25 |         2064")
    assert lines[3].rstrip().endswith("- |            -")
    assert lines[-1].startswith("Total trials: 4")
    pytest.importorskip("matplotlib")
    from tilelang.tune.report import save_task_plot

    class Done:
        name, flop = "t", 1e6

        def latencies(self):
            return [1e-3, math.inf, 5e-4]

    path = tmp_path / "curves.png"
    assert save_task_plot(path, [Done(), Done()])
    assert path.read_bytes()[:4] == b"\x89PNG"


def test_whole_model_tuning_on_a_local_dask_cluster(tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    mod = _model()
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:  # fmt: skip
        with distributed.Client(cluster) as client:
            with distributed.get_task_stream(client) as stream:
                result = tune_relax(mod, None, "llvm", tmp_path, 4,
                                    num_trials_per_iter=1, executor=client.get_executor(),
                                    progress=False, **FAST)  # fmt: skip
            workers = set(client.scheduler_info()["workers"])
            ran = [t for t in stream.data if str(t["key"]).startswith("build_candidate")]
    assert len(ran) == 4  # every candidate was built on the cluster's workers
    assert {t["worker"] for t in ran} <= workers
    assert len(result.database) == 4
    args = _inputs(1)
    np.testing.assert_allclose(_run(compile_relax(result.database, mod, "llvm"), args),
                               _expected(*args), rtol=1e-4, atol=1e-4)  # fmt: skip


def test_model_accuracy_is_measured_on_the_batches_it_chose(tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    from tilelang.testing.workloads import matmul
    from tilelang.tune import JSONDatabase, TaskTuner

    task = TaskTuner(matmul(32), "llvm", JSONDatabase(tmp_path), space="generic",
                     cost_model="numpy", pool_factor=2, repeat=1, min_repeat_ms=0.0)  # fmt: skip
    with ThreadPoolExecutor(1) as pool:
        while task.trials < 8:  # the model trains once 8 candidates are measured
            task.step(4, pool)
        assert task.summary()["model_tau"] is None
        task.step(4, pool)  # scored by the model, then measured
    tau = task.summary()["model_tau"]
    assert tau is not None and -1.0 <= tau <= 1.0
    assert task.summary()["trials"] == 12
    from tilelang.tune.report import ModelProgress

    stream = io.StringIO()
    ModelProgress([task], 12, stream).show(task)
    assert "task main: 12 trials" in stream.getvalue()
    assert f"model tau {tau:.2f}" in stream.getvalue()
    scored = task.summary()["scored"]  # the guided round screened many more than 4
    assert scored > 4 * 2 and f"scored {scored}/round" in stream.getvalue()


def test_tilec_tunes_a_graph_module_as_a_whole_model(tmp_path, capsys):
    from tilelang import cli

    database = tmp_path / "db"
    status = cli.main([str(MODEL), "--tune", "4", "--database", str(database)])
    out, err = capsys.readouterr()
    assert status == 0, err
    assert len((database / "database.jsonl").read_text().splitlines()) == 4
    assert "Total trials: 4" in err and "layer_a" in err
    tuned = tilelang.parse(out)
    # the tuned functions carry their schedules (the tuned layer_a + relu and layer_b +
    # relu alike, fused as the build fuses them)
    from tilelang.tune.tasks import build_module, task_module
    from tilelang.tune.workload import workload_hash

    names = ("fused_layer_a_relu", "fused_layer_b_relu")
    keys = [workload_hash(task_module(tuned[n])) for n in names]
    untuned = build_module(_model())[names[0]]
    assert keys[0] == keys[1] != workload_hash(task_module(untuned))
    args = _inputs(2)
    ex = relax.build(tuned, target="llvm")
    np.testing.assert_allclose(_run(ex, args), _expected(*args), rtol=1e-4, atol=1e-4)


# ----------------------------------------------------------------- confirmation


def test_a_re_measured_trace_ranks_by_its_re_measurement(tmp_path):
    from tilelang.tune import JSONDatabase
    from tilelang.tune.database import TuningRecord

    db = JSONDatabase(tmp_path)
    fast_trial = TuningRecord("w", "llvm", [["a"]], (1.0,))
    slow_trial = TuningRecord("w", "llvm", [["b"]], (2.0,))
    for record in (fast_trial, slow_trial):
        db.commit(record)
    assert db.query_best("w", "llvm")[0].trace == [["a"]]
    # side by side, "a" is the slower one: its re-measurement decides
    db.commit(TuningRecord("w", "llvm", [["a"]], (3.0, 3.0, 3.0), remeasured=True))
    db.commit(TuningRecord("w", "llvm", [["b"]], (2.5, 2.5, 2.5), remeasured=True))
    best = JSONDatabase(tmp_path).query_best("w", "llvm", top_k=5)  # as stored on disk
    assert [(r.trace, r.latency) for r in best] == [([["b"]], 2.5), ([["a"]], 3.0)]
    # a later trial (a later run) ranks among the trials again, by their own timings
    db.commit(TuningRecord("w", "llvm", [["c"]], (1.5,)))
    assert [r.trace for r in db.query_best("w", "llvm", top_k=3)] == [[["a"]], [["c"]], [["b"]]]


def test_confirm_re_times_the_finalists_and_the_default_side_by_side(tmp_path):
    from tilelang.testing.workloads import matmul
    from tilelang.tune import compile_tir, tune_tir

    mod = matmul(32)
    options = {"space": "rules", "max_trials": 4, "work_dir": tmp_path, "repeat": 1,
               "min_repeat_ms": 0.0, "progress": False, "cost_model": None}  # fmt: skip
    db = tune_tir(mod, confirm=1, **options)
    records = db.records(mod, "llvm")
    trials = [r for r in records if not r.remeasured]
    again = [r for r in records if r.remeasured]
    assert len(trials) == 4
    # the best trial and the default build's schedule (the first trial), unless one
    assert 1 <= len(again) <= 2 and all(len(r.run_secs) == 3 for r in again)
    assert trials[0].trace in [r.trace for r in again]
    assert db.query_best(mod, "llvm")[0].remeasured
    a, b = (np.random.default_rng(s).random((32, 32), dtype="float32") for s in (0, 1))
    c = np.zeros((32, 32), "float32")
    tilelang.build(compile_tir(db, mod, "llvm"), "llvm")["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4)
    # re-measurements are not trials: a second run with the same budget measures nothing
    tune_tir(mod, confirm=1, **options)
    assert len(db.records(mod, "llvm")) == len(records)

"""tilelang.meta_schedule: MetaSchedule's spelling of tilelang.tune (tiny budgets)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import tilelang
from tilelang import meta_schedule as ms
from tilelang import relax, topi
from tilelang.errors import ArgumentError
from tilelang.ir import assert_structural_equal
from tilelang.testing.workloads import matmul
from tilelang.tune import JSONDatabase, stochastic_schedule_mm

TARGET = "llvm --num-cores=1"


def check_matmul(mod, n=32):
    rng = np.random.default_rng(0)
    a, b = rng.random((n, n), dtype="float32"), rng.random((n, n), dtype="float32")
    c = np.zeros((n, n), "float32")
    tilelang.build(mod, target="llvm")["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4)


def test_tune_tir_with_a_schedule_fn_and_compile_tir(tmp_path, capsys):
    mod = matmul(32)
    database = ms.tune_tir(
        mod=mod, target=TARGET, max_trials_global=3, num_trials_per_iter=2,
        space=ms.space_generator.ScheduleFn(stochastic_schedule_mm),
        work_dir=str(tmp_path), task_name="mm", seed=1,
    )  # fmt: skip
    assert isinstance(database, ms.database.JSONDatabase)
    assert len(database.records(mod, str(tilelang.Target(TARGET)))) == 3
    # the task name labels the summary table
    assert re.search(r"\| +mm \|", capsys.readouterr().err)
    sch = ms.tir_integration.compile_tir(database, mod, TARGET)
    assert isinstance(sch, tilelang.Schedule)
    kinds = [inst.kind for inst in sch.trace.insts]
    assert "sample_perfect_tile" in kinds and "decompose_reduction" in kinds
    # the trace is the recipe: replaying it on the workload gives the tuned module
    replayed = sch.trace.apply_to_schedule(tilelang.tir.Schedule(mod))
    assert_structural_equal(replayed.mod, sch.mod)
    check_matmul(sch.mod)
    # the best record is the one compile_tir picked
    (best,) = database.query_best(mod, str(tilelang.Target(TARGET)))
    assert best.latency == min(r.latency for r in database.records(mod))


def test_default_space_starts_from_the_default_rules(tmp_path):
    from tilelang.schedule.rules import default_schedule
    from tilelang.tune import replay

    mod = matmul(32)
    db = ms.tune_tir(mod, TARGET, str(tmp_path), 2, num_trials_per_iter=2, seed=0)
    sch = ms.tir_integration.compile_tir(db, mod, TARGET)
    check_matmul(sch.mod)
    records = JSONDatabase(tmp_path).records()  # the same file tilelang.tune reads
    assert len(records) == 2
    # the first candidate measured is the default build's schedule
    first = replay(mod, records[0].as_trace()).mod
    assert_structural_equal(first, default_schedule(mod).mod)


def test_a_second_run_reuses_the_database(tmp_path):
    mod = matmul(32)
    space = ms.space_generator.ScheduleFn(stochastic_schedule_mm)
    first = ms.tune_tir(mod, TARGET, str(tmp_path), 2, num_trials_per_iter=2, space=space, seed=0)
    count = len(first)
    ms.tune_tir(mod, TARGET, str(tmp_path), 2, num_trials_per_iter=2, space=space, seed=0)
    assert len(JSONDatabase(tmp_path)) == count  # the budget was already spent


@pytest.mark.parametrize(
    "option, value",
    [("builder", "rpc"), ("runner", "rpc"), ("database", "memory"), ("strategy", "genetic")],
)
def test_components_the_tuner_lacks_are_rejected(tmp_path, option, value):
    with pytest.raises(ArgumentError, match=f"{option}={value!r} is not supported"):
        ms.tune_tir(matmul(32), TARGET, str(tmp_path), 2, **{option: value})


def test_bad_space_and_missing_record_are_clear_errors(tmp_path):
    with pytest.raises(ArgumentError, match="space must be ms.space_generator.ScheduleFn"):
        ms.tune_tir(matmul(32), TARGET, str(tmp_path), 2, space="evolutionary")
    with pytest.raises(ArgumentError, match="ScheduleFn takes a function"):
        ms.space_generator.ScheduleFn(3)
    with pytest.raises(ArgumentError, match="no valid record"):
        ms.tir_integration.compile_tir(JSONDatabase(tmp_path), matmul(32), TARGET)
    with pytest.raises(ArgumentError, match="num_tuning_cores"):
        ms.tune_tir(matmul(32), TARGET, str(tmp_path), 2, num_tuning_cores=0)


def _model():
    rng = np.random.default_rng(3)
    x = relax.Var("x", relax.TensorStructInfo((4, 16), "float32"))
    w0 = relax.const(rng.standard_normal((8, 16)).astype("float32"))
    w1 = relax.const(rng.standard_normal((8, 8)).astype("float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            lv0 = bb.emit_te(topi.nn.dense, x, w0)
            lv1 = bb.emit_te(topi.nn.relu, lv0)
            lv2 = bb.emit_te(topi.nn.dense, lv1, w1)
            out = bb.emit_output(bb.emit_te(topi.nn.relu, lv2))
        bb.emit_func_output(out)
    expected = lambda d: np.maximum(np.maximum(d @ w0.data.T, 0) @ w1.data.T, 0)  # noqa: E731
    return bb.get(), expected


def test_relax_integration_tunes_every_tensor_function(tmp_path):
    mod, expected = _model()
    tasks = ms.relax_integration.extract_tasks(mod, TARGET)
    # each relu is fused into its dense, as relax.build fuses them: two tasks
    assert [(t.task_name, t.weight) for t in tasks] == [
        ("fused_dense_1_relu", 1),
        ("fused_dense_relu", 1),
    ]
    assert all(list(t.mod.functions) == ["main"] for t in tasks)
    db = ms.relax_integration.tune_relax(
        mod, None, TARGET, str(tmp_path), max_trials_global=3, num_trials_per_iter=1, seed=0
    )
    counts = [len(db.records(task.mod, str(tilelang.Target(TARGET)))) for task in tasks]
    assert min(counts) >= 1 and sum(counts) == 3  # each task got its share of the budget
    ex = ms.relax_integration.compile_relax(db, mod, TARGET)
    vm = relax.VirtualMachine(ex, tilelang.cpu())
    data = np.random.default_rng(4).standard_normal((4, 16)).astype("float32")
    np.testing.assert_allclose(vm["main"](data).numpy(), expected(data), rtol=1e-4, atol=1e-4)

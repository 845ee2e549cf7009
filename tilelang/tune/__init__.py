"""Automatic scheduling: search spaces, a tuner with a database (MetaSchedule's shape).

::

    from tilelang.tune import tune_tir, compile_tir

    db = tune_tir(mod, "llvm", space="auto", max_trials=64, work_dir="tune_logs")
    scheduled = compile_tir(db, mod, "llvm")
    lib = tilelang.build(scheduled, "llvm")

Whole models: ``tune_relax(mod, params, "llvm", "logs", 256)`` (TVM's order) then
``compile_relax(result.database, mod, "llvm", params)``. See docs/tuning.md.
"""

# Loaded on first use (PEP 562), so that importing tilelang.tune.cli for tilec's
# option table does not load the schedule and the search.
_EXPORTS = {
    "JSONDatabase": "database", "TuningRecord": "database", "estimate_flop": "flop",
    "DecisionSchedule": "space", "apply_space": "space", "mutate": "space",
    "stochastic_schedule_mm": "space",
    "generic_space": "space_cpu", "replay": "trace_json", "trace_from_json": "trace_json",
    "trace_to_json": "trace_json", "compile_tir": "tuner", "tune_tir": "tuner",
    "workload_hash": "workload", "RulesSpace": "space_rules",
    "RulesOrGenericSpace": "space_rules", "TaskTuner": "tuner", "TuningTask": "tasks",
    "extract_tasks": "tasks", "tune_tasks": "tune_model", "tune_relax": "tune_model",
    "compile_relax": "tune_model", "apply_best": "tune_model",
    "GradientScheduler": "task_scheduler", "RoundRobinScheduler": "task_scheduler",
}  # fmt: skip


def __getattr__(name):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'tilelang.tune' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"tilelang.tune.{module}"), name)


__all__ = [
    "tune_tir", "compile_tir", "JSONDatabase", "TuningRecord", "generic_space",
    "DecisionSchedule", "apply_space", "mutate", "replay", "trace_to_json",
    "trace_from_json", "workload_hash", "estimate_flop", "stochastic_schedule_mm",
    "RulesSpace", "RulesOrGenericSpace", "TaskTuner", "TuningTask", "extract_tasks",
    "tune_tasks", "tune_relax", "compile_relax", "apply_best", "GradientScheduler",
    "RoundRobinScheduler",
]  # fmt: skip

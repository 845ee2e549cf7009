"""Automatic scheduling: search spaces, a tuner with a database (MetaSchedule's shape).

::

    from tilelang.tune import tune_tir, compile_tir

    db = tune_tir(mod, "llvm", space="auto", max_trials=64, work_dir="tune_logs")
    scheduled = compile_tir(db, mod, "llvm")
    lib = tilelang.build(scheduled, "llvm")

See docs/tuning.md.
"""

from tilelang.tune.database import JSONDatabase, TuningRecord
from tilelang.tune.flop import estimate_flop
from tilelang.tune.space import DecisionSchedule, apply_space, mutate
from tilelang.tune.space_cpu import generic_space
from tilelang.tune.trace_json import replay, trace_from_json, trace_to_json
from tilelang.tune.tuner import compile_tir, tune_tir
from tilelang.tune.workload import workload_hash

__all__ = [
    "tune_tir", "compile_tir", "JSONDatabase", "TuningRecord", "generic_space",
    "DecisionSchedule", "apply_space", "mutate", "replay", "trace_to_json",
    "trace_from_json", "workload_hash", "estimate_flop",
]  # fmt: skip

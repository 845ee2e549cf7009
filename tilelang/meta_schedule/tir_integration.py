"""``ms.tune_tir`` and ``ms.tir_integration.compile_tir`` in MetaSchedule's spelling,
run by :func:`tilelang.tune.tune_tir`.

MetaSchedule's knobs that name a component (``builder="local"``, ``runner="local"``,
``database="json"``, ``cost_model``, ``strategy``, ``task_scheduler``...) are accepted
with the values that mean what tilelang's tuner does (its local builder and runner, its
JSON database, its evolutionary search; ``cost_model="xgb"`` is its LightGBM model);
any other value is an :class:`~tilelang.errors.ArgumentError` rather than silently
ignored.
"""

from __future__ import annotations

import random

from tilelang.errors import ArgumentError
from tilelang.meta_schedule.space_generator import as_space

#: MetaSchedule's component options and the values tilelang's tuner honours
_COMPONENTS = {
    "builder": ("local",),
    "runner": ("local",),
    "database": ("json",),
    "cost_model": ("xgb", "random", "none", None),
    "measure_callbacks": ("default",),
    "task_scheduler": ("gradient", "round-robin"),
    "strategy": ("evolutionary", "replay-trace", "replay-func"),
    "module_equality": ("structural",),
}


def check_components(**given) -> None:
    """Reject a MetaSchedule component option tilelang's tuner cannot honour."""
    for name, value in given.items():
        accepted = _COMPONENTS[name]
        if value not in accepted:
            shown = ", ".join(repr(v) for v in accepted if v is not None)
            raise ArgumentError(
                f"{name}={value!r} is not supported: tilelang's tuner has one {name} "
                f"(accepted: {shown}); see docs/coming_from_tvm.md"
            )


def executor_for(num_tuning_cores):
    """The build executor for ``num_tuning_cores`` (``"physical"``/``"logical"``: the
    tuner's default pool; an int: that many worker processes)."""
    if num_tuning_cores in ("physical", "logical"):
        return None
    if isinstance(num_tuning_cores, bool) or not isinstance(num_tuning_cores, int):
        raise ArgumentError(
            f"num_tuning_cores is 'physical', 'logical' or a positive int, not {num_tuning_cores!r}"
        )
    if num_tuning_cores < 1:
        raise ArgumentError(f"num_tuning_cores must be at least 1, got {num_tuning_cores}")
    from tilelang.tune.tuner import _default_executor

    return _default_executor(num_tuning_cores)


def tune_tir(mod, target, work_dir: str, max_trials_global: int, *,
             max_trials_per_task: int | None = None, num_trials_per_iter: int = 64,
             builder="local", runner="local", database="json", cost_model="xgb",
             measure_callbacks="default", task_scheduler="gradient", space="post-order-apply",
             strategy="evolutionary", num_tuning_cores="physical", seed: int | None = None,
             module_equality: str = "structural", task_name: str = "main"):  # fmt: skip
    """Tune ``mod`` (an IRModule with one prim_func, or a PrimFunc) for ``target``;
    returns the :class:`~tilelang.tune.JSONDatabase` in ``work_dir``.

    ``max_trials_global`` candidates are measured in all (``max_trials_per_task``, when
    smaller, caps it: there is one task), ``num_trials_per_iter`` per batch. ``space``
    is ``ms.space_generator.ScheduleFn(f)`` or the generic space (the default).
    ``seed`` None draws a random seed, as MetaSchedule does; give one to repeat a run.
    ``task_name`` labels the summary the tuner prints.
    """
    from tilelang.tune.tuner import tune_tir as run_tuner

    check_components(
        builder=builder, runner=runner, database=database, cost_model=cost_model,
        measure_callbacks=measure_callbacks, task_scheduler=task_scheduler,
        strategy=strategy, module_equality=module_equality,
    )  # fmt: skip
    if work_dir is None:
        raise ArgumentError("tune_tir needs a work_dir (where the database is kept)")
    trials = max_trials_global
    if max_trials_per_task is not None:
        trials = min(trials, max_trials_per_task)
    executor = executor_for(num_tuning_cores)
    try:
        return run_tuner(
            mod, target, space=as_space(space), max_trials=trials,
            seed=random.randrange(2**31) if seed is None else seed, work_dir=work_dir,
            executor=executor, num_trials_per_iter=num_trials_per_iter,
            task_name=task_name, cost_model="auto" if cost_model == "xgb" else None,
        )  # fmt: skip
    finally:
        if executor is not None:
            executor.shutdown(wait=True)


def compile_tir(database, mod, target):
    """The best schedule of ``mod`` on ``target`` in ``database``: a
    :class:`tilelang.Schedule` whose ``.trace`` replays the tuned steps and whose
    ``.mod`` is the tuned module. Raises ArgumentError when the database has no valid
    record of ``mod`` (MetaSchedule returns None there)."""
    from tilelang.target import as_target
    from tilelang.tune.workload import as_module

    mod = as_module(mod)
    sch = database.query_schedule(mod, str(as_target(target)))
    if sch is None:
        raise ArgumentError(
            f"the database in {database.work_dir} has no valid record of this workload on "
            f"{as_target(target)}; run tune_tir first"
        )
    return sch


__all__ = ["tune_tir", "compile_tir"]

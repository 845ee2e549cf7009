"""``ms.relax_integration``: tune every tensor function of a graph-level module.

``extract_tasks(mod, target, params)`` finds the distinct prim_funcs the graph
functions call (structurally equal ones are one task, weighted by their calls; see
:mod:`tilelang.tune.tasks`); ``tune_relax`` tunes them into one database with one
budget, shared by the task scheduler (:mod:`tilelang.tune.task_scheduler`);
``compile_relax`` replaces each tuned prim_func by its best schedule and builds the
module into a :class:`tilelang.relax.Executable`.

A task is the prim_func alone in a module under the name ``"main"`` (as MetaSchedule
extracts it), so records are shared with ``tune_tir`` runs of the same function. Only
prim_funcs whose buffers all have constant shapes can be measured; bind the weights
(``params``) so that a model's sizes are known, and the rest stay as they are.
"""

from __future__ import annotations

import attrs

from tilelang.errors import ArgumentError
from tilelang.ir import IRModule
from tilelang.meta_schedule.tir_integration import check_components, executor_for
from tilelang.target import as_target


@attrs.frozen
class ExtractedTask:
    """One tensor function to tune: ``mod`` holds it as ``"main"``; ``dispatched`` the
    task modules of every function with this workload (one per function name);
    ``weight`` is how many calls of them the graph functions make."""

    task_name: str
    mod: IRModule
    target: object
    dispatched: tuple
    weight: int


def extract_tasks(mod: IRModule, target, params: dict | None = None) -> list[ExtractedTask]:
    """The distinct tunable prim_funcs of ``mod`` (after binding ``params`` into
    ``"main"``)."""
    from tilelang.tune.tasks import extract_tasks as distinct_tasks

    target = as_target(target)
    return [
        ExtractedTask(
            task.name, task.mod, target, (task.mod,) * len(task.func_names), task.weight
        )  # fmt: skip
        for task in distinct_tasks(mod, params)
    ]


def tune_relax(mod: IRModule, params: dict | None, target, work_dir: str,
               max_trials_global: int, max_trials_per_task: int | None = None,
               op_names: list | None = None, *, num_trials_per_iter: int = 64,
               builder="local", runner="local", database="json", cost_model="xgb",
               measure_callbacks="default",
               task_scheduler="gradient", space="post-order-apply", strategy="evolutionary",
               num_tuning_cores="physical", seed: int | None = None):  # fmt: skip
    """Tune every task of ``mod`` into the database in ``work_dir`` and return it.

    The ``max_trials_global`` budget is shared: ``task_scheduler="gradient"`` gives
    each batch of ``num_trials_per_iter`` to the task expected to lower the model's
    latency most (after one batch each), ``"round-robin"`` to each task in turn; at
    most ``max_trials_per_task`` each when given; only the tasks whose name contains
    one of ``op_names`` when given. The arguments are in TVM's order, as
    :func:`tilelang.tune.tune_relax`'s are.
    """
    from tilelang.meta_schedule.space_generator import as_space
    from tilelang.tune.tasks import extract_tasks as distinct_tasks
    from tilelang.tune.tune_model import select_tasks, tune_tasks

    check_components(
        builder=builder, runner=runner, database=database, cost_model=cost_model,
        measure_callbacks=measure_callbacks, task_scheduler=task_scheduler,
        strategy=strategy, module_equality="structural",
    )  # fmt: skip
    if work_dir is None:
        raise ArgumentError("tune_relax needs a work_dir (where the database is kept)")
    executor = executor_for(num_tuning_cores)
    try:
        result = tune_tasks(
            select_tasks(distinct_tasks(mod, params), op_names), target,
            max_trials_global, work_dir,
            max_trials_per_task=max_trials_per_task, num_trials_per_iter=num_trials_per_iter,
            space=as_space(space), seed=0 if seed is None else seed, executor=executor,
            cost_model="auto" if cost_model == "xgb" else None, task_scheduler=task_scheduler,
        )  # fmt: skip
    finally:
        if executor is not None:
            executor.shutdown(wait=True)
    return result.database


def compile_relax(database, mod: IRModule, target, params: dict | None = None):
    """``relax.build`` of ``mod`` (``params`` bound) with every prim_func that
    ``database`` has a record of replaced by its best schedule."""
    from tilelang.tune.tune_model import compile_relax as build_tuned

    return build_tuned(database, mod, target, params)


__all__ = ["ExtractedTask", "extract_tasks", "tune_relax", "compile_relax"]

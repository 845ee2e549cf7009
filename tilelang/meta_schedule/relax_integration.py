"""``ms.relax_integration``: tune every tensor function of a graph-level module.

``extract_tasks(mod, target, params)`` finds the prim_funcs the graph functions call
(one task each, weighted by its number of call sites); ``tune_relax`` tunes them into
one database; ``compile_relax`` replaces each tuned prim_func by its best schedule and
builds the module into a :class:`tilelang.relax.Executable`.

A task is the prim_func alone in a module under the name ``"main"`` (as MetaSchedule
extracts it), so records are shared with ``tune_tir`` runs of the same function. Only
prim_funcs whose buffers all have constant shapes can be measured; bind the weights
(``params``) so that a model's sizes are known, and the rest stay as they are.
"""

from __future__ import annotations

import attrs

from tilelang.errors import ArgumentError
from tilelang.ir import IntImm, IRModule, PrimFunc
from tilelang.meta_schedule.tir_integration import check_components, executor_for
from tilelang.target import as_target


@attrs.frozen
class ExtractedTask:
    """One tensor function to tune: ``mod`` holds it as ``"main"``; ``weight`` is how
    many calls of it the graph functions make."""

    task_name: str
    mod: IRModule
    target: object
    dispatched: tuple
    weight: int


def _task_module(func: PrimFunc) -> IRModule:
    return IRModule({"main": func.with_attr("global_symbol", "main")})


def _static(func: PrimFunc) -> bool:
    return (
        all(all(isinstance(d, (int, IntImm)) for d in buf.shape) for buf in func.buffers)
        and not func.scalar_params()
    )


def _bind(mod: IRModule, params) -> IRModule:
    if not params:
        return mod
    from tilelang.relax.transform import bind_params

    return bind_params(mod, params)


def _call_counts(mod: IRModule) -> dict:
    """How many times each function is called by name from the graph functions."""
    from tilelang.ir.node import Node, child_fields
    from tilelang.relax.expr import Call, Function, callee_name

    counts: dict = {}

    def walk(node):
        if isinstance(node, Call) and node.op in ("relax.call_tir", "relax.call_dps_packed"):
            name = callee_name(node)
            counts[name] = counts.get(name, 0) + 1
        for field in child_fields(type(node)):
            value = getattr(node, field)
            for item in value if isinstance(value, (tuple, list)) else (value,):
                if isinstance(item, Node):
                    walk(item)

    for func in mod.functions.values():
        if isinstance(func, Function):
            walk(func)
    return counts


def extract_tasks(mod: IRModule, target, params: dict | None = None) -> list[ExtractedTask]:
    """The tunable prim_funcs of ``mod`` (after binding ``params`` into ``"main"``)."""
    mod = _bind(mod, params)
    target = as_target(target)
    counts = _call_counts(mod)
    tasks = []
    for name in sorted(mod.functions):
        func = mod[name]
        if isinstance(func, PrimFunc) and _static(func) and counts.get(name, 0) > 0:
            task_mod = _task_module(func)
            tasks.append(ExtractedTask(str(name), task_mod, target, (task_mod,), counts[name]))
    return tasks


def tune_relax(mod: IRModule, params: dict | None, target, work_dir: str,
               max_trials_global: int, *, max_trials_per_task: int | None = None,
               num_trials_per_iter: int = 64, builder="local", runner="local",
               database="json", cost_model="xgb", measure_callbacks="default",
               task_scheduler="gradient", space="post-order-apply", strategy="evolutionary",
               num_tuning_cores="physical", seed: int | None = None):  # fmt: skip
    """Tune every task of ``mod`` into the database in ``work_dir`` and return it.

    The ``max_trials_global`` budget is shared: each task gets its even share (at
    least one trial), capped by ``max_trials_per_task`` when given.
    """
    from tilelang.meta_schedule.space_generator import as_space
    from tilelang.tune.database import JSONDatabase
    from tilelang.tune.tuner import tune_tir as run_tuner

    check_components(
        builder=builder, runner=runner, database=database, cost_model=cost_model,
        measure_callbacks=measure_callbacks, task_scheduler=task_scheduler,
        strategy=strategy, module_equality="structural",
    )  # fmt: skip
    if work_dir is None:
        raise ArgumentError("tune_relax needs a work_dir (where the database is kept)")
    tasks = extract_tasks(mod, target, params)
    share = max(1, max_trials_global // max(1, len(tasks)))
    if max_trials_per_task is not None:
        share = min(share, max_trials_per_task)
    executor = executor_for(num_tuning_cores)
    try:
        for index, task in enumerate(tasks):
            run_tuner(
                task.mod, task.target, space=as_space(space), max_trials=share,
                seed=index if seed is None else seed + index, work_dir=work_dir,
                executor=executor, num_trials_per_iter=num_trials_per_iter,
                task_name=task.task_name,
            )  # fmt: skip
    finally:
        if executor is not None:
            executor.shutdown(wait=True)
    return JSONDatabase(work_dir)


def compile_relax(database, mod: IRModule, target, params: dict | None = None):
    """``relax.build`` of ``mod`` (``params`` bound) with every prim_func that
    ``database`` has a record of replaced by its best schedule."""
    from tilelang.relax.vm import build

    mod = _bind(mod, params)
    target = as_target(target)
    tuned = IRModule(dict(mod.functions), mod.attrs)
    for task in extract_tasks(mod, target):
        sch = database.query_schedule(task.mod, str(target))
        if sch is None:
            continue  # not tuned: the function stays as written
        symbol = mod[task.task_name].attrs.get("global_symbol", task.task_name)
        tuned.update_func(task.task_name, sch.mod["main"].with_attr("global_symbol", symbol))
    return build(tuned, target=target)


__all__ = ["ExtractedTask", "extract_tasks", "tune_relax", "compile_relax"]

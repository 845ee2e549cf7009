"""Whole-model tuning: ``tune_relax`` shares one budget among a model's tasks.

::

    from tilelang.tune import tune_relax, compile_relax

    result = tune_relax(mod, weights, "llvm", "logs", max_trials=256)
    print(result.table)                      # per task: best, weight, trials, model tau
    ex = compile_relax(result.database, mod, "llvm", params=weights)

The tasks are the model's distinct tensor functions (:mod:`tilelang.tune.tasks`:
structurally equal functions are one task, weighted by their calls). Each is a
:class:`~tilelang.tune.tuner.TaskTuner` with its own search and cost model; the task
scheduler (:mod:`tilelang.tune.task_scheduler`, gradient-based by default) gives each
batch to the task expected to lower the model's latency most. Builds of every task run
on one executor (any ``concurrent.futures.Executor``: a Dask ``Client.get_executor()``
spreads them over a cluster), while measurements stay in this process, one at a time.
"""

from __future__ import annotations

import tempfile

import attrs

from tilelang.errors import ArgumentError
from tilelang.ir import IRModule
from tilelang.target import as_target
from tilelang.tune.database import JSONDatabase
from tilelang.tune.report import ModelProgress, save_task_plot, task_table, total_latency
from tilelang.tune.task_scheduler import allocate, make_scheduler
from tilelang.tune.tasks import bind_weights, build_module, extract_tasks
from tilelang.tune.tuner import POOL_FACTOR, POPULATION, TaskTuner, _default_executor


@attrs.frozen
class ModelTuningResult:
    """What ``tune_relax`` / ``tune_tasks`` did: the ``database``, one summary per task
    (``name``, ``func_names``, ``flop``, ``weight``, ``best_sec``, ``trials``,
    ``model_tau``, ``history``: best seconds after each of its batches) in task order,
    the model's ``latency`` (sum of weight x best) and the printed ``table``."""

    database: JSONDatabase
    tasks: tuple
    latency: float
    table: str


def tune_tasks(tasks, target="llvm", max_trials: int = 64, work_dir=None, *,
               max_trials_per_task: int | None = None, num_trials_per_iter: int = 16,
               space="auto", seed: int = 0, executor=None, cost_model="auto",
               pool_factor: int = POOL_FACTOR, population: int = POPULATION,
               task_scheduler="gradient",
               number: int = 1, repeat: int = 5, min_repeat_ms: float = 10.0,
               progress: bool = True, plot=None, stream=None,
               confirm: int = 0, clock: str = "wall") -> ModelTuningResult:  # fmt: skip
    """Tune :class:`~tilelang.tune.tasks.TuningTask` s under one budget of
    ``max_trials`` measured candidates (records already in ``work_dir``'s database
    count), ``num_trials_per_iter`` per batch, at most ``max_trials_per_task`` each.
    ``task_scheduler`` is ``"gradient"``, ``"round-robin"`` or a scheduler object;
    ``plot`` names a PNG of every task's best-so-far curve; ``confirm=N`` re-times
    each task's N best side by side with its default build at the end. Other arguments
    as :func:`tilelang.tune.tune_tir`."""
    if max_trials < 0 or num_trials_per_iter < 1:
        raise ArgumentError("max_trials must be >= 0 and num_trials_per_iter >= 1")
    scheduler = make_scheduler(task_scheduler)
    database = JSONDatabase(work_dir if work_dir is not None else tempfile.mkdtemp("-tune"))
    tuners = [
        TaskTuner(
            task.mod,
            target,
            database,
            space=space,
            seed=seed + index,
            cost_model=cost_model,
            pool_factor=pool_factor,
            population=population,
            clock=clock,
            number=number,
            repeat=repeat,
            min_repeat_ms=min_repeat_ms,
            name=task.name,
            weight=task.weight,
        )  # fmt: skip
        for index, task in enumerate(tasks)
    ]
    bar = ModelProgress(tuners, max_trials, stream, enabled=progress)
    own_executor = executor is None
    pool = executor or _default_executor(num_trials_per_iter)
    try:
        histories = allocate(
            tuners, max_trials, num_trials_per_iter, scheduler,
            lambda tuner, count: tuner.step(count, pool, bar.for_task(tuner)),
            max_trials_per_task,
        )  # fmt: skip
        for tuner in tuners:
            tuner.confirm(confirm)
    finally:
        if own_executor:
            pool.shutdown(wait=True)
    bar.close()
    summaries = []
    for task, tuner, history in zip(tasks, tuners, histories):
        summaries.append({**tuner.summary(), "func_names": task.func_names,
                          "history": tuple(history)})  # fmt: skip
    table = task_table(summaries)
    if progress:
        print(table, file=bar.stream)
    if plot is not None:
        save_task_plot(plot, tuners)
    return ModelTuningResult(database, tuple(summaries), total_latency(tuners), table)


def tune_relax(mod: IRModule, params: dict | None = None, target="llvm", work_dir=None,
               max_trials: int = 64, max_trials_per_task: int | None = None,
               op_names=None, **options) -> ModelTuningResult:  # fmt: skip
    """Extract ``mod``'s tasks (``params`` bound first) and tune them with one budget
    (:func:`tune_tasks`'s options).

    The arguments come in the order of TVM's ``meta_schedule.relax_integration.
    tune_relax`` (mod, params, target, work_dir, trials for the whole model, trials per
    task, op_names), so a call written for one reads the same for the other.
    ``op_names``: only the tasks whose name contains one of these strings are tuned
    (all when None or empty)."""
    if params is not None and not isinstance(params, dict):
        raise ArgumentError(
            f"tune_relax(mod, params, target, work_dir, max_trials, ...): params must be a "
            f"dict of weights or None, not {type(params).__name__} {params!r} (the order "
            f"is TVM's: the target comes third)"
        )
    tasks = select_tasks(extract_tasks(mod, params), op_names)
    return tune_tasks(tasks, target, max_trials, work_dir,
                      max_trials_per_task=max_trials_per_task, **options)  # fmt: skip


def select_tasks(tasks, op_names=None) -> list:
    """The ``tasks`` whose name contains one of ``op_names`` (TVM's filter; every task
    when ``op_names`` is None or empty)."""
    if not op_names:
        return list(tasks)
    if isinstance(op_names, str):
        raise ArgumentError(f"op_names must be a list of names, not the string {op_names!r}")
    return [task for task in tasks if any(name in task.name for name in op_names)]


def apply_best(database, mod: IRModule, target, params: dict | None = None) -> IRModule:
    """``mod`` (``params`` bound) as the build sees it (calls specialised, elementwise
    calls fused: :func:`~tilelang.tune.tasks.build_module`, where the tasks come
    from) with every prim_func of a task that ``database`` has a valid record of
    replaced by its best schedule; the others stay as they are."""
    mod = build_module(bind_weights(mod, params))
    target = str(as_target(target))
    tuned = IRModule(dict(mod.functions), mod.attrs)
    for task in extract_tasks(mod):
        sch = database.query_schedule(task.mod, target)
        if sch is None:
            continue
        for name in task.func_names:
            symbol = mod[name].attrs.get("global_symbol", name)
            tuned.update_func(name, sch.mod["main"].with_attr("global_symbol", symbol))
    return tuned


def compile_relax(database, mod: IRModule, target="llvm", params: dict | None = None):
    """``relax.build`` of :func:`apply_best`'s module: a
    :class:`tilelang.relax.Executable` running the tuned functions."""
    from tilelang.relax.vm import build

    return build(apply_best(database, mod, target, params), target=as_target(target))


__all__ = ["ModelTuningResult", "tune_tasks", "tune_relax", "apply_best", "compile_relax"]

"""``tune_tir`` and ``compile_tir``: search a space of schedules, keep the best.

The search is random sampling plus an evolutionary step: after the first batch, half
of each batch are mutations of the best measured traces (one decision drawn again,
the rest kept; see :func:`tilelang.tune.space.mutate`). Each batch is built in
parallel on the executor, then measured one candidate at a time in this process, so
no two measurements overlap (and, with the default local pool, no build runs while a
candidate is being timed). Every outcome is committed to the database as it comes.
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import json
import math
import multiprocessing
import os
import random
import sys
import tempfile

import tilelang
from tilelang.errors import ArgumentError, BuildError, ScheduleError, TileLangError
from tilelang.target import as_target
from tilelang.tune.builder import build_candidate
from tilelang.tune.database import JSONDatabase, make_record
from tilelang.tune.flop import estimate_flop
from tilelang.tune.progress import Progress, save_plot, summary_table
from tilelang.tune.runner import Measurer, _only_prim_func
from tilelang.tune.space import apply_space, mutate, resolve_space
from tilelang.tune.trace_json import trace_to_json
from tilelang.tune.workload import as_module, workload_hash

#: parents of the evolutionary step: the best this many traces
TOP_K = 8
#: draws per wanted candidate before a batch gives up (spaces can be small)
MAX_DRAWS_PER_CANDIDATE = 40


def tune_tir(mod, target="llvm", space="auto", max_trials: int = 64, seed: int = 0,
             work_dir=None, executor=None, num_trials_per_iter: int = 16,
             number: int = 1, repeat: int = 5, min_repeat_ms: float = 10.0,
             progress: bool = True, plot=None, stream=None) -> JSONDatabase:  # fmt: skip
    """Tune ``mod`` (one prim_func) for ``target``; returns the database.

    ``space`` is ``space(sch) -> sch`` drawing its choices with the sampling
    primitives, or ``"auto"`` (the target's generic space, CPU or CUDA). Tuning for
    cuda measures on an NVIDIA GPU; without one it raises BuildError. ``max_trials`` candidates are
    measured in all, counting the records ``work_dir``'s database already holds for
    this workload and target (a second call with the same workload measures nothing).
    ``executor`` is any ``concurrent.futures.Executor`` for the builds (default: a
    local process pool). ``plot`` names a PNG of the best-so-far curve. Example::

        db = tune_tir(mod, "llvm", space="auto", max_trials=64, work_dir="logs")
        best = compile_tir(db, mod, "llvm")
    """
    mod = as_module(mod)
    target_text = str(as_target(target))
    space_fn = resolve_space(space, target)
    func_name, _ = _only_prim_func(mod)
    if max_trials < 0 or num_trials_per_iter < 1:
        raise ArgumentError("max_trials must be >= 0 and num_trials_per_iter >= 1")
    database = JSONDatabase(work_dir if work_dir is not None else tempfile.mkdtemp("-tune"))
    search = _Search(mod, target_text, space_fn, database, seed)
    flop = estimate_flop(mod)
    bar = Progress(max_trials, flop, stream, enabled=progress)
    if search.trials < max_trials:
        _require_device(as_target(target))
        measurer = Measurer(mod, target_text, seed, number, repeat, min_repeat_ms)
        own_executor = executor is None
        pool = executor or _default_executor(num_trials_per_iter)
        try:
            while search.trials < max_trials:
                batch = search.draw(min(num_trials_per_iter, max_trials - search.trials))
                if not batch:
                    break  # the space has nothing new to offer
                search.run_batch(batch, pool, measurer, flop, bar)
        finally:
            if own_executor:
                pool.shutdown(wait=True)
    bar.update(search.trials, search.best_sec())
    bar.close()
    if progress:
        print(summary_table(func_name, flop, search.best_sec(), search.trials), file=bar.stream)
    if plot is not None:
        save_plot(plot, search.latencies(), flop)
    return database


def _require_device(target) -> None:
    """Candidates are measured where they run: a cuda target needs a GPU and a
    launcher (pycuda, cuda-python or CuPy) on this machine."""
    if target.kind != "cuda":
        return
    from tilelang.backends.cuda import available_launchers

    if not available_launchers():
        raise BuildError(
            "tuning for cuda measures every candidate on an NVIDIA GPU, and this machine "
            "has no GPU (or no pycuda / cuda-python / CuPy to launch kernels); the CUDA "
            "space can still be sampled and built: tilelang.tune.space_cuda.cuda_space"
        )


def compile_tir(database: JSONDatabase, mod, target="llvm"):
    """The best scheduled IRModule of ``mod`` on ``target`` recorded in ``database``."""
    mod = as_module(mod)
    sch = database.query_schedule(mod, str(as_target(target)))
    if sch is None:
        raise ArgumentError(
            f"the database in {database.work_dir} has no valid record of this workload on "
            f"{as_target(target)}; run tune_tir first"
        )
    return sch.mod


def _default_executor(workers_wanted: int) -> concurrent.futures.Executor:
    # On Linux the workers are forked: a spawned worker re-imports the user's __main__
    # (a script without a __main__ guard would tune itself recursively) and imports
    # tilelang again. The pool forks its workers at the first batch's submissions,
    # before this process has run any OpenMP code, and the workers only parse, lower
    # and compile (no OpenMP, no threads of their own).
    workers = max(1, min(workers_wanted, os.cpu_count() or 1))
    method = "fork" if sys.platform.startswith("linux") else "spawn"
    context = multiprocessing.get_context(method)
    return concurrent.futures.ProcessPoolExecutor(max_workers=workers, mp_context=context)


class _Search:
    """The state of one tuning run: known traces, the records so far, the random state."""

    def __init__(self, mod, target, space, database, seed):
        self.mod, self.target, self.space, self.database = mod, target, space, database
        self.workload = workload_hash(mod)
        self.rng = random.Random(seed)
        self.records = database.records(self.workload, target)
        self.seen = {_trace_key(r.trace) for r in self.records}
        self.trials = len(self.records)

    def best_sec(self) -> float:
        return min((r.latency for r in self.records), default=math.inf)

    def latencies(self) -> list[float]:
        return [r.latency for r in self.records]

    def draw(self, count: int) -> list:
        """Up to ``count`` new candidates ``(schedule, text)``."""
        ranked = sorted(self.records, key=lambda r: r.latency)[:TOP_K]
        parents = [r.as_trace() for r in ranked if math.isfinite(r.latency)]
        batch = []
        for _ in range(count * MAX_DRAWS_PER_CANDIDATE):
            if len(batch) == count:
                break
            try:
                if parents and self.rng.random() < 0.5:
                    sch = mutate(self.mod, self.space, self.rng.choice(parents), self.rng)
                else:
                    sch = apply_space(self.mod, self.space, self.rng.randrange(1, 2**31))
            except ScheduleError:
                continue  # this draw does not apply (or the space rejected it)
            if sch is None:
                continue
            data = trace_to_json(sch.trace)
            key = _trace_key(data)
            if key in self.seen:
                continue
            self.seen.add(key)
            batch.append((sch, data, sch.mod.script()))
        return batch

    def run_batch(self, batch, pool, measurer, flop, bar) -> None:
        futures = [pool.submit(build_candidate, text, self.target) for _, _, text in batch]
        results = [f.result() for f in futures]  # every build ends before any timing
        for (_, data, text), built in zip(batch, results):
            run_secs, error = (), built.error
            if built.ok:
                try:
                    lib = tilelang.build(tilelang.parse(text), target=self.target)
                except TileLangError as exc:
                    error = f"{type(exc).__name__}: {exc}"
                else:
                    run_secs, error = measurer.measure(lib)
            record = make_record(
                self.workload, self.target, data, run_secs, error is None, error, flop
            )
            self.database.commit(record)
            self.records.append(record)
            self.trials += 1
            bar.update(self.trials, self.best_sec())


def _trace_key(data) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()

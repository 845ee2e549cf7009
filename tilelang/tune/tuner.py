"""``tune_tir`` and ``compile_tir``: search a space of schedules, keep the best.

The search is random sampling plus an evolutionary step: after the first batch, half
of each batch are mutations of the best measured traces (one decision drawn again,
the rest kept; see :func:`tilelang.tune.space.mutate`). With the cost model (the
default), each round draws ``pool_factor`` times more candidates than it measures,
scores them all by their lowered IR's features (:mod:`tilelang.tune.cost_model`,
retrained after every batch) and measures the best-scored ones plus a few random ones
(``explore``). Each batch is built -- and its candidates' features extracted -- in
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
from tilelang.tune.features import candidate_features
from tilelang.tune.flop import estimate_flop
from tilelang.tune.progress import Progress, save_plot, summary_table
from tilelang.tune.runner import Measurer, _only_prim_func
from tilelang.tune.space import apply_space, mutate, resolve_space
from tilelang.tune.trace_json import replay, trace_to_json
from tilelang.tune.workload import as_module, workload_hash

#: parents of the evolutionary step: the best this many traces
TOP_K = 8
#: draws per wanted candidate before a batch gives up (spaces can be small)
MAX_DRAWS_PER_CANDIDATE = 40
#: with the cost model: candidates scored per candidate measured
POOL_FACTOR = 8
#: with the cost model: the share of each batch chosen at random, not by score
EXPLORE = 0.2


def tune_tir(mod, target="llvm", space="auto", max_trials: int = 64, seed: int = 0,
             work_dir=None, executor=None, num_trials_per_iter: int = 16,
             number: int = 1, repeat: int = 5, min_repeat_ms: float = 10.0,
             progress: bool = True, plot=None, stream=None, cost_model="auto",
             pool_factor: int = POOL_FACTOR,
             task_name: str | None = None) -> JSONDatabase:  # fmt: skip
    """Tune ``mod`` (one prim_func) for ``target``; returns the database.

    ``space`` is ``space(sch) -> sch`` drawing its choices with the sampling
    primitives, or ``"auto"`` (the target's generic space, CPU or CUDA). Tuning for
    cuda measures on an NVIDIA GPU; without one it raises BuildError. ``max_trials`` candidates are
    measured in all, counting the records ``work_dir``'s database already holds for
    this workload and target (a second call with the same workload measures nothing).
    ``executor`` is any ``concurrent.futures.Executor`` for the builds (default: a
    local process pool). ``plot`` names a PNG of the best-so-far curve; ``task_name``
    labels the summary (default: the function's name).
    ``cost_model``: ``"auto"`` (LightGBM, or NumPy without it), ``"lightgbm"``,
    ``"numpy"``, a :class:`~tilelang.tune.cost_model.CostModel`, or None for the plain
    random/evolutionary search; ``pool_factor`` candidates are scored per one measured.
    Example::

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
    model = _cost_model(cost_model, seed)
    search = _Search(mod, target_text, space_fn, database, seed, model, pool_factor)
    flop = estimate_flop(mod)
    bar = Progress(max_trials, flop, stream, enabled=progress)
    if search.trials < max_trials:
        _require_device(as_target(target))
        measurer = Measurer(mod, target_text, seed, number, repeat, min_repeat_ms)
        own_executor = executor is None
        pool = executor or _default_executor(num_trials_per_iter)
        try:
            search.warm_start(pool)
            while search.trials < max_trials:
                batch = search.draw(min(num_trials_per_iter, max_trials - search.trials), pool)
                if not batch:
                    break  # the space has nothing new to offer
                search.run_batch(batch, pool, measurer, flop, bar)
        finally:
            if own_executor:
                pool.shutdown(wait=True)
    bar.update(search.trials, search.best_sec())
    bar.close()
    if progress:
        table = summary_table(task_name or func_name, flop, search.best_sec(), search.trials)
        print(table, file=bar.stream)
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


def _cost_model(spec, seed):
    from tilelang.tune.cost_model import CostModel

    if spec is None or isinstance(spec, CostModel):
        return spec
    return CostModel(spec, seed)


class _Search:
    """The state of one tuning run: known traces, the records so far, the random state,
    and the cost model (None: unguided)."""

    def __init__(self, mod, target, space, database, seed, model=None, pool_factor=POOL_FACTOR):
        self.mod, self.target, self.space, self.database = mod, target, space, database
        self.workload = workload_hash(mod)
        self.rng = random.Random(seed)
        self.records = database.records(self.workload, target)
        self.seen = {_trace_key(r.trace) for r in self.records}
        self.trials = len(self.records)
        self.model, self.pool_factor = model, max(1, pool_factor)

    def best_sec(self) -> float:
        return min((r.latency for r in self.records), default=math.inf)

    def latencies(self) -> list[float]:
        return [r.latency for r in self.records]

    def warm_start(self, pool) -> None:
        """Train the model on what the database already holds for this workload."""
        if self.model is None or not self.records:
            return
        texts = []
        for record in self.records:
            try:
                texts.append(replay(self.mod, record.as_trace()).mod.script())
            except (ScheduleError, TileLangError):
                texts.append(None)
        features = _features(pool, texts)
        self.model.update(features, [r.latency for r in self.records])

    def draw(self, count: int, pool=None) -> list:
        """Up to ``count`` new candidates ``(schedule, trace data, text, features)``;
        scored by the model, when it is trained, among ``pool_factor`` times more."""
        guided = self.model is not None and self.model.trained and pool is not None
        candidates = self._sample(count * self.pool_factor if guided else count)
        if not guided:
            chosen = candidates
        else:
            features = _features(pool, [text for _, _, text in candidates])
            scores = self.model.predict(features)
            order = sorted(range(len(candidates)), key=lambda i: -scores[i])
            explore = int(round(count * EXPLORE))
            picked = order[: count - explore]
            rest = order[count - explore :]
            picked += self.rng.sample(rest, min(explore, len(rest)))
            chosen = [candidates[i] + (features[i],) for i in picked]
        batch = []
        for item in chosen:
            self.seen.add(_trace_key(item[1]))
            batch.append(item if len(item) == 4 else item + (None,))
        return batch

    def _sample(self, count: int) -> list:
        """Up to ``count`` candidates ``(schedule, trace data, text)`` not seen yet."""
        ranked = sorted(self.records, key=lambda r: r.latency)[:TOP_K]
        parents = [r.as_trace() for r in ranked if math.isfinite(r.latency)]
        batch, keys = [], set()
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
            if key in self.seen or key in keys:
                continue
            keys.add(key)
            batch.append((sch, data, sch.mod.script()))
        return batch

    def run_batch(self, batch, pool, measurer, flop, bar) -> None:
        futures = [pool.submit(build_candidate, text, self.target) for _, _, text, _ in batch]
        missing = [i for i, item in enumerate(batch) if item[3] is None]
        if self.model is not None and missing:
            computed = _features(pool, [batch[i][2] for i in missing])
            batch = list(batch)
            for i, f in zip(missing, computed):
                batch[i] = batch[i][:3] + (f,)
        results = [f.result() for f in futures]  # every build ends before any timing
        new = []
        for (_, data, text, features), built in zip(batch, results):
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
            new.append((features, record.latency))
            self.trials += 1
            bar.update(self.trials, self.best_sec())
        if self.model is not None:
            self.model.update([f for f, _ in new], [lat for _, lat in new])


def _features(pool, texts) -> list:
    """Features of each candidate text (None for a text that is None or does not
    lower), extracted on the executor."""
    futures = [None if t is None else pool.submit(candidate_features, t) for t in texts]
    return [None if f is None else f.result() for f in futures]


def _trace_key(data) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()

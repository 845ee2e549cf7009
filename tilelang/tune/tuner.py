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
import statistics
import sys
import tempfile

import attrs

import tilelang
from tilelang.errors import ArgumentError, BuildError, ScheduleError, TileLangError
from tilelang.target import as_target
from tilelang.tune.builder import build_candidate
from tilelang.tune.cost_model import kendall_tau
from tilelang.tune.database import JSONDatabase, make_record
from tilelang.tune.features import candidate_features
from tilelang.tune.flop import estimate_flop
from tilelang.tune.progress import Progress, save_plot
from tilelang.tune.report import task_table
from tilelang.tune.runner import Measurer, _only_prim_func, check_clock
from tilelang.tune.screen import Screen, decision_key, sampling_steps
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
#: with the cost model: candidates screened by their decisions per round
POPULATION = 2048
#: ``confirm``: rounds of side-by-side timing of the finalists
CONFIRM_ROUNDS = 3


def tune_tir(mod, target="llvm", space="auto", max_trials: int = 64, seed: int = 0,
             work_dir=None, executor=None, num_trials_per_iter: int = 16,
             number: int = 1, repeat: int = 5, min_repeat_ms: float = 10.0,
             progress: bool = True, plot=None, stream=None, cost_model="auto",
             pool_factor: int = POOL_FACTOR, population: int = POPULATION,
             task_name: str | None = None, confirm: int = 0,
             clock: str = "wall") -> JSONDatabase:  # fmt: skip
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
    random/evolutionary search. With it, each round screens about ``population``
    mutants by their decisions (:mod:`tilelang.tune.screen`), builds the best-screened
    ``pool_factor`` candidates per one measured and ranks those by their lowered IR
    (``population=0``: no screen; the pool is drawn from the space and ranked by IR).
    ``confirm=N`` times the N best and the default build's schedule again side by side
    at the end (:meth:`TaskTuner.confirm`; useful on a loaded machine, where trials
    timed at different moments do not compare). ``clock="cpu"`` times candidates by
    their CPU time instead of the wall clock, for a one-thread target (``"llvm
    -num-cores=1"``): preemptions by other work on a shared machine do not count.
    Example::

        db = tune_tir(mod, "llvm", space="auto", max_trials=64, work_dir="logs")
        best = compile_tir(db, mod, "llvm")
    """
    if max_trials < 0 or num_trials_per_iter < 1:
        raise ArgumentError("max_trials must be >= 0 and num_trials_per_iter >= 1")
    database = JSONDatabase(work_dir if work_dir is not None else tempfile.mkdtemp("-tune"))
    task = TaskTuner(mod, target, database, space=space, seed=seed, cost_model=cost_model,
                     pool_factor=pool_factor, number=number, repeat=repeat,
                     min_repeat_ms=min_repeat_ms, name=task_name,
                     population=population, clock=clock)  # fmt: skip
    bar = Progress(max_trials, task.flop, stream, enabled=progress)
    if task.trials < max_trials:
        own_executor = executor is None
        pool = executor or _default_executor(num_trials_per_iter)
        try:
            while task.trials < max_trials and not task.exhausted:
                task.step(min(num_trials_per_iter, max_trials - task.trials), pool, bar)
            task.confirm(confirm)
        finally:
            if own_executor:
                pool.shutdown(wait=True)
    bar.update(task.trials, task.best_sec())
    bar.close()
    if progress:
        print(task_table([task.summary()]), file=bar.stream)
    if plot is not None:
        save_plot(plot, task.latencies(), task.flop)
    return database


class TaskTuner:
    """One task's search, run a batch at a time (``tune_tir`` runs one; the task
    scheduler of :mod:`tilelang.tune.tune_model` interleaves several).

    ``weight`` is how many times the model calls the task's function; ``name`` labels
    its rows in the progress and the final table."""

    def __init__(self, mod, target, database, space="auto", seed: int = 0,
                 cost_model="auto", pool_factor: int = POOL_FACTOR, number: int = 1,
                 repeat: int = 5, min_repeat_ms: float = 10.0, name: str | None = None,
                 weight: int = 1, population: int = POPULATION,
                 clock: str = "wall"):  # fmt: skip
        self.mod = as_module(mod)
        self.target = as_target(target)
        check_clock(clock, self.target)
        self.clock = clock
        func_name, _ = _only_prim_func(self.mod)
        self.name, self.weight = name or func_name, weight
        self.flop = estimate_flop(self.mod)
        self.seed, self.timing = seed, (number, repeat, min_repeat_ms)
        model = _cost_model(cost_model, seed)
        space_fn = resolve_space(space, target)
        # the screen: a second model, over the candidates' decisions
        screen = None if model is None else Screen(_cost_model(model.backend, seed))
        self.search = _Search(self.mod, str(self.target), space_fn, database, seed, model,
                              pool_factor, population, screen)  # fmt: skip
        self.measurer = None
        self.exhausted = False  # the space had nothing new to offer

    @property
    def trials(self) -> int:
        return self.search.trials

    def best_sec(self) -> float:
        return self.search.best_sec()

    def latencies(self) -> list[float]:
        return self.search.latencies()

    def step(self, count: int, pool, bar=None) -> int:
        """Draw, build and measure up to ``count`` new candidates; returns how many
        were measured (0: the space is exhausted). ``bar.update(trials, best)`` is
        called after each measurement."""
        if self.measurer is None:
            _require_device(self.target)
            number, repeat, min_repeat_ms = self.timing
            self.measurer = Measurer(self.mod, str(self.target), self.seed, number, repeat,
                                     min_repeat_ms, clock=self.clock)  # fmt: skip
            self.search.warm_start(pool)
        batch = self.search.draw(count, pool)
        if not batch:
            self.exhausted = True
            return 0
        self.search.run_batch(batch, pool, self.measurer, self.flop, bar)
        return len(batch)

    def confirm(self, count: int, rounds: int = CONFIRM_ROUNDS) -> int:
        """Time the ``count`` best traces again, with the default build's (when it was
        measured), side by side: ``rounds`` rounds that each time every finalist once
        in turn, so all of them see the same machine load. Each finalist gets a
        re-measured record holding its per-round timings and ranks by it from now on
        (:meth:`~tilelang.tune.database.JSONDatabase.query_best`); a trial timed during
        a quiet moment no longer beats a faster schedule timed under load. Nothing
        happens before this run has measured something. Returns the finalists timed."""
        search = self.search
        if count <= 0 or self.measurer is None:
            return 0
        trials = sorted(
            (r for r in search.records if not r.remeasured and math.isfinite(r.latency)),
            key=lambda r: r.latency,
        )
        finalists, keys = [], set()
        for record in trials:  # the best ``count`` traces by their trials' timings
            if len(finalists) < count and _trace_key(record.trace) not in keys:
                finalists.append(record)
                keys.add(_trace_key(record.trace))
        if search.default_key is not None and search.default_key not in keys:
            finalists += [
                r for r in search.records
                if _trace_key(r.trace) == search.default_key and math.isfinite(r.latency)
            ][:1]  # fmt: skip
        libs = []
        for record in finalists:
            text = replay(self.mod, record.as_trace()).mod.script()
            libs.append(tilelang.build(tilelang.parse(text), target=search.target))
        timings = [[] for _ in finalists]
        for _ in range(rounds):
            for lib, out in zip(libs, timings):
                out.append(statistics.median(self.measurer.time(lib, self.timing[1])))
        for record, out in zip(finalists, timings):
            again = attrs.evolve(record, run_secs=tuple(out), remeasured=True)
            search.database.commit(again)
            search.records.append(again)
        return len(finalists)

    def summary(self) -> dict:
        """The figures of the final table: name, FLOP, weight, best seconds, trials,
        the cost model's mean Kendall tau over the batches it chose (None when it
        chose none) and the candidates the models scored per guided round (mean;
        None without one)."""
        taus, scored = self.search.model_taus, self.search.scored
        return {
            "name": self.name, "flop": self.flop, "weight": self.weight,
            "best_sec": self.best_sec(), "trials": self.trials,
            "model_tau": sum(taus) / len(taus) if taus else None,
            "scored": round(sum(scored) / len(scored)) if scored else None,
        }  # fmt: skip


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

    def __init__(self, mod, target, space, database, seed, model=None, pool_factor=POOL_FACTOR,
                 population=POPULATION, screen=None):  # fmt: skip
        self.mod, self.target, self.space, self.database = mod, target, space, database
        self.workload = workload_hash(mod)
        self.rng = random.Random(seed)
        self.records = database.records(self.workload, target)
        self.seen = {_trace_key(r.trace) for r in self.records}
        self.trials = sum(1 for r in self.records if not r.remeasured)
        self.model, self.pool_factor = model, max(1, pool_factor)
        self.predicted: dict = {}  # trace key -> the model's score, for measured picks
        self.model_taus: list[float] = []  # per guided batch: predicted vs measured order
        self.default_offered = False
        self.default_key = None  # the first-choice candidate's trace key, once drawn
        self.screen, self.population = screen, population
        self.scored: list[int] = []  # per guided round: candidates the models scored
        self.seen_decisions = {_decision_key(r.trace) for r in self.records}

    def best_sec(self) -> float:
        if any(r.remeasured for r in self.records):  # finalists rank as re-measured
            best = self.database.query_best(self.workload, self.target)
            return best[0].latency if best else math.inf
        return min((r.latency for r in self.records), default=math.inf)

    def latencies(self) -> list[float]:
        """Per trial (re-measurements are not trials), its latency."""
        return [r.latency for r in self.records if not r.remeasured]

    def warm_start(self, pool) -> None:
        """Train the model on what the database already holds for this workload."""
        trials = [r for r in self.records if not r.remeasured]
        if self.model is None or not trials:
            return
        if self.screen is not None:
            self.screen.update([r.trace for r in trials], [r.latency for r in trials])
        texts = []
        for record in trials:
            try:
                texts.append(replay(self.mod, record.as_trace()).mod.script())
            except (ScheduleError, TileLangError):
                texts.append(None)
        features = _features(pool, texts)
        self.model.update(features, [r.latency for r in trials])

    def draw(self, count: int, pool=None) -> list:
        """Up to ``count`` new candidates ``(schedule, trace data, text, features)``;
        scored by the model, when it is trained, among ``pool_factor`` times more."""
        guided = self.model is not None and self.model.trained and pool is not None
        first = self._default_candidate()
        count -= len(first)
        if guided and self.screen is not None and self.screen.trained and self.population > 0:
            candidates = self._screened(count)
        else:
            candidates = self._sample(count * self.pool_factor if guided else count)
            if guided:
                self.scored.append(len(candidates))
        if not guided or not candidates:
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
            for i in picked:
                self.predicted[_trace_key(candidates[i][1])] = float(scores[i])
        batch = []
        for item in first + chosen:
            self.seen.add(_trace_key(item[1]))
            self.seen_decisions.add(_decision_key(item[1]))
            batch.append(item if len(item) == 4 else item + (None,))
        return batch

    def _default_candidate(self) -> list:
        """The space's candidate that takes every draw's first choice -- the default
        build's schedule for spaces built on the rules (``first_choice_is_default``)
        -- once per run, unless it was measured already."""
        if self.default_offered or not getattr(self.space, "first_choice_is_default", False):
            return []
        self.default_offered = True
        try:
            sch = apply_space(self.mod, self.space, self.rng.randrange(1, 2**31), rest=0)
        except ScheduleError:
            return []
        data = trace_to_json(sch.trace)
        self.default_key = _trace_key(data)
        if self.default_key in self.seen:
            return []
        return [(sch, data, sch.mod.script())]

    def _screened(self, count: int) -> list:
        """Candidates for a guided round: ``count`` fresh draws (random and mutations,
        as unguided) plus the best of about ``population`` decision-level mutants of
        the best traces and of those draws, scored by the screen and built with their
        decisions forced -- ``count * pool_factor`` in all, for the IR model to rank."""
        fresh = self._sample(count)
        ranked = sorted((r for r in self.records if math.isfinite(r.latency)),
                        key=lambda r: r.latency)[:TOP_K]  # fmt: skip
        parents = [r.trace for r in ranked] + [data for _, data, _ in fresh]
        wanted = count * (self.pool_factor - 1)
        proposals, screened = self.screen.propose(
            parents, wanted * 2, self.population, self.seen_decisions, self.rng
        )
        self.scored.append(screened + len(fresh))
        out, keys = list(fresh), {_trace_key(data) for _, data, _ in fresh}
        for _, decisions in proposals:
            if len(out) - len(fresh) >= wanted:
                break
            try:
                sch = apply_space(self.mod, self.space, self.rng.randrange(1, 2**31), decisions)
            except ScheduleError:
                continue
            data = trace_to_json(sch.trace)
            key = _trace_key(data)
            if key not in self.seen and key not in keys:
                keys.add(key)
                out.append((sch, data, sch.mod.script()))
        return out

    def _sample(self, count: int) -> list:
        """Up to ``count`` candidates ``(schedule, trace data, text)`` not seen yet."""
        ranked = sorted(self.records, key=lambda r: r.latency)[:TOP_K]
        parents = [r.as_trace() for r in ranked if math.isfinite(r.latency)]
        batch, keys = [], set()
        for _ in range(max(0, count) * MAX_DRAWS_PER_CANDIDATE):
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
            if bar is not None:
                bar.update(self.trials, self.best_sec(), self.scored[-1] if self.scored else None)
        self._score_model([self.predicted.pop(_trace_key(item[1]), None) for item in batch],
                          [lat for _, lat in new])  # fmt: skip
        if self.model is not None:
            self.model.update([f for f, _ in new], [lat for _, lat in new])
        if self.screen is not None:
            self.screen.update([item[1] for item in batch], [lat for _, lat in new])

    def _score_model(self, scores, latencies) -> None:
        """How well the model ordered this batch: Kendall's tau of its scores against
        the measured throughput (failures 0), over the candidates it picked."""
        pairs = [(s, 1.0 / lat if math.isfinite(lat) and lat > 0 else 0.0)
                 for s, lat in zip(scores, latencies) if s is not None]  # fmt: skip
        if len(pairs) >= 3:
            self.model_taus.append(kendall_tau([p[0] for p in pairs], [p[1] for p in pairs]))


def _features(pool, texts) -> list:
    """Features of each candidate text (None for a text that is None or does not
    lower), extracted on the executor."""
    futures = [None if t is None else pool.submit(candidate_features, t) for t in texts]
    return [None if f is None else f.result() for f in futures]


def _decision_key(data) -> str:
    return decision_key([step["decision"] for step in sampling_steps(data)])


def _trace_key(data) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()

"""Automatic scheduling of the 1024^3 float32 matmul and bench_default's conv2d on llvm,
next to NumPy, the default build and the hand schedule, timed side by side at the end.

    python benchmarks/bench_tune.py [--workloads matmul conv2d] [--trials 64 256]
                                    [--size 1024] [--models none auto] [--spaces auto]
                                    [--populations 2048] [--threads N] [--rounds 5]
                                    [--clock auto|wall|cpu] [--confirm 3]
                                    [--work-dir DIR] [--plot curve.png]

For each workload, space (``auto``: the default rules' space or the generic one,
starting from the default build; ``rules``; ``generic``), cost model (``none``: random
+ evolutionary search; ``auto``: the learned model, screening thousands of candidates
a round by their decisions and ranking the best by their lowered IR; ``--populations
0 2048`` compares the model without the screen, ranking ``pool_factor`` x fewer
candidates, with it) and trial budget (cumulative: the 256-trial run continues the
64-trial one's database), tunes, then
times **side by side**: every tuned best, the default build (``tilelang.build`` with the
rules), the hand schedule (samples/matmul_1024_tuned.tir, matmul 1024 only), NumPy
(``a @ b``; conv2d: the workload's NumPy reference) and PyTorch when installed, in
``--rounds`` interleaved rounds (each contender timed once per round, median of 3 runs)
so that every one sees the same machine load; the table gives the median over rounds,
the spread (max/min over rounds), GFLOP/s, % of the hand schedule's speed and speed
relative to NumPy. ``--threads N`` pins everything to N threads (the tuned and
default kernels are built for ``llvm -num-cores=N``; NumPy's BLAS and PyTorch get
N threads): ``--threads 1`` is the quiet, reproducible measure of the goal (at 64
trials the 1024^3 matmul reaches >= 85% of the hand schedule's speed and >= NumPy's),
all the more as one thread is timed by its CPU time (``--clock auto``: ``cpu`` with
``--threads 1``, else ``wall``; ``cpu`` both while tuning, ``tune_tir(clock="cpu")``,
and side by side), which the preemptions of a shared machine do not inflate.
``--confirm N`` re-times the N best candidates of each run side by side with the
default build's schedule before picking the best (0: off).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from timing import median_time

import tilelang
from tilelang.testing import default_workloads
from tilelang.testing.workloads import matmul
from tilelang.tune import compile_tir, tune_tir

HERE = Path(__file__).resolve().parent
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                    "TILELANG_NUM_THREADS")  # fmt: skip
#: the goal at 64 trials (matmul 1024^3): this share of the hand schedule's speed
GOAL_OF_HAND = 0.85


def pin_threads(threads: int | None) -> None:
    """Run this script again with every thread pool at ``threads`` (NumPy's BLAS reads
    its thread count when it is imported, so the variables must be set before)."""
    if threads is None or os.environ.get("BENCH_TUNE_THREADS") == str(threads):
        return
    env = {**os.environ, **{k: str(threads) for k in THREAD_VARIABLES}}
    env["BENCH_TUNE_THREADS"] = str(threads)
    env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    os.execve(sys.executable, [sys.executable, *sys.argv], env)


class Case:
    """A workload: its module, arguments, reference result and flop count, and the
    contenders that are not tuned (name -> function of the arguments)."""

    def __init__(self, name, mod, args, expected, flop, others):
        self.name, self.mod, self.args, self.expected = name, mod, args, expected
        self.flop, self.others = flop, others


def matmul_case(n: int, target: str) -> Case:
    rng = np.random.default_rng(0)
    a, b = (rng.uniform(-1, 1, (n, n)).astype("float32") for _ in range(2))
    c = np.zeros((n, n), "float32")
    others = {}
    hand_path = HERE.parent / "samples" / "matmul_1024_tuned.tir"
    if n == 1024 and hand_path.exists():
        others["hand schedule"] = tilelang.build(tilelang.parse_file(hand_path), target)["matmul"]
    others["numpy"] = lambda a, b, c: np.matmul(a, b, out=c)
    torch_op = _torch(lambda torch, a, b: torch.mm(a, b))
    if torch_op is not None:
        others["pytorch"] = torch_op
    return Case(f"matmul {n}^3", matmul(n), [a, b, c], a @ b, 2 * n**3, others)


def conv2d_case(target: str) -> Case:
    workload = default_workloads.conv2d()
    args = workload.arguments()
    reference = workload.reference
    others = {"numpy": lambda x, w, y: reference(x, w)}
    torch_op = _torch(lambda torch, x, w: torch.nn.functional.conv2d(x, w, padding=1))
    if torch_op is not None:
        others["pytorch"] = torch_op
    expected = reference(*args[:-1])
    return Case("conv2d 1x64x56x56, 64 3x3", tilelang.parse(workload.tir), args, expected,
                workload.flops, others)  # fmt: skip


def _torch(op):
    try:
        import torch
    except ImportError:
        return None
    return lambda *arrays: op(torch, *map(torch.from_numpy, arrays[:-1]))


def tune_case(case, target, spaces, models, trials, work_root, args) -> dict:
    """Tune ``case`` for every (space, model, population, budget); returns label ->
    kernel."""
    kernels = {}
    runs = [(s, m, p) for s in spaces for m in models
            for p in (args.populations if m != "none" else [0])]  # fmt: skip
    for space, model, population in runs:
        for budget in sorted(trials):
            kernels.update(tune_one(case, target, space, model, population, budget,
                                    work_root, args))  # fmt: skip
    kernels["default build (the rules)"] = _kernel(case.mod, target)
    return kernels


def tune_one(case, target, space, model, population, budget, work_root, args) -> dict:
    """One tuning run (continuing its folder's database); label -> best kernel."""
    screened = "" if model == "none" else f" x{population}"
    folder = f"{case.name.split()[0]}-{space}-{model}{screened.strip()}"
    start = time.perf_counter()
    db = tune_tir(case.mod, target, space=space, max_trials=budget, plot=args.plot,
                  work_dir=work_root / folder, cost_model=None if model == "none" else model,
                  population=population, confirm=args.confirm, clock=args.clock)  # fmt: skip
    spent = time.perf_counter() - start
    kernel = _kernel(compile_tir(db, case.mod, target), target)
    label = f"tuned: {space}, {budget} trials, model {model}{screened} ({spent:.0f} s)"
    return {label: kernel}


def _kernel(mod, target):
    """The one prim_func of ``mod`` built for ``target``."""
    return tilelang.build(mod, target)[next(iter(mod.functions))]


def side_by_side(case, kernels, rounds: int, clock) -> dict:
    """Every contender timed once per round, ``rounds`` rounds; label -> per-round
    medians. Each result is checked against the reference first."""
    contenders = {**kernels, **case.others}
    for label, fn in kernels.items():
        out = case.args[-1]
        out.fill(0)
        fn(*case.args)
        np.testing.assert_allclose(out, case.expected, rtol=1e-3, atol=1e-3, err_msg=label)
    times = {label: [] for label in contenders}
    for _ in range(rounds):
        for label, fn in contenders.items():
            times[label].append(median_time(lambda f=fn: f(*case.args), repeat=3, clock=clock))
    return times


def report(case, times, goal_label=None) -> None:
    print(f"\n{case.name} float32, side by side ({len(next(iter(times.values())))} rounds); "
          f"load average now: {os.getloadavg()}")  # fmt: skip
    medians = {label: statistics.median(t) for label, t in times.items()}
    hand = medians.get("hand schedule")
    numpy = medians["numpy"]
    for label, seconds in medians.items():
        spread = max(times[label]) / min(times[label])
        gflops = case.flop / seconds / 1e9
        line = (f"{label:<58} {seconds * 1e3:9.3f} ms (spread {spread:4.2f}) "
                f"{gflops:7.1f} GFLOP/s  {numpy / seconds:5.2f}x NumPy")  # fmt: skip
        if hand is not None:
            line += f"  {hand / seconds:6.1%} of hand"
        print(line)
    if goal_label is not None and hand is not None and goal_label in medians:
        ours = medians[goal_label]
        met = hand / ours >= GOAL_OF_HAND and ours <= numpy
        print(f"goal (>= {GOAL_OF_HAND:.0%} of the hand schedule and >= NumPy) for "
              f"'{goal_label}': {hand / ours:.1%} of hand, {numpy / ours:.2f}x NumPy -> "
              f"{'met' if met else 'NOT met'}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", nargs="+", default=["matmul", "conv2d"],
                        choices=["matmul", "conv2d"])  # fmt: skip
    parser.add_argument("--trials", type=int, nargs="+", default=[64, 256])
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--models", nargs="+", default=["none", "auto"])
    parser.add_argument("--spaces", nargs="+", default=["auto"],
                        choices=["auto", "rules", "generic"])  # fmt: skip
    parser.add_argument(
        "--populations",
        type=int,
        nargs="+",
        default=[2048],
        help="candidates screened per round with the model (0: no screen)",
    )
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--clock", default="auto", choices=["auto", "wall", "cpu"])
    parser.add_argument("--confirm", type=int, default=3)
    parser.add_argument("--work-dir", default=None)
    parser.add_argument("--plot", default=None)
    args = parser.parse_args()
    pin_threads(args.threads)
    target = "llvm" if args.threads is None else f"llvm -num-cores={args.threads}"
    if args.clock == "auto":
        args.clock = "cpu" if args.threads == 1 else "wall"
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    work_root = Path(args.work_dir or tempfile.mkdtemp(prefix="bench-tune-"))
    print(f"load average at start: {os.getloadavg()}; {os.cpu_count()} cores; target {target}; "
          f"{args.clock} clock")  # fmt: skip
    for name in args.workloads:
        case = matmul_case(args.size, target) if name == "matmul" else conv2d_case(target)
        kernels = tune_case(case, target, args.spaces, args.models, args.trials, work_root, args)
        guided = [label for label in kernels if " 64 trials, model auto x" in label]
        goal = next((label for label in guided if " x0 " not in label), None)
        report(case, side_by_side(case, kernels, args.rounds, clock), goal)


if __name__ == "__main__":
    main()

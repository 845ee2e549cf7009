"""Random search over a stochastic schedule (SEED_PROGRAMS §3).

``tilelang.tune.stochastic_schedule_mm`` samples how to tile the ``j`` loop of a
128x128x128 matmul (``tilelang.testing.workloads.matmul(128)``). Each seed gives one
sample; every sample is built (default target ``llvm``), checked against NumPy and
timed with ``time_evaluator``. The best one's time and trace are printed; the trace
shows the sampled ``decision=[...]`` and replays to the same program.

    python samples/random_search.py [--samples 8] [--target llvm|c|python]
"""

from __future__ import annotations

import argparse

import numpy as np

import tilelang
from tilelang import tir
from tilelang.ir import assert_structural_equal
from tilelang.testing.workloads import matmul
from tilelang.tune import stochastic_schedule_mm


def measure(mod, target, a, b, expected) -> float:
    """Mean seconds per call of ``main``; the result is checked first."""
    lib = tilelang.build(mod, target=target)
    c = np.zeros((128, 128), "float32")
    lib["main"](a, b, c)
    np.testing.assert_allclose(c, expected, rtol=1e-4, atol=1e-4)
    return lib.time_evaluator("main", number=5, repeat=3)(a, b, c).mean


def random_search(mod, target: str, samples: int, seed: int = 0):
    """``(best seconds, best schedule, baseline seconds)`` over ``samples`` seeds."""
    rng = np.random.default_rng(seed)
    a = rng.random((128, 128), dtype="float32")
    b = rng.random((128, 128), dtype="float32")
    expected = a @ b
    baseline = measure(mod, target, a, b, expected)
    best, seen = None, {}
    for sample_seed in range(seed, seed + samples):
        sch = stochastic_schedule_mm(tir.Schedule(mod, seed=sample_seed))
        decision = next(iter(sch.trace.decisions.values()))
        if tuple(decision) in seen:  # the same program: no need to build it again
            print(
                f"seed {sample_seed}: j split {decision}  (seen with seed {seen[tuple(decision)]})"
            )
            continue
        seen[tuple(decision)] = sample_seed
        seconds = measure(sch.mod, target, a, b, expected)
        print(f"seed {sample_seed}: j split {decision}  {seconds * 1e3:.3f} ms")
        if best is None or seconds < best[0]:
            best = (seconds, sch)
    return best[0], best[1], baseline


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=8, help="how many seeds to try")
    parser.add_argument("--target", default="llvm", help="build target (default llvm)")
    args = parser.parse_args(argv)
    mod = matmul(128)
    best, sch, baseline = random_search(mod, args.target, args.samples)
    print(f"unscheduled: {baseline * 1e3:.3f} ms")
    print(f"best:        {best * 1e3:.3f} ms ({baseline / best:.1f}x)")
    print(sch.trace)
    # the printed trace is the whole recipe: replaying it rebuilds the best program
    replayed = sch.trace.apply_to_schedule(tir.Schedule(mod))
    assert_structural_equal(replayed.mod, sch.mod)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

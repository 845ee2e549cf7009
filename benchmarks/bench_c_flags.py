"""The C backend's default builds under variants of the flags added to generated C
(``generated_c_flags()``, today gcc workarounds), side by side.

    python benchmarks/bench_c_flags.py [--repeat 5] [--only NAME,...] [--scale 1.0]

Each default workload (tilelang/testing/default_workloads.py, default rules, target
``c``, one thread) is built once per variant; the numbers of every build are checked
against NumPy, then the builds are timed interleaved (round-robin, ``repeat`` rounds,
median per variant) so machine noise falls on all of them alike. Ratios are each
variant's time over the first variant's (the flags the backend uses today); ``=`` marks
a library byte-identical to the first variant's (any difference there is not the
flags': a cached conv2d library once ran 3.5x slower than a byte-identical copy, and
at normal speed once the file was rewritten, so new page-cache pages backed it).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np
from timing import SETTLE_S

import tilelang
from tilelang.runtime import compiler
from tilelang.testing.default_workloads import all_workloads

#: the variants compared: name -> flags appended to SHARED_FLAGS for generated C
VARIANTS = {
    "current": compiler.generated_c_flags(),
    "none (gcc default)": (),
    "-fno-trapping-math only": compiler.GENERATED_C_FLAGS,
    "-fno-tree-loop-if-convert only": compiler.OLD_GCC_FLAGS,
}


def build_with(flags, workload):
    """``workload``'s default build (the module) for target c with ``flags`` as the
    generated-C flags (the build module reads them at each build)."""
    build_module = sys.modules["tilelang.backends.c.build"]
    saved = build_module.generated_c_flags
    build_module.generated_c_flags = lambda: tuple(flags)
    try:
        return tilelang.build(tilelang.parse(workload.tir), "c -num-cores=1")
    finally:
        build_module.generated_c_flags = saved


def interleaved_medians(functions, args, repeat):
    """Per function, the median over ``repeat`` round-robin rounds of one call's time."""
    times = [[] for _ in functions]
    for fn in functions:
        fn(*args)
    time.sleep(SETTLE_S)
    for _ in range(repeat):
        for index, fn in enumerate(functions):
            start = time.perf_counter()
            fn(*args)
            times[index].append(time.perf_counter() - start)
    return [statistics.median(t) for t in times]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", default="mm_relu,conv2d,softmax,matmul,depthwise")
    parser.add_argument("--scale", type=float, default=1.0)
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import tilelang.backends.c  # noqa: F401  (loads tilelang.backends.c.build)

    only = {n for n in args.only.split(",") if n}
    names = list(VARIANTS)
    print(f"-- target c, 1 thread, median of {args.repeat} interleaved rounds")
    print(f"{'':<12}" + "".join(f"{n:>30}" for n in names))
    for workload in all_workloads(args.scale):
        if only and workload.name not in only:
            continue
        data = workload.arguments()
        modules = [build_with(VARIANTS[n], workload) for n in names]
        functions = [m[workload.name] for m in modules]
        binaries = [m.backend_module.library_path.read_bytes() for m in modules]
        for fn in functions:
            out = [a.copy() for a in data]
            fn(*out)
            np.testing.assert_allclose(
                out[-1], workload.reference(*data[:-1]), rtol=1e-3, atol=1e-3
            )
        medians = interleaved_medians(functions, data, args.repeat)
        cells = [
            f"{m * 1e3:9.3f} ms ({m / medians[0]:4.2f}x){'=' if b == binaries[0] else ' '}"
            for m, b in zip(medians, binaries)
        ]
        print(f"{workload.name:<12}" + "".join(f"{c:>30}" for c in cells), flush=True)


if __name__ == "__main__":
    main()

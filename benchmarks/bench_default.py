"""Unscheduled programs built with the default options (the CPU schedule rules on) next
to gcc -O3 -march=native on the same naive C loops, NumPy and PyTorch (when installed).

    python benchmarks/bench_default.py [--threads 1,2] [--repeat 5] [--only NAME,...]
                                       [--target llvm|c]

Rows: mm_relu 128, conv2d NCHW 1x64x56x56 with 64 3x3 filters, row softmax 4096x1024,
matmul 1024^3, batch matmul, depthwise conv, layer norm, transpose, dense (a batch-1
linear layer 4096 -> 1024: X @ W.T)
(tilelang/testing/default_workloads.py), and the SEED §5 MLP through the VM
(benchmarks/bench_mlp.py's model). Each time is the median of ``repeat`` runs
(timing.py). Ratios are tilelang's time over the other's (below 1: tilelang faster);
"peak" is the fraction of the measured FMA peak (fma_peak.py) for that many threads.
Softmax and layer norm are compared with gcc -ffast-math, as the goal states. The naive
C is serial at every thread count. OMP_WAIT_POLICY defaults to PASSIVE (see main).

Goals on one core: convolutions and mm_relu no slower than gcc's naive C, softmax within
1.5x of gcc -ffast-math, matmul 1024^3 within 1.5x of NumPy, the MLP no slower than NumPy.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from fma_peak import measured_peak_gflops
from timing import median_time

import tilelang
from tilelang.runtime.compiler import SHARED_FLAGS, run_compiler
from tilelang.testing.default_workloads import all_workloads

HERE = Path(__file__).resolve().parent
THREAD_VARIABLES = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "TILELANG_NUM_THREADS",
)


def gcc_function(workload, work: Path, threads: int):
    """The naive C of ``workload`` compiled with gcc -O3 -march=native (and
    -ffast-math where the workload says)."""
    source = work / f"{workload.name}.c"
    source.write_text(workload.c)
    library = work / f"{workload.name}_naive.so"
    flags = ["-O3", *SHARED_FLAGS] + (["-ffast-math"] if workload.fast_math else [])
    run_compiler([*flags, "-o", str(library), str(source), "-lm"], "naive C")
    fn = getattr(ctypes.CDLL(str(library)), workload.name)
    fn.argtypes = [ctypes.c_void_p] * len(workload.shapes)
    fn.restype = None
    return lambda *arrays: fn(*(a.ctypes.data for a in arrays))


def torch_function(workload):
    try:
        import torch
    except ImportError:
        return None
    ops = {
        "matmul": lambda a, b: a @ b,
        "mm_relu": lambda a, b: torch.relu(a @ b),
        "batch_matmul": lambda a, b: torch.bmm(a, b),
        "softmax": lambda a: torch.softmax(a, 1),
        "transpose": lambda a: a.t().contiguous(),
        "dense": lambda x, w: torch.nn.functional.linear(x, w),
        "conv2d": lambda x, w: torch.nn.functional.conv2d(x, w, padding=1),
    }
    op = ops.get(workload.name)
    return None if op is None else (lambda *arrays: op(*map(torch.from_numpy, arrays[:-1])))


def row(name, seconds, flops, peak, others):
    line = f"{name:<14} {seconds * 1e3:9.3f} ms"
    line += f" {flops / seconds / 1e9 / peak:6.1%} peak" if flops else " " * 12
    for label, other in others:
        line += f"  {seconds / other:6.2f}x {label} ({other * 1e3:.3f} ms)" if other else ""
    print(line, flush=True)


def bench_workload(workload, threads, work, repeat, peak, target="llvm"):
    args = workload.arguments()
    lib = tilelang.build(tilelang.parse(workload.tir), f"{target} -num-cores={threads}")
    fn = lib[workload.name]
    fn(*args)
    np.testing.assert_allclose(args[-1], workload.reference(*args[:-1]), rtol=1e-3, atol=1e-3)
    ours = median_time(lambda: fn(*args), repeat=repeat)
    naive = gcc_function(workload, work, threads)
    gcc = median_time(lambda: naive(*args), repeat=repeat)
    ref = workload.reference
    numpy = median_time(lambda: ref(*args[:-1]), repeat=repeat)
    others = [("gcc -ffast-math" if workload.fast_math else "gcc naive", gcc), ("NumPy", numpy)]
    torch_fn = torch_function(workload)
    if torch_fn is not None:
        others.append(("PyTorch", median_time(lambda: torch_fn(*args), repeat=repeat)))
    row(workload.name, ours, workload.flops, peak, others)


def bench_mlp(threads, repeat, target="llvm"):
    """The §5 MLP with bound weights through the VM (one inference per call)."""
    sys.path.insert(0, str(HERE.parent / "samples"))
    import mlp

    from tilelang import relax

    data, weights = mlp.load_image(), mlp.make_weights()
    bound = relax.bind_params(mlp.mlp_module("linear0"), weights)
    ex = relax.build(bound, target=f"{target} -num-cores={threads}")
    run = relax.VirtualMachine(ex, tilelang.cpu())["main"]
    np.testing.assert_allclose(
        run(data).numpy(), mlp.numpy_mlp(data, **weights), rtol=1e-4, atol=1e-4
    )
    ours = median_time(lambda: run(data), number=100, repeat=repeat)
    numpy = median_time(lambda: mlp.numpy_mlp(data, **weights), number=100, repeat=repeat)
    row("mlp (VM)", ours, 0, 1, [("NumPy", numpy)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", default="", help="comma-separated workload names")
    parser.add_argument("--target", default="llvm", choices=("llvm", "c"))
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if not args.child:
        # One process per thread count: NumPy's BLAS reads its thread count at import.
        for threads in args.threads.split(","):
            env = {**os.environ, **{k: threads for k in THREAD_VARIABLES}}
            # On a shared, oversubscribed machine libgomp's spinning barriers turn each
            # parallel region into a scheduler time slice; waiting passively does not.
            env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
            command = [
                sys.executable,
                __file__,
                "--child",
                "--threads",
                threads,
                "--repeat",
                str(args.repeat),
                "--only",
                args.only,
                "--target",
                args.target,
            ]
            subprocess.run(command, env=env, check=True)
        return
    threads = int(args.threads)
    only = {n for n in args.only.split(",") if n}
    with tempfile.TemporaryDirectory() as folder:
        peak = measured_peak_gflops(threads)
        print(
            f"-- {args.target}, {threads} thread(s); FMA peak {peak:.1f} GFLOP/s; "
            f"median of {args.repeat}"
        )
        for workload in all_workloads():
            if not only or workload.name in only:
                bench_workload(workload, threads, Path(folder), args.repeat, peak, args.target)
        if not only or "mlp" in only:
            bench_mlp(threads, args.repeat, args.target)


if __name__ == "__main__":
    main()

"""tilelang's CUDA backend on the GPU next to cuBLAS / PyTorch, in one run.

    python benchmarks/bench_cuda.py [--sizes 1024 4096] [--number 10] [--repeat 3]
                                    [--tune-trials 64] [--rows 4096] [--cols 1024]

SGEMM (fp32) for each size, built with nvcc for the device's sm_XX and timed with
CUDA events:

- the SEED_PROGRAMS §6 blocking schedule (``blocking(sch, 8, 8, 8, 8, 4)``),
- the shared-memory tiled hand schedule (128x128 block tile, 16x16 threads each with
  an 8x8 register micro-tile, A/B panels of k_tile 8 or 16 fetched cooperatively),
- the default GPU schedule (``tilelang.build`` of the unscheduled matmul, see
  tilelang.schedule.rules.gpu),
- the tuned schedule (``tune_tir`` with the CUDA space, ``--tune-trials`` trials;
  0 skips it),

each checked against cuBLAS (through CuPy, else PyTorch, FP32 without TF32), with
GFLOP/s and the ratio to cuBLAS. Then the memory-bound rows, default schedules next
to PyTorch: window sum, softmax and layernorm (``--rows`` x ``--cols``). Between them,
the fp16 tensor-core GEMM rows (bench_cuda_tensor_core.py: the default WMMA schedule
next to cuBLAS HGEMM). Without a GPU it says so and exits 0.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "samples"))
sys.path.insert(0, str(Path(__file__).resolve().parent))


def _cublas():
    """``(name, to_device, matmul, timer)`` for CuPy or PyTorch, or None."""
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() > 0:

            def time_cupy(a, b, number, repeat):
                c = cupy.matmul(a, b)
                times = []
                for _ in range(repeat):
                    start, end = cupy.cuda.Event(), cupy.cuda.Event()
                    start.record()
                    for _ in range(number):
                        cupy.matmul(a, b, out=c)
                    end.record()
                    end.synchronize()
                    times.append(cupy.cuda.get_elapsed_time(start, end) / 1e3 / number)
                return min(times)

            return "cuBLAS (CuPy)", cupy.asarray, lambda a, b: cupy.asnumpy(a @ b), time_cupy
    except Exception:
        pass
    try:
        import torch

        if torch.cuda.is_available():
            torch.backends.cuda.matmul.allow_tf32 = False

            def time_torch(a, b, number, repeat):
                c = torch.mm(a, b)
                times = []
                for _ in range(repeat):
                    start = torch.cuda.Event(enable_timing=True)
                    end = torch.cuda.Event(enable_timing=True)
                    start.record()
                    for _ in range(number):
                        torch.mm(a, b, out=c)
                    end.record()
                    end.synchronize()
                    times.append(start.elapsed_time(end) / 1e3 / number)
                return min(times)

            return (
                "cuBLAS (PyTorch)",
                lambda x: torch.from_numpy(x).cuda(),
                lambda a, b: torch.mm(a, b).cpu().numpy(),
                time_torch,
            )
    except Exception:
        pass
    return None


def _arch(launcher) -> str:
    """``sm_XY`` of device 0 (sm_90 if it cannot be asked)."""
    try:
        import cupy

        return "sm_" + cupy.cuda.Device(0).compute_capability
    except Exception:
        pass
    try:
        from tilelang.backends.cuda.launchers import _cuda_driver

        cu = _cuda_driver()
        attr = cu.CUdevice_attribute
        major = cu.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 0)[1]
        minor = cu.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 0)[1]
        return f"sm_{major}{minor}"
    except Exception:
        return "sm_90"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1024, 4096])
    parser.add_argument("--number", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--tune-trials", type=int, default=64)
    parser.add_argument("--rows", type=int, default=4096)
    parser.add_argument("--cols", type=int, default=1024)
    args = parser.parse_args(argv)

    from tilelang.backends.cuda import available_launchers, get_launcher

    import tilelang

    launchers = available_launchers()
    if not launchers:
        print("bench_cuda: no NVIDIA GPU here (or none of pycuda / cuda-python / CuPy); "
              "nothing to measure")  # fmt: skip
        return 0
    import cuda_matmul as schedules

    launcher = get_launcher()
    arch = _arch(launcher)
    cublas = _cublas()
    print(f"launcher: {launcher.name}, target: cuda -arch={arch}, "
          f"reference: {cublas[0] if cublas else 'none (install CuPy or PyTorch)'}")  # fmt: skip
    variants = {
        "§6 blocking 8x8x8x8x4": lambda s: schedules.blocking(s, 8, 8, 8, 8, 4),
        "tiled 128x128, k8 (hand)": lambda s: schedules.tiled_shared(s, 128, 16, 8),
        "tiled 128x128, k16 (hand)": lambda s: schedules.tiled_shared(s, 128, 16, 16),
        "default (rules)": None,
    }
    if args.tune_trials > 0:
        variants[f"tuned ({args.tune_trials} trials)"] = "tune"
    rng = np.random.default_rng(0)
    summary = {}
    print(f"{'size':>6}  {'schedule':<28}{'ms':>9}{'GFLOP/s':>10}{'vs cuBLAS':>11}")
    for n in args.sizes:
        a, b = rng.random((n, n), "float32"), rng.random((n, n), "float32")
        flops = 2.0 * n**3
        reference, cublas_seconds = None, None
        if cublas is not None:
            name, to_device, matmul, timer = cublas
            da, db = to_device(a), to_device(b)
            reference = matmul(da, db)
            cublas_seconds = timer(da, db, args.number, args.repeat)
            print(f"{n:>6}  {name:<28}{cublas_seconds * 1e3:>9.3f}"
                  f"{flops / cublas_seconds / 1e9:>10.0f}{'1.00':>11}")  # fmt: skip
            arrays = (da, db, to_device(np.zeros((n, n), "float32")))
        else:
            reference = a.astype(np.float64) @ b.astype(np.float64) if n <= 1024 else None
            arrays = (a, b, np.zeros((n, n), "float32"))
        for label, schedule in variants.items():
            mod = _matmul_variant(schedules.matmul(n), schedule, f"cuda -arch={arch}", args)
            lib = tilelang.build(mod, target=f"cuda -arch={arch}")
            timer = lib.time_evaluator("main", tilelang.cuda(), number=args.number,
                                       repeat=args.repeat)  # fmt: skip
            seconds = timer(*arrays).min
            result = _to_numpy(arrays[2])
            ok = reference is None or np.allclose(
                result, reference, rtol=1e-3, atol=1e-2 * n / 1024
            )
            ratio = f"{cublas_seconds / seconds:.2f}" if cublas_seconds else "-"
            print(f"{n:>6}  {label:<28}{seconds * 1e3:>9.3f}{flops / seconds / 1e9:>10.0f}"
                  f"{ratio:>11}{'' if ok else '  WRONG RESULT'}")  # fmt: skip
            summary[(n, label)] = (cublas_seconds / seconds if cublas_seconds else None, ok)
    best = [
        r for (n, label), (r, ok) in summary.items() if n == 4096 and "hand" in label and ok and r
    ]
    if best:
        verdict = "meets" if max(best) >= 0.5 else "misses"
        print(f"hand schedule at 4096^3: {max(best):.0%} of cuBLAS ({verdict} the 50% bar)")
    tuned = [r for (n, label), (r, ok) in summary.items() if n == 4096 and "tuned" in label
             and ok and r]  # fmt: skip
    if tuned:
        verdict = "meets" if max(tuned) >= 0.7 else "misses"
        print(f"tuned at 4096^3: {max(tuned):.0%} of cuBLAS ({verdict} the 70% bar)")
    from bench_cuda_tensor_core import bf16_rows, tensor_core_rows

    tensor_core_ok = tensor_core_rows(args, arch, _torch_timer)
    tensor_core_ok &= bf16_rows(args, arch, _torch_timer)
    memory_ok = memory_bound_rows(args, arch)
    all_ok = all(ok for _, ok in summary.values())
    return 0 if all_ok and memory_ok and tensor_core_ok else 1


def _matmul_variant(mod, schedule, target, args):
    """The matmul scheduled by hand (a function), by the default rules (None: built
    unscheduled, the rules apply) or by the tuner ("tune")."""
    from tilelang import tir

    if schedule is None:
        return mod
    if schedule == "tune":
        from tilelang.tune import compile_tir, tune_tir

        db = tune_tir(mod, target, max_trials=args.tune_trials, progress=False)
        return compile_tir(db, mod, target)
    return schedule(tir.Schedule(mod)).mod


WINDOW = """
@T.prim_func
def window(A: T.Buffer(({n2},), "float32"), B: T.Buffer(({n},), "float32")):
    for i in T.grid({n}):
        with T.block("C"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[vi] + A[vi + 1] + A[vi + 2]
"""


def _torch_timer(fn, number, repeat) -> float:
    import torch

    fn()
    times = []
    for _ in range(repeat):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(number):
            fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3 / number)
    return min(times)


def memory_workloads(n, m) -> list:
    """``(workload, PyTorch reference)`` of the memory-bound rows: window sum over
    ``n * m`` elements, softmax and layernorm of ``n x m``."""
    from tilelang.testing import default_workloads as W

    window = W.Workload(
        "window", WINDOW.format(n=n * m, n2=n * m + 2), "", ((n * m + 2,), (n * m,)),
        lambda a: a[:-2] + a[1:-1] + a[2:], 0.0)  # fmt: skip
    return [
        (window, lambda t: t[0][:-2] + t[0][1:-1] + t[0][2:]),
        (W.softmax(n, m), lambda t: _functional().softmax(t[0], dim=1)),
        (W.layernorm(n, m), lambda t: _functional().layer_norm(t[0], (m,), t[1], t[2], eps=1e-5)),
    ]


def _functional():
    """``torch.nn.functional``, imported only when a GPU row runs."""
    import torch.nn.functional

    return torch.nn.functional


def benchmark_modules(sizes=(1024, 4096), rows=4096, cols=1024) -> list:
    """``(label, module, auto_schedule)`` of every kernel this benchmark builds but the
    tuned one: SGEMM (the hand schedules, built as written, and the default rules), the
    fp16 and bf16 tensor-core GEMMs (default rules; the rules' WMMA tiling is added per
    arch by bench_cuda_tensor_core) and the memory-bound rows (default rules). The tests
    compile each with nvcc and check ``ptxas -v`` (tests/test_cuda_bench_kernels.py)."""
    import cuda_matmul as schedules
    from bench_cuda_tensor_core import HGEMM

    import tilelang
    from tilelang import tir

    hand = {
        "§6 blocking 8x8x8x8x4": lambda s: schedules.blocking(s, 8, 8, 8, 8, 4),
        "tiled 128x128, k8 (hand)": lambda s: schedules.tiled_shared(s, 128, 16, 8),
        "tiled 128x128, k16 (hand)": lambda s: schedules.tiled_shared(s, 128, 16, 16),
    }
    found = []
    for n in sizes:
        for label, schedule in hand.items():
            found.append((f"sgemm {n} {label}", schedule(tir.Schedule(schedules.matmul(n))).mod,
                          False))  # fmt: skip
        found.append((f"sgemm {n} default", schedules.matmul(n), True))
        for dtype, name in (("float16", "hgemm"), ("bfloat16", "bf16 gemm")):
            found.append((f"{name} {n} default", tilelang.parse(HGEMM.format(n=n, dtype=dtype)),
                          True))  # fmt: skip
    for workload, _ in memory_workloads(rows, cols):
        found.append((f"{workload.name} {rows}x{cols} default", tilelang.parse(workload.tir), True))
    return found


def memory_bound_rows(args, arch) -> bool:
    """Window sum, softmax and layernorm: the default GPU schedule next to PyTorch
    (GB/s of the bytes each must move at least). True when every result matches."""
    import tilelang

    try:
        import torch

        if not torch.cuda.is_available():
            torch = None
    except Exception:
        torch = None
    rows = memory_workloads(args.rows, args.cols)
    print(f"\n{'workload':<12}{'default ms':>11}{'GB/s':>8}{'PyTorch ms':>12}{'ratio':>8}")
    all_ok = True
    for workload, reference in rows:
        lib = tilelang.build(tilelang.parse(workload.tir), target=f"cuda -arch={arch}")
        host = workload.arguments()
        want = workload.reference(*host[:-1])
        out = np.zeros_like(host[-1])
        lib[workload.name](*host[:-1], out)
        ok = np.allclose(out, want, rtol=1e-3, atol=1e-4)
        all_ok &= ok
        moved = sum(a.nbytes for a in host)
        timer = lib.time_evaluator(workload.name, tilelang.cuda(), number=args.number,
                                   repeat=args.repeat)  # fmt: skip
        if torch is not None:
            dev = [torch.from_numpy(a).cuda() for a in host]
            seconds = timer(*dev).min
            theirs = _torch_timer(
                lambda reference=reference, dev=dev: reference(dev), args.number, args.repeat
            )
            tail = f"{theirs * 1e3:>12.3f}{seconds / theirs:>8.2f}"
        else:
            seconds = timer(*host).min
            tail = f"{'-':>12}{'-':>8}"
        print(f"{workload.name:<12}{seconds * 1e3:>11.3f}{moved / seconds / 1e9:>8.0f}{tail}"
              f"{'' if ok else '  WRONG RESULT'}")  # fmt: skip
    print("(ratio: default schedule time / PyTorch time; the goal is <= 3)")
    return all_ok


def _to_numpy(array):
    if isinstance(array, np.ndarray):
        return array
    if hasattr(array, "get"):
        return array.get()  # CuPy
    return array.cpu().numpy()  # PyTorch


if __name__ == "__main__":
    sys.exit(main())

"""SGEMM on the GPU: tilelang's CUDA backend next to cuBLAS.

    python benchmarks/bench_cuda.py [--sizes 1024 4096] [--number 10] [--repeat 3]

For each size it builds (nvcc, sm_XX of the device) and times with CUDA events:

- the SEED_PROGRAMS §6 blocking schedule (``blocking(sch, 8, 8, 8, 8, 4)``),
- the shared-memory tiled hand schedule (128x128 block tile, 16x16 threads each with
  an 8x8 register micro-tile, A/B panels of k_tile 8 or 16 fetched cooperatively),

checks each result against cuBLAS (through CuPy, else PyTorch, FP32 without TF32),
and prints GFLOP/s and the ratio to cuBLAS. Without a GPU it says so and exits 0.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "samples"))


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
    args = parser.parse_args(argv)

    from tilelang.backends.cuda import available_launchers, get_launcher

    import tilelang
    from tilelang import tir

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
    }
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
            mod = schedule(tir.Schedule(schedules.matmul(n))).mod
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
    return 0 if all(ok for _, ok in summary.values()) else 1


def _to_numpy(array):
    if isinstance(array, np.ndarray):
        return array
    if hasattr(array, "get"):
        return array.get()  # CuPy
    return array.cpu().numpy()  # PyTorch


if __name__ == "__main__":
    sys.exit(main())

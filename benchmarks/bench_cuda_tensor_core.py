"""The fp16 tensor-core GEMM rows of bench_cuda.py: tilelang's default schedule for a
half-precision matmul (tilelang.schedule.rules.gpu.tensor_core: ldmatrix + mma.sync
m16n8k16 on sm_80+, the k loop software-pipelined with cp.async groups), and the same
tiling through WMMA fragments, float16 operands accumulated in float32, next to
cuBLAS's HGEMM through PyTorch (``torch.mm`` on float16 tensors, tensor cores, float16
output) on the same GPU.

    python benchmarks/bench_cuda.py          (prints these rows after the SGEMM ones)

Each result is checked against the float32 product of the same float16 inputs. On
sm_80 and later, bf16 rows follow (:func:`bf16_rows`): the default schedule of a
bfloat16 matmul (``mma.sync...f32.bf16.bf16.f32``, float32 out) next to cuBLAS's
bfloat16 GEMM through PyTorch.
"""

from __future__ import annotations

import numpy as np

HGEMM = """
@T.prim_func
def hgemm(A: T.Buffer(({n}, {n}), "{dtype}"), B: T.Buffer(({n}, {n}), "{dtype}"),
          C: T.Buffer(({n}, {n}), "float32")):
    T.func_attr({{"global_symbol": "hgemm", "tir.noalias": True}})
    for i, j, k in T.grid({n}, {n}, {n}):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + T.Cast("float32", A[vi, vk]) * T.Cast("float32", B[vk, vj])
"""


def _wmma_module(mod, target):
    """``mod`` scheduled by the tensor-core rule's largest WMMA plan (None if none)."""
    from tilelang.schedule import Schedule
    from tilelang.schedule.rules.analysis import leaf_blocks
    from tilelang.schedule.rules.gpu.limits import gpu_limits
    from tilelang.schedule.rules.gpu.tensor_core import apply_wmma, wmma_plans

    (info,) = leaf_blocks(mod["hgemm"])
    plans = [p for p in wmma_plans(info, gpu_limits(target)) if p.family == "wmma"]
    if not plans:
        return None
    sch = Schedule(mod)
    apply_wmma(sch, sch.get_block("C"), plans[0])
    return sch.mod


def _label(source: str) -> str:
    if "mma.sync.aligned.m16n8k16" in source or "tl_mma_16x16x16" in source:
        return "mma.sync"
    return "WMMA" if "nvcuda::wmma::mma_sync" in source else "no tensor cores"


def tensor_core_rows(args, arch, torch_timer) -> bool:
    """One row per size: the default schedule's time, TFLOP/s and its ratio to cuBLAS
    HGEMM; True when every result matches. ``torch_timer(fn, number, repeat)``."""
    import tilelang

    torch = _cuda_torch()
    print(f"\n{'size':>6}  {'fp16 GEMM (fp32 accumulate)':<30}{'ms':>9}{'TFLOP/s':>9}"
          f"{'vs cuBLAS':>11}")  # fmt: skip
    rng, all_ok, ratios = np.random.default_rng(0), True, {}
    for n in args.sizes:
        a = rng.standard_normal((n, n)).astype("float16")
        b = rng.standard_normal((n, n)).astype("float16")
        flops = 2.0 * n**3
        target = f"cuda -arch={arch}"
        mod = tilelang.parse(HGEMM.format(n=n, dtype="float16"))
        libs = [("default (rules", tilelang.build(mod, target=target))]
        wmma = _wmma_module(mod, target)
        if wmma is not None and _label(libs[0][1].get_source()) != "WMMA":
            libs.append(("rules' tiling (", tilelang.build(wmma, target, auto_schedule=False)))
        theirs = None
        if torch is not None:
            da, db = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
            arrays = (da, db, torch.zeros((n, n), dtype=torch.float32, device="cuda"))
            theirs = torch_timer(lambda da=da, db=db: torch.mm(da, db), args.number, args.repeat)
            print(f"{n:>6}  {'cuBLAS HGEMM (PyTorch)':<30}{theirs * 1e3:>9.3f}"
                  f"{flops / theirs / 1e12:>9.1f}{'1.00':>11}")  # fmt: skip
        else:
            arrays = (a, b, np.zeros((n, n), "float32"))
        for prefix, lib in libs:
            ok, seconds = _measure(lib, arrays, a, b, n, rng, args)
            all_ok &= ok
            label = f"{prefix}{_label(lib.get_source())})"
            ratio = theirs / seconds if theirs else None
            if prefix.startswith("default"):
                ratios[n] = ratio if ok else None
            shown = f"{ratio:.2f}" if ratio else "-"
            print(f"{n:>6}  {label:<30}{seconds * 1e3:>9.3f}{flops / seconds / 1e12:>9.1f}"
                  f"{shown:>11}{'' if ok else '  WRONG RESULT'}")  # fmt: skip
    if ratios.get(4096):
        verdict = "meets" if ratios[4096] >= 0.5 else "misses"
        print(f"fp16 tensor-core GEMM at 4096^3: {ratios[4096]:.0%} of cuBLAS ({verdict} the "
              "50% bar)")  # fmt: skip
    return all_ok


def _measure(lib, arrays, a, b, n, rng, args):
    """``(matches, seconds)`` of one build on the GPU arrays (or host ones)."""
    import tilelang

    timer = lib.time_evaluator("hgemm", tilelang.cuda(), number=args.number,
                               repeat=args.repeat)  # fmt: skip
    if not isinstance(arrays[2], np.ndarray):
        arrays[2].zero_()
    else:
        arrays[2][...] = 0
    seconds = timer(*arrays).min
    out = arrays[2] if isinstance(arrays[2], np.ndarray) else arrays[2].cpu().numpy()
    if n <= 2048:
        want = a.astype("float32") @ b.astype("float32")
        return np.allclose(out, want, rtol=1e-3, atol=1e-2 * np.sqrt(n / 1024)), seconds
    rows = rng.choice(n, 16, replace=False)  # a sample: the full product is slow on the host
    want = a[rows].astype("float32") @ b.astype("float32")
    return np.allclose(out[rows], want, rtol=1e-3, atol=1e-2 * np.sqrt(n / 1024)), seconds


def bf16_rows(args, arch, torch_timer) -> bool:
    """The bfloat16 GEMM rows (sm_80+): the default schedule's time, TFLOP/s and its
    ratio to cuBLAS's bfloat16 GEMM (PyTorch); True when every result matches. The
    operands reach tilelang as host ``ml_dtypes.bfloat16`` arrays, copied to the device
    once before timing (PyTorch's bfloat16 tensors have no ``__cuda_array_interface__``)."""
    import ml_dtypes

    import tilelang

    if int(arch[3:5]) < 80:
        return True
    torch = _cuda_torch()
    print(f"\n{'size':>6}  {'bf16 GEMM (fp32 accumulate)':<30}{'ms':>9}{'TFLOP/s':>9}"
          f"{'vs cuBLAS':>11}")  # fmt: skip
    rng, all_ok = np.random.default_rng(0), True
    for n in args.sizes:
        a = rng.standard_normal((n, n)).astype(ml_dtypes.bfloat16)
        b = rng.standard_normal((n, n)).astype(ml_dtypes.bfloat16)
        flops, theirs = 2.0 * n**3, None
        if torch is not None:
            da = torch.from_numpy(a.view(np.int16)).view(torch.bfloat16).cuda()
            db = torch.from_numpy(b.view(np.int16)).view(torch.bfloat16).cuda()
            theirs = torch_timer(lambda da=da, db=db: torch.mm(da, db), args.number, args.repeat)
            print(f"{n:>6}  {'cuBLAS bf16 GEMM (PyTorch)':<30}{theirs * 1e3:>9.3f}"
                  f"{flops / theirs / 1e12:>9.1f}{'1.00':>11}")  # fmt: skip
        mod = tilelang.parse(HGEMM.format(n=n, dtype="bfloat16"))
        lib = tilelang.build(mod, target=f"cuda -arch={arch}")
        ok, seconds = _measure(lib, (a, b, np.zeros((n, n), "float32")), a, b, n, rng, args)
        all_ok &= ok
        ratio = f"{theirs / seconds:.2f}" if theirs else "-"
        print(f"{n:>6}  {'default (rules ' + _label(lib.get_source()) + ')':<30}"
              f"{seconds * 1e3:>9.3f}{flops / seconds / 1e12:>9.1f}{ratio:>11}"
              f"{'' if ok else '  WRONG RESULT'}")  # fmt: skip
    return all_ok


def _cuda_torch():
    """PyTorch when it is installed and sees a GPU (cuBLAS rows), else None."""
    try:
        import torch
    except Exception:
        return None
    return torch if torch.cuda.is_available() else None

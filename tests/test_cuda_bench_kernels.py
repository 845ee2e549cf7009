"""Every kernel benchmarks/bench_cuda.py builds (but the tuned ones), at the sizes it
times, compiled by nvcc and checked with ``ptxas -v`` without a GPU: no warning, no
spills, no stack frame, registers that fit the launch bounds (``__launch_bounds__``
is the kernel's thread count: registers x threads within the 64K registers of an SM,
at most 255 per thread) and static shared memory within 48 KiB. sm_90 (H100) for all
of them; sm_80 (A100) for the fp16 and bf16 tensor-core GEMMs, and the rules' WMMA
tiling that the benchmark times next to the default. Their numbers on a GPU are the ``gpu`` tests of
test_cuda_rules.py, test_cuda_mma.py and test_lower_cross_thread_reduction.py and the
benchmark's own checks."""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import pytest

import tilelang
from tilelang.target import Target

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "benchmarks"), str(ROOT / "samples")]

import bench_cuda  # noqa: E402
import bench_cuda_tensor_core  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")

REGISTERS_PER_SM = 65536
MAX_STATIC_SHARED = 48 * 1024
MODULES = {label: (mod, auto) for label, mod, auto in bench_cuda.benchmark_modules()}


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path / "cache"))


def ptxas_entries(source: str, arch: str) -> dict:
    """kernel name -> {"registers", "stack", "spill_stores", "spill_loads", "smem"}."""
    from tilelang.backends.cuda import compile_cuda, nvcc_flags

    flags = [*nvcc_flags(Target(f"cuda -arch={arch}")), "-Xptxas", "-v"]
    entries, current = {}, None
    for line in compile_cuda(source, flags).log.splitlines():
        entry = re.search(r"Compiling entry function '(\w+)'", line)
        if entry:
            current = entries.setdefault(entry.group(1), {"smem": 0})
            continue
        if current is None:
            continue
        frame = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes", line)
        if frame:
            current.update(stack=int(frame[1]), spill_stores=int(frame[2]),
                           spill_loads=int(frame[3]))  # fmt: skip
        used = re.search(r"Used (\d+) registers", line)
        if used:
            current["registers"] = int(used[1])
            smem = re.search(r"(\d+) bytes smem", line)
            current["smem"] = int(smem[1]) if smem else 0
    return entries


def check_kernels(lib, arch: str) -> None:
    assert lib.backend_module.compile_log == ""  # nvcc printed no warning
    kernels = [k for f in lib.backend_module.source.functions.values() for k in f.kernels]
    entries = ptxas_entries(lib.get_source(), arch)
    assert kernels and {k.name for k in kernels} <= set(entries)
    for kernel in kernels:
        found = entries[kernel.name]
        where = f"{kernel.name} on {arch}: {found}"
        assert found["spill_stores"] == found["spill_loads"] == 0, where
        assert found["stack"] == 0, where
        assert found["registers"] <= 255, where
        assert found["registers"] * kernel.threads <= REGISTERS_PER_SM, where
        assert found["smem"] <= MAX_STATIC_SHARED, where


@pytest.mark.parametrize("label", list(MODULES))
def test_benchmark_kernel_passes_ptxas_on_sm90(label):
    mod, auto = MODULES[label]
    lib = tilelang.build(mod, "cuda -arch=sm_90", auto_schedule=auto)
    if auto:
        assert lib.trace is not None and lib.trace.insts  # the default rules scheduled it
    check_kernels(lib, "sm_90")


@pytest.mark.parametrize("name", ["hgemm", "bf16 gemm"])
@pytest.mark.parametrize("size", [1024, 4096])
def test_tensor_core_gemm_kernels_pass_ptxas_on_sm80(name, size):
    mod, _ = MODULES[f"{name} {size} default"]
    lib = tilelang.build(mod, "cuda -arch=sm_80")
    assert "tl_mma_16x16x16" in lib.get_source()  # ldmatrix + mma.sync
    check_kernels(lib, "sm_80")


def test_the_rules_wmma_tiling_the_benchmark_times_passes_ptxas():
    mod, _ = MODULES["hgemm 4096 default"]
    wmma = bench_cuda_tensor_core._wmma_module(mod, "cuda -arch=sm_90")
    lib = tilelang.build(wmma, "cuda -arch=sm_90", auto_schedule=False)
    assert "nvcuda::wmma::mma_sync" in lib.get_source()
    check_kernels(lib, "sm_90")


def test_memory_bound_reductions_use_the_cross_thread_allreduce():
    """softmax and layernorm rows (1024 long): 256 threads per row, warp shuffles."""
    for name in ("softmax", "layernorm"):
        mod, _ = MODULES[f"{name} 4096x1024 default"]
        source = tilelang.build(mod, "cuda -arch=sm_90").get_source()
        assert source.count("tl_block_allreduce<256>(") == 2, name


@pytest.mark.gpu
@pytest.mark.parametrize("label", [k for k in MODULES if " 4096 " not in k])
def test_benchmark_kernel_computes_on_the_gpu(label):
    """The same kernels on the device against NumPy (the 4096^3 GEMMs are left to the
    benchmark, which checks a sample of rows)."""
    import numpy as np

    mod, auto = MODULES[label]
    lib = tilelang.build(mod, "cuda", auto_schedule=auto)
    (name,) = list(lib.backend_module.source.functions)
    if label.startswith(("sgemm", "hgemm", "bf16 gemm")):
        n = int(next(word for word in label.split() if word.isdigit()))
        dtype = {"s": "float32", "h": "float16", "b": "bfloat16"}[label[0]]
        if dtype == "bfloat16":
            dtype = pytest.importorskip("ml_dtypes").bfloat16
        rng = np.random.default_rng(0)
        a, b = (rng.standard_normal((n, n)).astype(dtype) for _ in range(2))
        out = np.zeros((n, n), "float32")
        lib[name](a, b, out)
        want = a.astype("float32") @ b.astype("float32")
        np.testing.assert_allclose(out, want, rtol=1e-3, atol=1e-2)
        return
    workload = {w.name: w for w, _ in bench_cuda.memory_workloads(4096, 1024)}[name]
    args = workload.arguments()
    out = np.zeros_like(args[-1])
    lib[name](*args[:-1], out)
    np.testing.assert_allclose(out, workload.reference(*args[:-1]), rtol=1e-3, atol=1e-4)

"""CUDA backend without a GPU: generated source (golden), nvcc builds with no warnings,
barriers where threads share memory, the host/device split and its errors, the host
side of a call (with a recording launcher), and the CLI emitters.

The GPU runs are in tests/test_cuda_gpu.py.
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from conftest import load_sample

import tilelang
from tilelang import tir
from tilelang.errors import BuildError

schedules = load_sample("cuda_matmul")

pytestmark = pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path / "cache"))


def build(mod, target="cuda -arch=sm_90"):
    return tilelang.build(mod, target=target)


def window_sum():
    return schedules.window_sum_shared().mod


def blocked_matmul():
    return schedules.blocking(tir.Schedule(schedules.matmul(1024))).mod


def tiled_matmul():
    return schedules.tiled_shared(tir.Schedule(schedules.matmul(1024))).mod


# ------------------------------------------------------------ SEED §6 builds


def test_window_sum_builds_with_shared_memory_and_a_barrier(golden):
    lib = build(window_sum())
    source = lib.get_source()
    golden(source)
    assert lib.backend_module.compile_log == ""  # nvcc printed no warning
    assert "__shared__ float A_shared[256];" in source
    fill = source.index("A_shared[(ax0_0 * 128) + ax0_1] =")
    barrier = source.index("__syncthreads();")
    use = source.index("B[(i_0 * 128) + i_1] =")
    assert fill < barrier < use  # the fill, then the barrier, then the readers
    assert source.count("__syncthreads();") == 1
    assert "__launch_bounds__(128)" in source


def test_blocked_matmul_builds_with_a_per_thread_accumulator(golden):
    lib = build(blocked_matmul())
    source = lib.get_source()
    golden(source)
    assert lib.backend_module.compile_log == ""
    assert "float C_local[64];" in source  # 8x8 per thread: compacted, in registers
    assert "__shared__" not in source and "__syncthreads" not in source
    (kernel,) = lib.backend_module.source.functions["main"].kernels
    assert [x.value for x in kernel.grid] == [16, 16, 1]
    assert kernel.block == (8, 8, 1)


def test_tiled_matmul_builds_with_cooperative_fetching(golden):
    lib = build(tiled_matmul())
    source = lib.get_source()
    golden(source)
    assert lib.backend_module.compile_log == ""
    assert "__shared__ float A_shared[1024];" in source  # a 128 x 8 panel, not all of A
    assert "__shared__ float B_shared[1024];" in source
    assert "float C_local[64];" in source
    k_loop = source.index("for (int32_t k_0 = 0; k_0 < 128; ++k_0) {")
    barriers = [i for i in range(len(source)) if source.startswith("__syncthreads();", i)]
    fill_a = source.index("A_shared[(", k_loop)
    fill_b = source.index("B_shared[(", fill_a)
    compute = source.index("C_local[0] = (C_local[0] +", k_loop)
    # one barrier before the fill (the previous step's readers are done), one after it
    assert len(barriers) == 2
    assert k_loop < barriers[0] < fill_a < fill_b < barriers[1] < compute
    (kernel,) = lib.backend_module.source.functions["main"].kernels
    assert kernel.block == (16, 16, 1) and kernel.threads == 256


@pytest.mark.parametrize("make", [blocked_matmul, tiled_matmul, window_sum])
def test_ptxas_keeps_everything_in_registers(make):
    from tilelang.backends.cuda import compile_cuda, generate_cuda, nvcc_flags

    from tilelang.target import Target

    target = Target("cuda -arch=sm_90")
    text = generate_cuda(tilelang.lower(make()), target).text
    compiled = compile_cuda(text, [*nvcc_flags(target), "-Xptxas", "-v"])
    assert "0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads" in compiled.log


@pytest.mark.parametrize(
    "schedule, n",
    [
        (lambda s: schedules.blocking(s, 2, 2, 2, 2, 4), 32),
        (lambda s: schedules.tiled_shared(s, tile=16, threads=4, k_tile=4), 32),
    ],
    ids=["blocking", "tiled_shared"],
)
def test_gpu_schedules_compute_the_matmul_on_the_cpu(schedule, n):
    """The same schedules, run with thread loops as serial loops (C backend)."""
    lib = tilelang.build(schedule(tir.Schedule(schedules.matmul(n))).mod, target="c")
    rng = np.random.default_rng(0)
    a, b = rng.random((n, n), "float32"), rng.random((n, n), "float32")
    c = np.zeros((n, n), "float32")
    lib["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)


def test_window_sum_schedule_computes_on_the_cpu():
    lib = tilelang.build(window_sum(), target="c")
    a = np.random.default_rng(1).random(1027, dtype="float32")
    b = np.zeros(1024, "float32")
    lib["main"](a, b)
    np.testing.assert_allclose(b, a[:1024] + a[1:1025] + a[2:1026], rtol=1e-6)


# ------------------------------------------------------- printer and dialect

ELEMENTWISE = """
@T.prim_func
def main(A: T.Buffer((256,), "float32"), H: T.Buffer((256,), "float16"),
         B: T.Buffer((256,), "float32"), G: T.Buffer((256,), "float16")):
    for i0 in T.thread_binding(2, thread="blockIdx.x"):
        for i1 in T.thread_binding(128, thread="threadIdx.x"):
            with T.block("B"):
                vi = T.axis.spatial(256, i0 * 128 + i1)
                B[vi] = T.max(T.exp(A[vi]), T.sqrt(A[vi])) + T.Cast("float32", H[vi])
                G[vi] = T.exp(H[vi]) * T.float16(0.5) + H[vi]
"""


def test_math_intrinsics_and_float16(golden):
    lib = build(tilelang.parse(ELEMENTWISE))
    source = lib.get_source()
    golden(source)
    assert lib.backend_module.compile_log == ""
    assert source.startswith("// Generated by tilelang") and "#include <cuda_fp16.h>" in source
    assert "fmaxf(expf(A[" in source and "sqrtf(A[" in source
    assert "__float2half(expf(__half2float(H[" in source
    assert "half* __restrict__" not in source  # no tir.noalias here: no restrict


def test_no_float16_no_fp16_header():
    assert "cuda_fp16.h" not in build(window_sum()).get_source()


SYMBOLIC = """
@T.prim_func
def main(a: T.handle, b: T.handle, n: T.int32):
    m = T.int32()
    A = T.match_buffer(a, (m,), "float32")
    B = T.match_buffer(b, (m,), "float32")
    for i0 in T.thread_binding((m + 63) // 64, thread="blockIdx.x"):
        for i1 in T.thread_binding(64, thread="threadIdx.x"):
            if i0 * 64 + i1 < m:
                B[i0 * 64 + i1] = A[i0 * 64 + i1] * T.Cast("float32", n)
"""


def test_grid_from_a_buffer_size():
    lib = build(tilelang.parse(SYMBOLIC))
    assert lib.backend_module.compile_log == ""
    (kernel,) = lib.backend_module.source.functions["main"].kernels
    assert [p.name for p in kernel.params] == ["A", "B", "n", "m"]
    assert "int32_t n, int32_t m)" in lib.get_source()


TWO_KERNELS = """
@T.prim_func
def main(A: T.Buffer((256,), "float32"), C: T.Buffer((256,), "float32")):
    B = T.alloc_buffer((256,), "float32")
    for i0 in T.thread_binding(2, thread="blockIdx.x"):
        for i1 in T.thread_binding(128, thread="threadIdx.x"):
            with T.block("B"):
                vi = T.axis.spatial(256, i0 * 128 + i1)
                B[vi] = A[vi] * T.float32(2)
    for i0 in T.thread_binding(4, thread="blockIdx.x"):
        for i1 in T.thread_binding(64, thread="threadIdx.x"):
            with T.block("C"):
                vi = T.axis.spatial(256, i0 * 64 + i1)
                C[vi] = B[255 - vi] + T.float32(1)
"""


def test_two_kernels_share_a_global_workspace():
    lib = build(tilelang.parse(TWO_KERNELS))
    device = lib.backend_module.source.functions["main"]
    assert [k.name for k in device.kernels] == ["main_kernel0", "main_kernel1"]
    (workspace,) = device.workspaces
    assert [k.block for k in device.kernels] == [(128, 1, 1), (64, 1, 1)]
    assert [p.name for p in device.kernels[0].params] == ["A", workspace.var.name]
    assert [p.name for p in device.kernels[1].params] == ["C", workspace.var.name]
    assert lib.backend_module.compile_log == ""


# ------------------------------------------------------------------ errors

UNBOUND = """
@T.prim_func
def main(A: T.Buffer((128,), "float32")):
    for i in range(128):
        A[i] = T.float32(1)
"""

HOST_CODE = """
@T.prim_func
def main(A: T.Buffer((128,), "float32")):
    A[0] = T.float32(0)
    for i in T.thread_binding(128, thread="threadIdx.x"):
        A[i] = A[i] + T.float32(1)
"""

MISMATCH = """
@T.prim_func
def main(A: T.Buffer((128,), "float32")):
    for i in T.thread_binding(64, thread="threadIdx.x"):
        for j in T.thread_binding(32, thread="threadIdx.x"):
            A[i + j] = T.float32(1)
"""

TOO_MANY_THREADS = """
@T.prim_func
def main(A: T.Buffer((2048,), "float32")):
    for i in T.thread_binding(2048, thread="threadIdx.x"):
        A[i] = T.float32(1)
"""


@pytest.mark.parametrize(
    "program, message",
    [
        (UNBOUND, "the serial loop over i is outside every thread-bound loop"),
        (HOST_CODE, "a store to A is outside every thread-bound loop and would run on the host"),
        (MISMATCH, "loops bound to threadIdx.x have different extents (64 and 32 for j)"),
        (TOO_MANY_THREADS, "2048 threads per block"),
    ],
    ids=["unbound", "host_code", "mismatch", "too_many_threads"],
)
def test_programs_the_gpu_cannot_run_are_build_errors(program, message):
    with pytest.raises(BuildError) as info:
        build(tilelang.parse(program))
    assert message in str(info.value)


def test_bad_arch_is_a_build_error():
    with pytest.raises(BuildError, match="not a CUDA architecture"):
        build(window_sum(), "cuda -arch=pascal")


def test_nvcc_errors_show_the_generated_lines():
    from tilelang.backends.cuda import compile_cuda

    source = '#include <stdint.h>\nextern "C" __global__ void k(float* A) {\n  A[0] = x;\n}\n'
    with pytest.raises(BuildError) as info:
        compile_cuda(source, ["-arch=sm_90"])
    text = str(info.value)
    assert "nvcc failed" in text and '"x" is undefined' in text
    assert "> 3 |   A[0] = x;" in text


def test_cubin_is_cached_by_content():
    first = build(window_sum()).backend_module
    second = build(window_sum()).backend_module
    assert not first.was_cached and second.was_cached
    assert first.cubin_path == second.cubin_path and first.cubin_path.read_bytes()[:4] == b"\x7fELF"
    assert build(window_sum(), "cuda -arch=sm_80").backend_module.cubin_path != first.cubin_path

"""Vectorised CUDA loads and stores (backends/cuda/vectorize.py), without a GPU.

A ``T.vectorized`` loop over contiguous, aligned elements prints as ``float4`` (or raw
``uint2``/``uint4`` words for other types) and nvcc emits ``ld.global.v4``/``st.v4``;
loads that are not aligned or not contiguous stay per lane; loops that cannot be
vectorised print as before. Device arrays passed in place must be aligned for it.
"""

from __future__ import annotations

import re
import shutil

import numpy as np
import pytest
from test_cuda_runtime import FakeDeviceArray, RecordingLauncher

import tilelang
from tilelang import tir
from tilelang.errors import ArgumentError

pytestmark = pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
TARGET = "cuda -arch=sm_80"


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TILELANG_CACHE_DIR", str(tmp_path / "cache"))


def elementwise(expr, n=4096, dtype="float32", out_dtype=None, a_len=None):
    out_dtype = out_dtype or dtype
    return tilelang.parse(f"""
@T.prim_func
def main(A: T.Buffer(({a_len or n},), "{dtype}"), B: T.Buffer(({n},), "{out_dtype}")):
    T.func_attr({{"global_symbol": "main", "tir.noalias": True}})
    for i in range({n}):
        with T.block("B"):
            vi = T.axis.spatial({n}, i)
            B[vi] = {expr}
""")


def vectorized(mod, lanes=4, threads=128):
    sch = tir.Schedule(mod)
    (i,) = sch.get_loops(sch.get_block("B"))
    bx, tx, v = sch.split(i, [None, threads, lanes])
    sch.bind(bx, "blockIdx.x")
    sch.bind(tx, "threadIdx.x")
    sch.vectorize(v)
    return sch.mod


def source_and_ptx(mod, target=TARGET):
    from tilelang.backends.cuda import compile_cuda, nvcc_flags

    from tilelang.target import Target

    lib = tilelang.build(mod, target, auto_schedule=False)
    assert lib.backend_module.compile_log == ""
    source = lib.get_source()
    ptx = compile_cuda(source, nvcc_flags(Target(target)), "ptx").data.decode()
    # memory instructions without their element type (nvcc moves copies as .u32), and
    # the asynchronous copies
    ops = {op.rsplit(".", 1)[0] for op in re.findall(r"(?:ld|st)\.[\w.]+", ptx)}
    return lib, source, ops | set(re.findall(r"cp\.async[\w.]*", ptx))


def test_a_copy_is_one_float4_move():
    _, source, ops = source_and_ptx(vectorized(elementwise("A[vi]")))
    assert "*(float4*)(B + ((i_0 * 512) + (i_1 * 4))) = *(const float4*)(A + " in source
    assert "ld.global.nc.v4" in ops and "st.global.v4" in ops


def test_arithmetic_reads_vectors_and_computes_per_lane():
    _, source, ops = source_and_ptx(vectorized(elementwise("A[vi] * T.float32(2) + T.float32(1)")))
    assert "float4 A_v = *(const float4*)(A + " in source
    assert "((float*)&B_v)[i_2] = (((const float*)&A_v)[i_2] * 2.0f) + 1.0f;" in source
    assert "*(float4*)(B + " in source
    assert "ld.global.nc.v4" in ops and "st.global.v4" in ops


def test_half_moves_as_raw_words_and_casts_per_lane():
    mod = vectorized(elementwise('T.Cast("float32", A[vi])', dtype="float16", out_dtype="float32"))
    _, source, ops = source_and_ptx(mod)
    assert "uint2 A_v = *(const uint2*)(A + " in source  # 4 halves: 8 bytes
    assert "float4 B_v;" in source
    assert "ld.global.nc.v2" in ops and "st.global.v4" in ops
    copy = vectorized(elementwise("A[vi]", dtype="float16"), lanes=8)
    _, source, ops = source_and_ptx(copy)
    assert "*(uint4*)(B + " in source and "ld.global.nc.v4" in ops


def test_unaligned_or_strided_loads_stay_per_lane():
    _, source, _ = source_and_ptx(vectorized(elementwise("A[vi + 1]", a_len=4097)))
    assert "*(float4*)(B + " in source  # the store is still a vector
    assert "A_v" not in source and "A[(((i_0 * 512) + (i_1 * 4)) + i_2) + 1]" in source
    _, source, _ = source_and_ptx(vectorized(elementwise("A[vi * 2]", a_len=8192)))
    assert "A_v" not in source


def test_a_store_that_cannot_be_a_vector_prints_as_a_scalar_loop():
    mod = tilelang.parse("""
@T.prim_func
def main(A: T.Buffer((4096,), "float32"), B: T.Buffer((4096,), "float32")):
    for i0 in T.thread_binding(8, thread="blockIdx.x"):
        for i1 in T.thread_binding(128, thread="threadIdx.x"):
            for i2 in T.vectorized(4):
                with T.block("B"):
                    vi = T.axis.spatial(4096, i0 * 512 + i1 + i2 * 128)
                    B[vi] = A[vi]
""")
    _, source, ops = source_and_ptx(mod)
    assert "float4" not in source and "#pragma unroll" in source
    assert "st.global.v4" not in ops


SHARED = """
@T.prim_func
def main(A: T.Buffer((1024,), "float32"), B: T.Buffer((1024,), "float32")):
    for i0 in T.thread_binding(2, thread="blockIdx.x"):
        for i1 in T.thread_binding(128, thread="threadIdx.x"):
            with T.block("S"):
                S = T.alloc_buffer((512,), "float32", scope="shared")
                for v in T.vectorized(4):
                    with T.block("fill"):
                        vi = T.axis.spatial(512, i1 * 4 + v)
                        S[vi] = A[i0 * 512 + vi]
                for v in T.vectorized(4):
                    with T.block("out"):
                        vi = T.axis.spatial(512, i1 * 4 + v)
                        B[i0 * 512 + vi] = S[vi] + T.float32(1)
"""


def test_shared_memory_moved_as_vectors_is_aligned():
    mod = tilelang.parse(SHARED)
    _, source, ops = source_and_ptx(mod, "cuda -arch=sm_75")  # no cp.async before sm_80
    assert "__shared__ __align__(16) float S[512];" in source
    assert "st.shared.v4" in ops and "ld.shared.v4" in ops
    assert source.count("__syncthreads();") == 1 and "cp.async" not in source
    # the same IR on the C backend (thread loops in turn: each thread reads its own part)
    a = np.arange(1024, dtype="float32")
    b = np.zeros(1024, "float32")
    tilelang.build(mod, "c", auto_schedule=False)["main"](a, b)
    np.testing.assert_array_equal(b, a + 1)


def test_misaligned_device_arrays_are_refused(monkeypatch):
    from tilelang.backends.cuda import module as cuda_module

    launcher = RecordingLauncher()
    monkeypatch.setattr(cuda_module, "get_launcher", lambda: launcher)
    lib, _, _ = source_and_ptx(vectorized(elementwise("A[vi]")))
    lib["main"](
        FakeDeviceArray((4096,), pointer=0x10000), FakeDeviceArray((4096,), pointer=0x20000)
    )
    assert len(launcher.launches) == 1
    with pytest.raises(ArgumentError, match="16 bytes at a time.*0x10004"):
        lib["main"](
            FakeDeviceArray((4096,), pointer=0x10004), FakeDeviceArray((4096,), pointer=0x20000)
        )
    assert len(launcher.launches) == 1


def test_global_to_shared_copies_are_cp_async_on_sm80():
    """The fill of S is one 16-byte cp.async per thread; the thread waits for its copies
    before the barrier that precedes the reads, and before the kernel ends."""
    _, source, ops = source_and_ptx(tilelang.parse(SHARED))
    assert "tl_cp_async_16(S + (i1 * 4), A + ((i0 * 512) + (i1 * 4)));" in source
    wait = 'asm volatile("cp.async.wait_all;\\n" ::: "memory");'
    assert source.count(wait) == 2
    assert source.index(wait) < source.index("__syncthreads();") < source.rindex(wait)
    assert "cp.async.cg.shared.global" in ops and "cp.async.wait_all" in ops
    assert "st.shared.v4" not in ops and "ld.shared.v4" in ops
    got = np.zeros(1024, "float32")
    a = np.arange(1024, dtype="float32")
    tilelang.build(tilelang.parse(SHARED), "c", auto_schedule=False)["main"](a, got)
    np.testing.assert_array_equal(got, a + 1)


@pytest.mark.gpu
def test_vectorised_kernels_on_the_gpu():
    a = np.random.default_rng(0).standard_normal(4096).astype("float32")
    b = np.zeros(4096, "float32")
    lib = tilelang.build(vectorized(elementwise("A[vi] * T.float32(2) + T.float32(1)")), "cuda")
    lib["main"](a, b)
    np.testing.assert_allclose(b, a * 2 + 1, rtol=1e-6)
    lib = tilelang.build(tilelang.parse(SHARED), "cuda")  # cp.async on sm_80 and later
    b = np.zeros(1024, "float32")
    lib["main"](a[:1024].copy(), b)
    np.testing.assert_allclose(b, a[:1024] + 1, rtol=1e-6)

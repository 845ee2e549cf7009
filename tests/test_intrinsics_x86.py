"""The AVX-512 intrinsics library: VNNI int8 and fp32 FMA micro-kernels tensorized into
real schedules, checked against NumPy on c and llvm; the unsigned x signed rule; the
error on a CPU without the feature."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import tilelang
from tilelang.errors import ScheduleError
from tilelang.intrinsics import x86

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "samples"))
import bf16_matmul  # noqa: E402
import int8_matmul  # noqa: E402

HAS_VNNI = all(f in x86.host_features() for f in x86.VNNI_FEATURES)
HAS_AVX512 = all(f in x86.host_features() for f in x86.FMA_FEATURES)
needs_vnni = pytest.mark.skipif(not HAS_VNNI, reason="needs AVX-512 VNNI")
needs_avx512 = pytest.mark.skipif(not HAS_AVX512, reason="needs AVX-512F")


@needs_vnni
@pytest.mark.parametrize("target", ["c", "llvm"])
@pytest.mark.parametrize("shape,kt", [((64, 128, 96), 32), ((8, 64, 256), None)])
def test_vnni_int8_matmul_matches_numpy(target, shape, kt):
    m, n, k = shape
    rng = np.random.default_rng(0)
    a = rng.integers(0, 256, (m, k), dtype=np.uint8)  # the extremes of both ranges
    b = rng.integers(-128, 128, (n, k), dtype=np.int8)
    a[0, :], b[0, :] = 255, -128
    sch = int8_matmul.tensorized(m, n, k, mr=4, nb=4, kt=kt)
    assert "tl_vnni_gemm_4x64x" in sch.mod["main"].script()
    c = np.full((m, n), 7, np.int32)  # the schedule zeroes C itself
    tilelang.build(sch.mod, target=target)["main"](a, int8_matmul.pack_b(b), c)
    np.testing.assert_array_equal(c, a.astype(np.int32) @ b.astype(np.int32).T)


@needs_vnni
def test_signed_a_does_not_match_vpdpbusd():
    # vpdpbusd multiplies unsigned bytes by signed ones: an int8 A is not its operand
    text = int8_matmul.TEMPLATE.format(m=4, n=64, k=64, n16=4, k4=16).replace('"uint8"', '"int8"')
    sch = tilelang.Schedule(tilelang.parse(text))
    i, j, k = sch.get_loops("matmul")
    sch.decompose_reduction("matmul", i)
    with pytest.raises(ScheduleError, match="buffer A has dtype int8, description A has uint8"):
        sch.tensorize(sch.get_loops("matmul_update")[0], x86.vnni_gemm(4, 4, 64))


def test_missing_feature_is_a_clear_error():
    with pytest.raises(x86.MissingCPUFeature, match="needs the CPU feature.*avx512vnni"):
        x86.vnni_gemm(4, 4, 64, features={"avx512f", "avx512bw"})
    with pytest.raises(x86.MissingCPUFeature, match="avx512f"):
        x86.fma_gemm(4, 2, 64, features=())


FMA_MATMUL = """
@T.prim_func
def main(A: T.Buffer((32, 64), "float32"), B: T.Buffer((64, 96), "float32"), C: T.Buffer((32, 96), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": True})
    for i, j, k in T.grid(32, 96, 64):
        with T.block("matmul"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
"""


@needs_avx512
@pytest.mark.parametrize("target", ["c", "llvm"])
def test_fma_outer_product_kernel_matches_numpy(target):
    sch = tilelang.Schedule(tilelang.parse(FMA_MATMUL))
    i, j, k = sch.get_loops("matmul")
    i0, i1 = sch.split(i, [None, 4])
    j0, j1 = sch.split(j, [None, 32])
    k0, k1 = sch.split(k, [None, 16])
    sch.reorder(i0, j0, k0, i1, j1, k1)
    sch.decompose_reduction("matmul", k0)
    sch.tensorize(i1, x86.fma_gemm(4, 2, 16))
    rng = np.random.default_rng(2)
    a, b = rng.random((32, 64), np.float32), rng.random((64, 96), np.float32)
    c = np.zeros((32, 96), np.float32)
    tilelang.build(sch.mod, target=target)["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4)


HAS_BF16 = all(f in x86.host_features() for f in x86.BF16_FEATURES)
needs_bf16 = pytest.mark.skipif(not HAS_BF16, reason="needs AVX-512 BF16")


@needs_bf16
@pytest.mark.parametrize("target", ["c", "llvm"])
def test_bf16_matmul_matches_numpy(target):
    from tilelang.ir import bfloat16 as bf

    m, n, k = 32, 64, 192
    sch = bf16_matmul.tensorized(m, n, k, mr=4, nb=2, kt=64)
    assert "tl_bf16_gemm_4x32x64" in sch.mod["main"].script()
    rng = np.random.default_rng(0)
    a = bf.to_bits(rng.standard_normal((m, k)).astype(np.float32))
    b = bf.to_bits(rng.standard_normal((n, k)).astype(np.float32))
    c = np.full((m, n), 7, np.float32)  # the schedule zeroes C itself
    tilelang.build(sch.mod, target=target)["main"](a, bf16_matmul.pack_b(b), c)
    exact = bf.from_bits(a).astype(np.float64) @ bf.from_bits(b).astype(np.float64).T
    # float32 sums of exact products: the order of the additions is the only difference
    np.testing.assert_allclose(c, exact, rtol=0, atol=1e-4)


@needs_bf16
def test_float16_a_does_not_match_vdpbf16ps():
    text = bf16_matmul.TEMPLATE.format(m=8, n=32, k=64, n16=2, k2=32)
    text = text.replace('A: T.Buffer((8, 64), "bfloat16")', 'A: T.Buffer((8, 64), "float16")')
    sch = tilelang.Schedule(tilelang.parse(text))
    sch.decompose_reduction("matmul", sch.get_loops("matmul")[0])
    intrin = x86.bf16_gemm(8, 2, 64)
    with pytest.raises(
        ScheduleError, match="buffer A has dtype float16, description A has bfloat16"
    ):
        sch.tensorize(sch.get_loops("matmul_update")[0], intrin)


def test_missing_bf16_feature_is_a_clear_error():
    with pytest.raises(x86.MissingCPUFeature, match="needs the CPU feature.*avx512bf16"):
        x86.bf16_gemm(4, 2, 64, features={"avx512f", "avx512bw"})

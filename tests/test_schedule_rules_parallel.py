"""Which blocks the default rules run on several threads (rules/loops.py,
parallel_outer): a block's work is counted in vector instructions, so a vectorised block
needs ``lanes`` times the iterations of a scalar one before a parallel region's wake-up
pays for itself. Decisions on fixed machines, numbers against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import tilelang
from tilelang.schedule.rules import Machine, default_schedule
from tilelang.schedule.rules.loops import MIN_PARALLEL_WORK
from tilelang.testing import default_workloads as W

AVX512 = Machine(512, 32)  # 16 float lanes
SSE = Machine(128, 16)  # 4 float lanes


def _parallel(tir: str, machine) -> bool:
    return "sch.parallel(" in str(default_schedule(tilelang.parse(tir), machine).trace)


def _elementwise(n: int, conditional: bool) -> str:
    value = "T.if_then_else(A[vi, vj] > T.float32(0), A[vi, vj], T.float32(0))"
    return (
        "@T.prim_func\n"
        f'def f(A: T.Buffer(({n}, {n}), "float32"), B: T.Buffer(({n}, {n}), "float32")):\n'
        '    T.func_attr({"global_symbol": "f", "tir.noalias": True})\n'
        f"    for i, j in T.grid({n}, {n}):\n"
        '        with T.block("B"):\n'
        '            vi, vj = T.axis.remap("SS", [i, j])\n'
        f"            B[vi, vj] = {value if conditional else 'A[vi, vj] * T.float32(2)'}\n"
    )


def test_small_vectorised_kernels_stay_on_one_thread():
    # mm_relu 128^3: 2^21 iterations, 2^17 vectors of 16 floats
    assert 128**3 // 16 < MIN_PARALLEL_WORK <= 128**3
    assert not _parallel(W.matmul(128, 128, 128, relu=True).tir, AVX512)
    assert not _parallel(W.depthwise_conv2d(64, 56, 56).tir, AVX512)
    assert _parallel(W.matmul(256, 256, 256).tir, AVX512)
    assert _parallel(W.softmax(4096, 1024).tir, AVX512)


def test_narrower_vectors_need_fewer_iterations():
    # the same mm_relu is 2^19 vectors of 4 floats with SSE
    assert _parallel(W.matmul(128, 128, 128, relu=True).tir, SSE)


def test_scalar_blocks_count_every_iteration():
    # 512x512 = 2^18 iterations: vectorised that is 2^14 vectors (serial), while the
    # conditional body is not vectorised and runs 2^18 scalar iterations (parallel)
    assert not _parallel(_elementwise(512, conditional=False), AVX512)
    assert _parallel(_elementwise(512, conditional=True), AVX512)
    scalar = default_schedule(tilelang.parse(_elementwise(512, conditional=True)), AVX512)
    assert "vectorize" not in str(scalar.trace)


@pytest.mark.parametrize("conditional", [False, True])
def test_elementwise_results(conditional):
    lib = tilelang.build(tilelang.parse(_elementwise(512, conditional)), "llvm -num-cores=2")
    a = np.random.default_rng(0).standard_normal((512, 512)).astype("float32")
    b = np.empty_like(a)
    lib["f"](a, b)
    np.testing.assert_array_equal(b, np.maximum(a, 0) if conditional else a * 2)

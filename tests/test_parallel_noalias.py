"""Parallel loops keep what the optimiser knows about pointers, and native calls read
array addresses correctly (the two causes of slow multi-threaded and small calls)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import tilelang
from tilelang.runtime.ctypes_call import _address
from tilelang.testing import default_workloads as W


def _share_signature(source: str, version: str = "") -> str:
    pattern = rf'define .*{re.escape(version)}\.parallel\.\d+\.share"'
    (line,) = [ln for ln in source.splitlines() if re.match(pattern, ln)]
    return line


def test_the_threads_share_keeps_noalias_pointers():
    workload = W.matmul(256, 256, 64)  # 2^18 vectors of 16: parallel (rules/loops.py)
    lib = tilelang.build(tilelang.parse(workload.tir), "llvm -num-cores=2")
    share = _share_signature(lib.get_source("ll-unopt"))
    assert share.count("ptr noalias") == 3  # A, B and C, as in the exported function
    args = workload.arguments(seed=5)
    lib["matmul"](*args)
    np.testing.assert_allclose(args[-1], workload.reference(*args[:-1]), rtol=1e-4, atol=1e-4)


def test_pointers_without_the_promise_do_not_get_it():
    text = """
@T.prim_func
def axpy(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32")):
    for i in T.parallel(256):
        with T.block("B"):
            vi = T.axis.remap("S", [i])
            B[vi] = B[vi] + A[vi] * T.float32(2)
"""
    lib = tilelang.build(tilelang.parse(text), "llvm -num-cores=2", auto_schedule=False)
    # without tir.noalias the body is versioned on an overlap check (alias_versioning):
    # the cautious copy's share makes no promise, the checked copy's share does
    source = lib.get_source("ll-unopt")
    assert "noalias" not in _share_signature(source, "may_alias").split("(", 1)[1]
    assert _share_signature(source, "no_alias").count("ptr noalias") == 2
    a = np.arange(256, dtype="float32")
    b = np.ones(256, "float32")
    lib["axpy"](a, b)
    np.testing.assert_allclose(b, 1 + 2 * a)


@pytest.mark.parametrize(
    "make",
    [
        lambda: np.arange(12, dtype="float32").reshape(3, 4),
        lambda: np.arange(12, dtype="float32").reshape(3, 4)[1:],
        lambda: np.arange(12, dtype="float32").reshape(3, 4)[:, 2:],
        lambda: np.arange(12, dtype="float64").reshape(3, 4).T,
        lambda: np.zeros((0, 3), "float32"),
        lambda: np.full((), 3, "float32"),
        lambda: np.asfortranarray(np.ones((4, 5), "int8")),
    ],
    ids=["plain", "row-view", "column-view", "transposed", "empty", "0-d", "fortran"],
)
def test_array_addresses_are_the_data_pointers(make):
    array = make()
    assert _address(array) == array.__array_interface__["data"][0]


def test_c_parallel_loops_are_outlined_with_restrict_and_their_range():
    workload = W.matmul(256, 256, 64)  # 2^18 vectors of 16: parallel (rules/loops.py)
    lib = tilelang.build(tilelang.parse(workload.tir), "c -num-cores=2")
    source = lib.get_source()
    header = next(
        ln for ln in source.splitlines() if ln.startswith("static void matmul_parallel_1")
    )
    assert "const float* restrict A" in header and "float* restrict C" in header
    assert "__builtin_unreachable();" in source
    args = workload.arguments(seed=6)
    lib["matmul"](*args)
    np.testing.assert_allclose(args[-1], workload.reference(*args[:-1]), rtol=1e-4, atol=1e-4)


SYMBOLIC = """
@T.prim_func
def scale(a: T.handle, b: T.handle, s: T.float32):
    n = T.int32()
    A = T.match_buffer(a, (n, 8), "float32")
    B = T.match_buffer(b, (n, 8), "float32")
    for i in T.parallel(n):
        for j in T.parallel(8):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * s + T.Cast("float32", n)
"""


@pytest.mark.parametrize("target", ["c -num-cores=2", "llvm -num-cores=2"])
def test_parallel_loops_capture_sizes_and_scalars(target):
    lib = tilelang.build(tilelang.parse(SYMBOLIC), target, auto_schedule=False)
    if target.startswith("c"):
        source = lib.get_source()
        assert source.count("#pragma omp parallel for") == 1  # the inner loop is serial
        assert "static void scale_parallel_1(" in source
    a = np.arange(40, dtype="float32").reshape(5, 8)
    b = np.empty_like(a)
    lib["scale"](a, b, 0.5)
    np.testing.assert_allclose(b, a * 0.5 + 5)

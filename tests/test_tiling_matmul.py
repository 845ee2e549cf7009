"""A tiled matmul written as a comprehension: segments over M, N and K, views of A, B
and C, element loops; run under the C and Python backends against NumPy."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import load_sample

import tilelang
from tilelang.ir import For, SizeVar, Var, assert_structural_equal
from tilelang.ir.functor import post_order_visit

tiled_matmul = load_sample("tiling_matmul").tiled_matmul


def _run(func, target, m, n, k):
    rng = np.random.default_rng(m * 10_000 + n * 100 + k)
    a = rng.standard_normal((m, k)).astype("float32")
    b = rng.standard_normal((k, n)).astype("float32")
    c = np.full((m, n), np.nan, dtype="float32")
    lib = tilelang.build(func, target=target)
    lib["matmul"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)


def test_concrete_tiles_are_unrolled_with_ragged_tails():
    func = tiled_matmul(100, 70, 50)
    extents = []
    post_order_visit(func.body, lambda x: extents.append(x) if isinstance(x, For) else None)
    # 4 x 3 tiles of C, each with an init nest and two K steps: 3 nests of i, j (+ k)
    i_loops = sorted({x.extent.value for x in extents if x.loop_var.name == "i"})
    k_loops = sorted({x.extent.value for x in extents if x.loop_var.name == "k"})
    assert i_loops == [4, 32] and k_loops == [18, 32]
    assert sum(1 for x in extents if x.loop_var.name == "i") == 4 * 3 * 3


@pytest.mark.parametrize("sizes", [(100, 70, 50), ("M", "N", "K")], ids=["concrete", "symbolic"])
def test_matmul_prints_and_parses_back(sizes):
    func = tiled_matmul(*(Var(x) if isinstance(x, str) else x for x in sizes))
    assert_structural_equal(tilelang.parse(func.script())["matmul"], func)


@pytest.mark.parametrize("target", ["c", "python", "llvm"])
def test_concrete_ragged_matmul(target):
    _run(tiled_matmul(100, 70, 50), target, 100, 70, 50)


@pytest.mark.parametrize("target", ["c", "python", "llvm"])
@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_symbolic_matmul(target, dtype):
    func = tiled_matmul(*(SizeVar(x, dtype) for x in "MNK"), chunk=16)
    sizes = [(37, 20, 33)] if target == "python" else [(100, 70, 50), (16, 1, 33), (5, 17, 16)]
    for m, n, k in sizes:
        _run(func, target, m, n, k)

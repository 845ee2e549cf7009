"""blockize where an outer iterator has extent 1: as TVM, the body uses the inner
iterator alone (no ``vi_o * 16`` term), and without preserve_unit_iters the outer
binding of a unit loop is its value 0. int64 loops keep int64 iterator domains."""

from __future__ import annotations

import numpy as np
import pytest

import tilelang
from tilelang import tir
from tilelang.ir import assert_structural_equal

BEFORE = """
@T.prim_func
def main(A: T.Buffer((T.int64(16), T.int64(32)), "float32"), B: T.Buffer((T.int64(16), T.int64(32)), "float32")):
    for i0, j0, i1, j1 in T.grid(T.int64(1), T.int64(2), T.int64(16), T.int64(16)):
        with T.block("B"):
            vi = T.axis.spatial(T.int64(16), i0 * T.int64(16) + i1)
            vj = T.axis.spatial(T.int64(32), j0 * T.int64(16) + j1)
            B[vi, vj] = A[vi, vj] + T.float32(1)
"""

AFTER = """
@T.prim_func
def main(A: T.Buffer((T.int64(16), T.int64(32)), "float32"), B: T.Buffer((T.int64(16), T.int64(32)), "float32")):
    for i0, j0 in T.grid(T.int64(1), T.int64(2)):
        with T.block("B_o"):
            vi_o = T.axis.spatial(T.int64(1), {outer})
            vj_o = T.axis.spatial(T.int64(2), j0)
            for i1, j1 in T.grid(T.int64(16), T.int64(16)):
                with T.block("B"):
                    vi_i, vj_i = T.axis.remap("SS", [i1, j1])
                    B[vi_i, vj_o * T.int64(16) + vj_i] = A[vi_i, vj_o * T.int64(16) + vj_i] + T.float32(1)
"""


@pytest.mark.parametrize("preserve, outer", [(True, "i0"), (False, "T.int64(0)")])
def test_blockize_with_a_unit_outer_iterator(preserve, outer):
    mod = tilelang.parse(BEFORE)
    sch = tir.Schedule(mod)
    _, _, i1, _ = sch.get_loops("B")
    sch.blockize(i1, preserve_unit_iters=preserve)
    assert_structural_equal(sch.mod["main"], tilelang.parse(AFTER.format(outer=outer))["main"])
    a = np.random.default_rng(0).random((16, 32), "float32")
    want, got = np.zeros_like(a), np.zeros_like(a)
    tilelang.build(mod, target="python")["main"](a, want)
    tilelang.build(sch.mod, target="python")["main"](a, got)
    np.testing.assert_allclose(got, want)

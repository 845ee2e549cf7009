"""split/fuse produce TVM's IR: fused bindings in the iterator map's normal form
(``f % 16384 // 128``), symbolic fused extents as ``n * 16384``, int64 factors."""

from __future__ import annotations

import numpy as np

import tilelang
from tilelang import tir
from tilelang.ir import expr as E

CUBE = """
@T.prim_func
def main(A: T.Buffer((8, 4, 4), "float32"), B: T.Buffer((8, 4, 4), "float32")):
    for i, j, k in T.grid(8, 4, 4):
        with T.block("B"):
            vi, vj, vk = T.axis.remap("SSS", [i, j, k])
            B[vi, vj, vk] = A[vi, vj, vk] * T.float32(2)
"""

SYMBOLIC = """
@T.prim_func
def main(a: T.handle, b: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (8, 4, n))
    B = T.match_buffer(b, (8, 4, n))
    for i, j, k in T.grid(8, 4, n):
        with T.block("B"):
            vi, vj, vk = T.axis.remap("SSS", [i, j, k])
            B[vi, vj, vk] = A[vi, vj, vk] * T.float32(2)
"""


def run(mod):
    a = np.random.default_rng(0).random((8, 4, 4), "float32")
    b = np.zeros_like(a)
    tilelang.build(mod, target="python")["main"](a, b)
    return b


def test_fuse_binds_in_normal_form():
    mod = tilelang.parse(CUBE)
    sch = tir.Schedule(mod)
    sch.fuse(*sch.get_loops("B"))
    text = sch.mod.script()
    assert "T.axis.spatial(8, i_j_k_fused // 16)" in text
    assert "T.axis.spatial(4, i_j_k_fused % 16 // 4)" in text
    assert "T.axis.spatial(4, i_j_k_fused % 4)" in text
    np.testing.assert_array_equal(run(sch.mod), run(mod))


def test_fuse_symbolic_extent_as_tvm_writes_it():
    sch = tir.Schedule(tilelang.parse(SYMBOLIC))
    sch.fuse(*sch.get_loops("B"))
    text = sch.mod.script()
    assert "range(n * 32)" in text
    assert "i_j_k_fused % (n * 4) // n" in text and "i_j_k_fused // (n * 4)" in text


def test_split_accepts_int64_and_numpy_factors():
    mod = tilelang.parse(CUBE)
    sch = tir.Schedule(mod)
    i, _, _ = sch.get_loops("B")
    i_0, i_1 = sch.split(i, factors=[E.IntImm("int64", 2), np.int64(4)])
    assert [int(sch.get(lp).extent.value) for lp in (i_0, i_1)] == [2, 4]
    np.testing.assert_array_equal(run(sch.mod), run(mod))

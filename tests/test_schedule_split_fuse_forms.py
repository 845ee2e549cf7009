"""The bindings and extents split and fuse write, as TVM writes them: a predicated
split's bindings in the iterator map's normal form, a fused symbolic extent
simplified, a fused symbolic tiling without a redundant ``%``. Structural equality
with the expected IR and numbers on the python backend."""

from __future__ import annotations

import numpy as np

import tilelang
from tilelang.arith import simplify
from tilelang.ir import assert_structural_equal
from tilelang.ir import expr as E

ELEMENTWISE = """
@T.prim_func
def main(A: T.Buffer((20,), "float32"), B: T.Buffer((20,), "float32")):
    for i in range(20):
        with T.block("B"):
            vi = T.axis.spatial(20, i)
            B[vi] = A[vi] * T.float32(2)
"""

# split(i, [4, 2, 3]): 24 > 20, so a predicate; the binding is expanded, the
# predicate keeps the nested form TVM writes.
SPLIT_PREDICATED = """
@T.prim_func
def main(A: T.Buffer((20,), "float32"), B: T.Buffer((20,), "float32")):
    for i_0, i_1, i_2 in T.grid(4, 2, 3):
        with T.block("B"):
            vi = T.axis.spatial(20, i_0 * 6 + i_1 * 3 + i_2)
            T.where((i_0 * 2 + i_1) * 3 + i_2 < 20)
            B[vi] = A[vi] * T.float32(2)
"""


def _run(mod, n):
    a = np.arange(n, dtype="float32")
    b = np.zeros(n, dtype="float32")
    tilelang.build(mod, target="python")["main"](a, b)
    return b


def test_predicated_split_binding_is_in_normal_form():
    before = tilelang.parse(ELEMENTWISE)
    sch = tilelang.Schedule(before)
    (i,) = sch.get_loops("B")
    sch.split(i, factors=[4, 2, 3])
    assert_structural_equal(sch.mod["main"], tilelang.parse(SPLIT_PREDICATED)["main"])
    np.testing.assert_array_equal(_run(sch.mod, 20), _run(before, 20))


SYMBOLIC = """
@T.prim_func
def main(a: T.handle, b: T.handle, M: T.int32, N: T.int32):
    A = T.match_buffer(a, (M, N))
    B = T.match_buffer(b, (M, N))
    for i, j in T.grid(M, N):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
"""

SYMBOLIC_TILED = """
@T.prim_func
def main(a: T.handle, b: T.handle, M: T.int32, N: T.int32):
    A = T.match_buffer(a, (M, N))
    B = T.match_buffer(b, (M, N))
    for f, i_1, j_1 in T.grid((M + 7) // 8 * ((N + 3) // 4), 8, 4):
        with T.block("B"):
            vi = T.axis.spatial(M, f // ((N + 3) // 4) * 8 + i_1)
            vj = T.axis.spatial(N, f % ((N + 3) // 4) * 4 + j_1)
            T.where(f // ((N + 3) // 4) * 8 + i_1 < M and f % ((N + 3) // 4) * 4 + j_1 < N)
            B[vi, vj] = A[vi, vj] * T.float32(2)
"""


def test_fused_symbolic_tiles_need_no_modulo_of_the_whole_extent():
    before = tilelang.parse(SYMBOLIC)
    sch = tilelang.Schedule(before)
    i, j = sch.get_loops("B")
    i0, i1 = sch.split(i, factors=[None, 8])
    j0, j1 = sch.split(j, factors=[None, 4])
    sch.reorder(i0, j0, i1, j1)
    sch.fuse(i0, j0)
    assert_structural_equal(sch.mod["main"], tilelang.parse(SYMBOLIC_TILED)["main"])
    a = np.arange(11 * 6, dtype="float32").reshape(11, 6)
    b = np.zeros((11, 6), dtype="float32")
    tilelang.build(sch.mod, target="python")["main"](a, b, 11, 6)
    np.testing.assert_array_equal(b, a * 2)


NOT_AFFINE = """
@T.prim_func
def main(A: T.Buffer((63, 8), "float32"), B: T.Buffer((63, 8), "float32")):
    for i in range(4):
        for j, k in T.grid(T.min(15, 62 - i * 16) + 1, 8):
            with T.block("B"):
                vi = T.axis.spatial(63, i * 16 + j)
                vj = T.axis.spatial(8, k)
                B[vi, vj] = A[vi, vj] + T.float32(1)
"""


def test_fused_symbolic_extent_is_simplified():
    before = tilelang.parse(NOT_AFFINE)
    sch = tilelang.Schedule(before)
    _, j, k = sch.get_loops("B")
    fused = sch.fuse(j, k)
    extent = sch.get(fused).extent
    assert isinstance(extent, E.Add)  # T.min(15, 62 - i * 16) * 8 + 8
    assert str(extent) == str(simplify(extent))
    a = np.arange(63 * 8, dtype="float32").reshape(63, 8)
    b = np.zeros((63, 8), dtype="float32")
    tilelang.build(sch.mod, target="python")["main"](a, b)
    np.testing.assert_array_equal(b, a + 1)


def test_a_product_cancels_its_mirror_image():
    m, n = E.Var("m", "int32"), E.Var("n", "int32")
    a, b = (m + 7) // 8, (n + 3) // 4
    assert simplify(a * b - b * a).value == 0

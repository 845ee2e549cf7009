"""arith.iter_map.inverse_map inverts a bijective index map the way TVM's
InverseAffineIterMap does (values propagated back in reverse topological order, only
trivial operations folded), so reverse_compute_inline stores where TVM stores."""

from __future__ import annotations

import itertools

import numpy as np

import tilelang
from tilelang import tir
from tilelang.arith.iter_inverse import inverse_map
from tilelang.ir import assert_structural_equal
from tilelang.ir import expr as E
from tilelang.ir.buffer import Range


def var(name):
    return E.Var(name, "int32")


def rng(n):
    return Range(E.IntImm("int32", 0), E.IntImm("int32", n))


def evaluate(expr, env):
    if isinstance(expr, E.IntImm):
        return expr.value
    if isinstance(expr, E.Var):
        return env[expr]
    a, b = evaluate(expr.a, env), evaluate(expr.b, env)
    return {E.FloorDiv: lambda: a // b, E.FloorMod: lambda: a % b, E.Mul: lambda: a * b,
            E.Add: lambda: a + b, E.Sub: lambda: a - b}[type(expr)]()  # fmt: skip


def test_inverse_of_a_fused_quotient_and_remainder_keeps_tvm_spelling():
    vi, vj, vk, vl = (var(n) for n in ("vi", "vj", "vk", "vl"))
    iters = {vi: rng(8), vj: rng(32), vk: rng(8), vl: rng(8)}
    fused = ((vi * 32 + vj) * 8 + vk) * 8 + vl
    x, y = var("x"), var("y")
    inv = inverse_map([fused // 128, fused % 128], iters, [x, y])
    assert str(inv[vi]) == "(y + x * 128) // 2048"
    assert str(inv[vj]) == "(y + x * 128) // 64 % 32"
    assert str(inv[vk]) == "(y + x * 128) // 8 % 8"
    assert str(inv[vl]) == "(y + x * 128) % 8"
    for a, b, c, d in itertools.product(range(8), range(32), (0, 5), (0, 7)):
        env = {vi: a, vj: b, vk: c, vl: d}
        env[x], env[y] = evaluate(fused // 128, env), evaluate(fused % 128, env)
        assert [evaluate(inv[v], env) for v in (vi, vj, vk, vl)] == [a, b, c, d]


def test_inverse_of_a_reversed_index():
    v = var("v")
    out = var("o")
    inv = inverse_map([E.IntImm("int32", 9) - v], {v: rng(10)}, [out])
    for value in range(10):
        assert evaluate(inv[v], {out: 9 - value}) == value


AFFINE_LOAD = """
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), C: T.Buffer((4, 8, 8), "float32")):
    B = T.alloc_buffer((16, 16), "float32")
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j, k in T.grid(4, 8, 8):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSS", [i, j, k])
            C[vi, vj, vk] = B[(vi * 64 + vj * 8 + vk) // 16, (vi * 64 + vj * 8 + vk) % 16]
"""

AFFINE_LOAD_INLINED = """
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), C: T.Buffer((4, 8, 8), "float32")):
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            C[(vj + vi * 16) // 64, (vj + vi * 16) // 8 % 8, (vj + vi * 16) % 8] = A[vi, vj] * T.float32(2)
"""


def test_reverse_compute_inline_of_an_affine_load_stores_through_the_inverse():
    mod = tilelang.parse(AFFINE_LOAD)
    sch = tir.Schedule(mod)
    sch.reverse_compute_inline(sch.get_block("C"))
    assert_structural_equal(sch.mod["main"], tilelang.parse(AFFINE_LOAD_INLINED)["main"])
    a = np.random.default_rng(0).random((16, 16), "float32")
    want, got = np.zeros((4, 8, 8), "float32"), np.zeros((4, 8, 8), "float32")
    tilelang.build(mod, target="python")["main"](a, want)
    tilelang.build(sch.mod, target="python")["main"](a, got)
    np.testing.assert_allclose(got, want)


# The consumer reads a tiled producer over 14 x 14 of its 16 x 16 elements: cvi // 8
# and cvi % 8 with cvi < 14 are no bijection of [0, 14), but they are of [0, 16),
# and the predicate keeps the stores inside the consumer's domain.
TILED_LOAD = """
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), C: T.Buffer((14, 14), "float32")):
    B = T.alloc_buffer((2, 2, 8, 8), "float32")
    for i0, j0, i1, j1 in T.grid(2, 2, 8, 8):
        with T.block("B"):
            vi, vj, vm, vn = T.axis.remap("SSSS", [i0, j0, i1, j1])
            B[vi, vj, vm, vn] = A[vi * 8 + vm, vj * 8 + vn] * T.float32(2)
    for i, j in T.grid(14, 14):
        with T.block("C"):
            cvi, cvj = T.axis.remap("SS", [i, j])
            C[cvi, cvj] = B[cvi // 8, cvj // 8, cvi % 8, cvj % 8] + T.float32(1)
"""

TILED_LOAD_INLINED = """
@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), C: T.Buffer((14, 14), "float32")):
    for i0, j0, i1, j1 in T.grid(2, 2, 8, 8):
        with T.block("B"):
            vi, vj, vm, vn = T.axis.remap("SSSS", [i0, j0, i1, j1])
            T.where(i0 * 8 + i1 < 14 and j0 * 8 + j1 < 14)
            C[vm + vi * 8, vn + vj * 8] = A[vi * 8 + vm, vj * 8 + vn] * T.float32(2) + T.float32(1)
"""


def test_reverse_compute_inline_of_a_tiled_load_pads_the_domain_and_predicates():
    mod = tilelang.parse(TILED_LOAD)
    sch = tir.Schedule(mod)
    sch.reverse_compute_inline(sch.get_block("C"))
    assert_structural_equal(sch.mod["main"], tilelang.parse(TILED_LOAD_INLINED)["main"])
    a = np.random.default_rng(0).random((16, 16), "float32")
    want, got = np.zeros((14, 14), "float32"), np.zeros((14, 14), "float32")
    tilelang.build(mod, target="python")["main"](a, want)
    tilelang.build(sch.mod, target="python")["main"](a, got)
    np.testing.assert_allclose(got, want)

"""TVM's rewrite rules for comparisons with floor division and remainder:
``x // c1 < c2`` is ``x < c1 * c2``, ``c1 < x // c2`` is ``(c1 + 1) * c2 - 1 < x``,
and ``x < c1 and x % c2 < c3`` tightens the first bound to ``c1 - c2 + c3`` (``c2``
dividing ``c1``) or ``c1 - c1 % c2 + c3`` (``c1 % c2 > c3``). Each rewrite is checked
by evaluation over a range of ``x``, with negative values too, and
reverse_compute_inline's over-computation predicate comes out in TVM's words."""

from __future__ import annotations

import pytest

import tilelang
from tilelang import tir
from tilelang.arith import Analyzer, simplify
from tilelang.ir import expr as E

x = E.Var("x", "int32")


def c(v):
    return E.IntImm("int32", v)


def evaluate(expr, value):
    if isinstance(expr, E.IntImm):
        return expr.value
    if isinstance(expr, E.Var):
        return value
    a, b = evaluate(expr.a, value), evaluate(expr.b, value)
    return {E.FloorDiv: lambda: a // b, E.FloorMod: lambda: a % b, E.Mul: lambda: a * b,
            E.Add: lambda: a + b, E.Sub: lambda: a - b, E.LT: lambda: a < b,
            E.And: lambda: bool(a) and bool(b)}[type(expr)]()  # fmt: skip


CASES = [
    (E.LT(x // c(128), c(127)), "x < 16256"),
    (E.LT(c(3), x // c(8)), "31 < x"),
    (E.LT(c(-2), x // c(8)), "-9 < x"),
    (E.And(E.LT(x, c(16256)), E.LT(x % c(128), c(127))), "x < 16255 and x % 128 < 127"),
    (E.And(E.LT(x // c(128), c(127)), E.LT(x % c(128), c(127))), "x < 16255 and x % 128 < 127"),
    (E.And(E.LT(x, c(100)), E.LT(x % c(16), c(2))), "x < 98 and x % 16 < 2"),  # 100 % 16 = 4 > 2
    # left alone: 100 % 16 = 4 is not above 6
    (E.And(E.LT(x, c(100)), E.LT(x % c(16), c(6))), "x < 100 and x % 16 < 6"),
    (E.And(E.LT(x, c(128)), E.LT(x % c(16), c(20))), "x < 128"),  # always true: folded
]


@pytest.mark.parametrize("expr, want", CASES)
def test_rewrite_keeps_the_truth(expr, want):
    result = simplify(expr)
    assert str(result) == want
    for value in range(-300, 17000, 7):
        assert bool(evaluate(result, value)) == bool(evaluate(expr, value)), value


def test_bounds_decide_first():
    ana = Analyzer()
    with ana.bind(x, 0, 64):  # x // 128 is 0: the comparison folds
        assert ana.can_prove(E.LT(x // c(128), c(1)))
        assert str(ana.simplify(E.LT(x // c(16), c(2)))) == "x < 32"


BEFORE = """
@T.prim_func
def main(A: T.Buffer((128, 128), "float32"), C: T.Buffer((127, 127), "float32")):
    B = T.alloc_buffer((128, 128))
    for i in range(16384):
        with T.block("B"):
            vi = T.axis.spatial(128, i // 128)
            vj = T.axis.spatial(128, i % 128)
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(127, 127):
        with T.block("C"):
            cvi, cvj = T.axis.remap("SS", [i, j])
            C[cvi, cvj] = B[cvi, cvj] + T.float32(1)
"""


def test_reverse_inline_predicate_in_tvm_words():
    sch = tir.Schedule(tilelang.parse(BEFORE))
    sch.reverse_compute_inline(sch.get_block("C"))
    assert "T.where(i < 16255 and i % 128 < 127)" in sch.mod["main"].script()
    # the inlined program stores exactly C's elements
    import numpy as np

    from tilelang.runtime.build import build

    a = np.random.default_rng(0).standard_normal((128, 128)).astype("float32")
    out = np.zeros((127, 127), "float32")
    build(sch.mod, "python", auto_schedule=False)["main"](a, out)
    np.testing.assert_allclose(out, a[:127, :127] * 2 + 1, rtol=1e-6)


def test_a_bound_past_the_type_is_no_rewrite():
    """A rewritten bound the type cannot hold leaves the comparison as it was (found
    by the differential fuzz test: uint32 ``x // 10 < 4294967295``)."""
    u = E.Var("u", "uint32")
    kept = simplify(E.LT(u // E.IntImm("uint32", 10), E.IntImm("uint32", 4294967295)))
    assert isinstance(kept, E.LT) and isinstance(kept.a, E.FloorDiv)
    kept = simplify(E.LT(c(2**31 - 2), x // c(2)))  # (c + 1) * 2 - 1 is past int32
    assert isinstance(kept, E.LT) and isinstance(kept.b, E.FloorDiv)
    # x < 0 and x % 4 < 2 would tighten to x < -2: not a uint32 constant
    zero, four, two = (E.IntImm("uint32", v) for v in (0, 4, 2))
    simplify(E.And(E.LT(u, zero), E.LT(u % four, two)))  # no TIRTypeError

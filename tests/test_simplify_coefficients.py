"""The simplifier moves the whole periods of any coefficient out of a floor division
(``(x * 360 + 359) // 16`` is ``x * 22 + 22`` for ``0 <= x <= 1``) and absorbs
``min(max(x, y), x)`` into ``x``, as TVM's canonical and rewrite simplifiers do.
Each rewrite is checked by evaluation over the bounded range."""

from __future__ import annotations

import pytest

from tilelang.arith import Analyzer, ConstBound, simplify
from tilelang.ir import expr as E

x, y = E.Var("x", "int32"), E.Var("y", "int32")


def c(v):
    return E.IntImm("int32", v)


def evaluate(expr, env):
    if isinstance(expr, E.IntImm):
        return expr.value
    if isinstance(expr, E.Var):
        return env[expr]
    a, b = evaluate(expr.a, env), evaluate(expr.b, env)
    return {E.FloorDiv: lambda: a // b, E.FloorMod: lambda: a % b, E.Mul: lambda: a * b,
            E.Add: lambda: a + b, E.Sub: lambda: a - b, E.Min: lambda: min(a, b),
            E.Max: lambda: max(a, b)}[type(expr)]()  # fmt: skip


@pytest.mark.parametrize(
    "expr, want",
    [
        ((x * 360 + 359) // 16, "x * 22 + 22"),
        ((x * 360) // 16, "x * 22"),
        ((x * 360 + 7) // 16 - (x * 360) // 16 + 23, "23"),
        ((x * 360 + 359) % 16, "x * 8 + 7"),
    ],
)
def test_whole_periods_of_a_coefficient_leave_the_division(expr, want):
    ana = Analyzer()
    ana.var_bounds[x] = ConstBound(0, 1)
    got = ana.simplify(expr)
    assert str(got) == want
    for value in (0, 1):
        assert evaluate(got, {x: value}) == evaluate(expr, {x: value})


def test_a_remainder_spanning_two_periods_stays_divided():
    ana = Analyzer()
    ana.var_bounds[x] = ConstBound(0, 3)
    expr = (x * 360 + 359) // 16
    got = ana.simplify(expr)
    assert any(isinstance(n, E.FloorDiv) for n in _nodes(got))
    for value in range(4):
        assert evaluate(got, {x: value}) == evaluate(expr, {x: value})


@pytest.mark.parametrize(
    "expr",
    [
        E.Min(E.Max(x, y), x),
        E.Min(x, E.Max(y, x)),
        E.Max(E.Min(x, y), x),
        E.Max(x, E.Min(x, y)),
    ],
)
def test_min_of_a_max_with_the_same_operand_is_that_operand(expr):
    assert simplify(expr) is x
    for a in range(-2, 3):
        for b in range(-2, 3):
            assert evaluate(expr, {x: a, y: b}) == a


def _nodes(expr):
    out, stack = [], [expr]
    while stack:
        node = stack.pop()
        out.append(node)
        stack += [getattr(node, f) for f in ("a", "b") if hasattr(node, f)]
    return out

"""The simplifier splits terms whose coefficient divides a floor divisor into whole
periods: ``(x * 8 + 7) // 16`` is ``x // 2`` (what makes compute_at's region of a
tiled repeat a single point, as in TVM). Checked by evaluation on every sign."""

from __future__ import annotations

import itertools

import pytest

from tilelang.arith import simplify
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
            E.Add: lambda: a + b, E.Sub: lambda: a - b}[type(expr)]()  # fmt: skip


def test_whole_periods_leave_the_division():
    assert str(simplify((x * c(8) + c(7)) // c(16))) == "x // 2"
    assert str(simplify((x * c(8) + c(7)) % c(16))) == "x % 2 * 8 + 7"


@pytest.mark.parametrize(
    "expr",
    [(x * c(8) + c(7)) // c(16), (x * c(8) + c(9)) // c(16), (x * c(4) + y * c(8) + c(3)) // c(16),
     (x * c(8) + c(7)) % c(16), (x * c(6) + c(5)) // c(12), (x * c(8) + y) // c(16)],
)  # fmt: skip
def test_rewrites_evaluate_like_the_original(expr):
    simple = simplify(expr)
    for vx, vy in itertools.product(range(-20, 21), range(-3, 4)):
        env = {x: vx, y: vy}
        assert evaluate(simple, env) == evaluate(expr, env), (expr, simple, env)

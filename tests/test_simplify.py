"""The arithmetic simplifier (tilelang.arith): linear forms, divisions of split
indices, bound-decided comparisons, constant folding with machine semantics."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tilelang.arith import Analyzer, const_bound, simplify
from tilelang.arith.constfold import trunc_div, trunc_mod, wrap_int
from tilelang.ir import (
    Broadcast,
    FloatImm,
    FloorDiv,
    FloorMod,
    IntImm,
    Max,
    Min,
    Ramp,
    Var,
    structural_equal,
)
from tilelang.ir import expr as E
from tilelang.ir.dtype import DataType


def same(a, b) -> bool:
    return structural_equal(a, b)


def test_split_index_floordiv_and_floormod():
    i0, i1 = Var("i_0"), Var("i_1")
    ana = Analyzer()
    with ana.bind(i1, 0, 3):
        assert ana.simplify((i0 * 4 + i1) // 4) is i0
        assert ana.simplify((i0 * 4 + i1) % 4) is i1
        # a constant offset that stays inside the period folds too
        assert same(ana.simplify((i0 * 8 + i1 + 4) // 4), i0 * 2 + 1)
    # without bounds on i_1 the multiple of 4 still splits off
    assert same(simplify((i0 * 4 + i1) // 4), i0 + i1 // 4)
    assert same(simplify((i0 * 4 + i1) % 4), i1 % 4)


def test_linear_terms_collect_and_cancel():
    x, y = Var("x"), Var("y")
    assert same(simplify(x * 2 + x * 3 + 1 - 1), x * 5)
    assert same(simplify(x * 4 + y - x * 4), y)
    assert same(simplify((x + 1) * 4 - 4), x * 4)
    assert same(simplify(x * 1 + 0), x)
    assert same(simplify(x - y - y), x - y * 2)
    assert isinstance(simplify(x - x), IntImm) and simplify(x - x).value == 0


def test_unchanged_expressions_keep_their_identity():
    x, y = Var("x"), Var("y")
    e = x * 4 + y
    assert simplify(e) is e
    c = x < y
    assert simplify(c) is c


def test_comparisons_decided_by_loop_bounds():
    k, i = Var("k"), Var("i")
    ana = Analyzer()
    with ana.bind(k, 0, 127), ana.bind(i, 0, 9):
        assert ana.can_prove(k < 128)
        assert ana.can_prove(k >= 0)
        assert same(ana.simplify(k < 100), k < 100)  # undecided: kept
        false = ana.simplify(i * 10 + 3 >= 100)
        assert isinstance(false, IntImm) and false.value == 0
        assert ana.simplify(Min(i, IntImm("int32", 20))) is i
        assert same(ana.simplify(Max(i, IntImm("int32", 20))), IntImm("int32", 20))


def test_size_vars_are_non_negative():
    n = E.SizeVar("n")
    assert const_bound(n).lo == 0
    assert Analyzer().can_prove(n + 1 > 0)


def test_constant_folding_uses_machine_semantics():
    assert simplify(E.Div(IntImm("int32", -7), IntImm("int32", 2))).value == -3
    assert simplify(E.Mod(IntImm("int32", -7), IntImm("int32", 2))).value == -1
    assert simplify(FloorDiv(IntImm("int32", -7), IntImm("int32", 2))).value == -4
    assert simplify(FloorMod(IntImm("int32", -7), IntImm("int32", 2))).value == 1
    big = IntImm("int32", 2**31 - 1)
    assert simplify(big + IntImm("int32", 1)).value == -(2**31)
    assert simplify(E.Cast("int8", IntImm("int32", 300))).value == 44
    assert simplify(E.Cast("int32", FloatImm("float32", -2.7))).value == -2
    third = simplify(FloatImm("float32", 1.0) / FloatImm("float32", 3.0))
    assert third.value == float(__import__("numpy").float32(1) / __import__("numpy").float32(3))


def test_select_and_if_then_else_fold_on_constant_conditions():
    from tilelang.ir import op

    x, y = Var("x"), Var("y")
    t = IntImm("bool", 1)
    assert simplify(op.select(t, x, y)) is x
    assert simplify(op.if_then_else(IntImm("bool", 0), x, y)) is y
    assert simplify(E.And(t, x < y)).__class__ is E.LT


def test_vector_index_arithmetic_stays_a_ramp():
    b = Var("b")
    ramp = Ramp(b, IntImm("int32", 1), 4)
    e = ramp * Broadcast(IntImm("int32", 16), 4) + Broadcast(IntImm("int32", 3), 4)
    result = simplify(e)
    assert isinstance(result, Ramp)
    assert same(result.base, b * 16 + 3) and result.stride.value == 16


def test_deep_sum_does_not_recurse():
    x = Var("x")
    e = x
    for _ in range(5000):
        e = e + 1
    result = simplify(e)
    assert same(result, x + 5000)


def test_wrap_and_trunc_helpers():
    assert wrap_int(2**32 + 5, DataType("int32")) == 5
    assert wrap_int(-1, DataType("uint8")) == 255
    assert trunc_div(-7, 2) == -3 and trunc_mod(-7, 2) == -1
    assert trunc_div(7, -2) == -3 and trunc_mod(7, -2) == 1


# ------------------------------------------------------------ property test


def _evaluate(e, env):
    if isinstance(e, IntImm):
        return e.value
    if isinstance(e, E.Var):
        return env[e]
    a, b = _evaluate(e.a, env), _evaluate(e.b, env)
    return {
        E.Add: lambda: a + b,
        E.Sub: lambda: a - b,
        E.Mul: lambda: a * b,
        E.FloorDiv: lambda: a // b,
        E.FloorMod: lambda: a % b,
        E.Min: lambda: min(a, b),
        E.Max: lambda: max(a, b),
    }[type(e)]()


def _random_expr(rng, variables, depth):
    if depth == 0 or rng.random() < 0.25:
        if rng.random() < 0.6:
            return rng.choice(variables)
        return IntImm("int32", rng.randint(-6, 9))
    kind = rng.choice(["add", "sub", "mul", "div", "mod", "min", "max"])
    a = _random_expr(rng, variables, depth - 1)
    if kind in ("div", "mod"):
        c = IntImm("int32", rng.randint(1, 8))
        return FloorDiv(a, c) if kind == "div" else FloorMod(a, c)
    if kind == "mul":
        return a * IntImm("int32", rng.randint(-4, 5))
    b = _random_expr(rng, variables, depth - 1)
    return {"add": a + b, "sub": a - b, "min": Min(a, b), "max": Max(a, b)}[kind]


@settings(max_examples=150, deadline=None)
@given(st.integers(min_value=0, max_value=2**31 - 1))
def test_simplified_expressions_evaluate_the_same(seed):
    rng = random.Random(seed)
    variables = [Var("x"), Var("y"), Var("z")]
    bounds = {v: (rng.randint(-5, 3), rng.randint(4, 12)) for v in variables}
    expr = _random_expr(rng, variables, 4)
    simplified = simplify(expr, bounds)
    for _ in range(8):
        env = {v: rng.randint(lo, hi) for v, (lo, hi) in bounds.items()}
        assert _evaluate(simplified, env) == _evaluate(expr, env)


@pytest.mark.parametrize("value", [0, 3, 4, 7])
def test_floormod_of_bounded_remainder(value):
    i0, i1 = Var("i_0"), Var("i_1")
    ana = Analyzer()
    with ana.bind(i1, 0, 3):
        e = ana.simplify((i0 * 4 + i1 + value) % 4)
        env = {i0: 5, i1: 2}
        assert _evaluate(e, env) == (5 * 4 + 2 + value) % 4

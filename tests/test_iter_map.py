"""Iterator maps (tilelang.arith.iter_map): split/fused iterator sums, bijective and
surjective answers, predicates on fused iterators, TVM's normal form."""

from __future__ import annotations

import itertools

import pytest

from tilelang.arith.iter_map import detect_iter_map, iter_map_simplify, product, split_expr
from tilelang.ir import expr as E
from tilelang.ir.buffer import Range

i, j, k, f, n = (E.Var(x, "int32") for x in ("i", "j", "k", "f", "n"))


def c(x):
    return E.IntImm("int32", x)


def rng(extent):
    return Range(c(0), c(extent))


def text(expr):
    return str(expr)


def test_split_of_fused_iterator_is_recognised_and_normalised():
    iters = {f: rng(2097152)}
    idx = [f // c(16384), f // c(128) % c(128), f % c(128)]
    result = detect_iter_map(idx, iters, bijective=True)
    assert result.indices is not None, result.errors
    assert [text(e) for e in iter_map_simplify(idx, iters)] == [
        "f // 16384",
        "f % 16384 // 128",
        "f % 128",
    ]


def test_division_of_a_fused_sum():
    iters = {i: rng(4), j: rng(32)}
    result = detect_iter_map([(i * c(32) + j) // c(128), (i * c(32) + j) % c(128)], iters)
    assert result.indices is not None, result.errors
    result = detect_iter_map(
        [(i * c(32) + j) // c(8), (i * c(32) + j) % c(8)], iters, bijective=True
    )
    assert result.indices is not None, result.errors


def test_reversed_and_offset_indices_are_affine():
    iters = {i: rng(10)}
    assert detect_iter_map([c(9) - i], iters, bijective=True).indices is not None
    assert detect_iter_map([i + n], iters, bijective=True).indices is not None


@pytest.mark.parametrize(
    "indices, why",
    [
        ([i * i], "non-constant"),
        ([i * c(16)], "strides"),  # not one dense iterator
        ([i, i], "twice"),
        ([(i * c(4) + j) // c(3)], "divide"),
        ([i * n], "non-constant"),
    ],
)
def test_not_an_iterator_map(indices, why):
    result = detect_iter_map(indices, {i: rng(8), j: rng(4)})
    assert result.indices is None
    assert why in result.errors[0]


def test_bijective_needs_every_iterator():
    iters = {i: rng(8), j: rng(4)}
    assert detect_iter_map([i], iters).indices is not None
    assert "not used" in detect_iter_map([i], iters, bijective=True).errors[0]


def test_predicate_bounds_a_fused_iterator():
    iters = {i: rng(4), j: rng(5)}
    fused = i * c(5) + j
    ok = detect_iter_map([fused], iters, predicate=E.LT(fused, c(16)), bijective=True)
    assert ok.indices is not None, ok.errors
    bad = detect_iter_map([i, j], iters, predicate=E.LT(fused, c(16)))
    assert bad.indices is None


def test_symbolic_split_expr_and_product():
    assert text(product([c(128), c(128), n])) == "n * 16384"
    assert text(split_expr(f, n, c(128), product([c(128), c(128), n]))) == "f % (n * 128) // n"
    assert text(split_expr(f, product([c(128), n]), c(128), product([c(128), c(128), n]))) == (
        "f // (n * 128)"
    )


def test_normal_forms_evaluate_like_the_originals():
    iters = {f: rng(96)}
    idx = [f // c(32), f // c(8) % c(4), f % c(8)]
    normal = iter_map_simplify(idx, iters)
    for value in range(96):
        want = [value // 32, value // 8 % 4, value % 8]
        got = [_eval(e, {f: value}) for e in normal]
        assert got == want


def _eval(expr, env):
    if isinstance(expr, E.IntImm):
        return expr.value
    if isinstance(expr, E.Var):
        return env[expr]
    a, b = _eval(expr.a, env), _eval(expr.b, env)
    ops = {E.FloorDiv: lambda: a // b, E.FloorMod: lambda: a % b, E.Mul: lambda: a * b,
           E.Add: lambda: a + b, E.Sub: lambda: a - b}  # fmt: skip
    return ops[type(expr)]()


def test_bijective_maps_really_are_bijections():
    iters = {i: rng(6), j: rng(4)}
    fused = i * c(4) + j
    idx = [fused // c(8), fused % c(8)]
    assert detect_iter_map(idx, iters, bijective=True).indices is not None
    seen = {(_eval(idx[0], {i: a, j: b}), _eval(idx[1], {i: a, j: b}))
            for a, b in itertools.product(range(6), range(4))}  # fmt: skip
    assert len(seen) == 24


def test_symbolic_extent_iterators_are_used_whole():
    iters = {i: Range(c(0), n), j: rng(4)}
    assert detect_iter_map([i, j], iters, bijective=True).indices is not None
    assert detect_iter_map([i * c(4) + j], iters, bijective=True).indices is None
    assert detect_iter_map([i // c(2)], iters).indices is None


def test_surjective_accepts_a_sliding_window_but_bijective_does_not():
    iters = {i: rng(4), j: rng(3)}
    assert detect_iter_map([i + j], iters).indices is not None
    assert detect_iter_map([i + j], iters, bijective=True).indices is None
    assert detect_iter_map([i + j, j], iters).indices is None  # j used twice


def test_inverse_of_a_bijective_map_recovers_the_iterators():
    from tilelang.arith.iter_inverse import inverse_map

    k, m = E.Var("k", "int32"), E.Var("m", "int32")
    iters = {i: rng(8), j: rng(32), k: rng(8), m: rng(8)}
    flat = ((i * c(32) + j) * c(8) + k) * c(8) + m
    x, y = E.Var("x", "int32"), E.Var("y", "int32")
    inv = inverse_map([flat // c(128), flat % c(128)], iters, [x, y])
    assert inv is not None
    for a, b in [(0, 0), (3, 77), (127, 127), (64, 5)]:
        env = {x: a, y: b}
        got = [_eval(inv[v], env) for v in (i, j, k, m)]
        value = a * 128 + b
        assert got == [value // 2048, value // 64 % 32, value // 8 % 8, value % 8]
    assert inverse_map([i + j], {i: rng(4), j: rng(4)}, [x]) is None

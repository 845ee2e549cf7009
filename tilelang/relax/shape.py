"""Symbolic shape unification.

A symbolic size (``m``, ``n``, ``k``) is bound the first time it is met and checked
everywhere after: in the arguments of a call to the graph function, and across the
arguments and output of every tensor function it calls. A mismatch is an
:class:`~tilelang.errors.ArgumentError` that names the dimension, the size variable
and both values, raised before any tensor function runs.

The same checker works while building, when values may still be symbolic: then only
provable mismatches (two different constants) are reported.
"""

from __future__ import annotations

from tilelang.errors import ArgumentError
from tilelang.ir import (
    Add,
    Div,
    FloorDiv,
    FloorMod,
    IntImm,
    Max,
    Min,
    Mod,
    Mul,
    PrimExpr,
    Sub,
    Var,
    structural_equal,
)
from tilelang.relax.struct_info import dim_text, shape_text

_FOLD = {
    Add: lambda a, b: a + b,
    Sub: lambda a, b: a - b,
    Mul: lambda a, b: a * b,
    FloorDiv: lambda a, b: a // b,
    FloorMod: lambda a, b: a % b,
    Div: lambda a, b: int(a / b),
    Mod: lambda a, b: a - b * int(a / b),
    Min: min,
    Max: max,
}


class ShapeEnv:
    """Values of symbolic sizes (an int, or an expression while building), each with
    the place that bound it, for messages."""

    def __init__(self):
        self.values: dict[Var, tuple[object, str]] = {}

    def value_of(self, var: Var):
        entry = self.values.get(var)
        return None if entry is None else entry[0]

    def bind(self, var: Var, value, origin: str) -> None:
        self.values[var] = (value, origin)

    def evaluate(self, expr):
        """``expr`` with the bound sizes put in: an int when it folds to a constant,
        else an expression (or the unbound variable)."""
        if isinstance(expr, int):
            return expr
        if isinstance(expr, IntImm):
            return expr.value
        if isinstance(expr, Var):
            value = self.value_of(expr)
            return expr if value is None else value
        fold = _FOLD.get(type(expr))
        if fold is not None:
            a, b = self.evaluate(expr.a), self.evaluate(expr.b)
            if isinstance(a, int) and isinstance(b, int):
                if b == 0 and type(expr) in (FloorDiv, FloorMod, Div, Mod):
                    raise ArgumentError(f"division by zero in the shape expression {expr!r}")
                return fold(a, b)
        return expr

    def match(self, expected, actual, what: str, strict: bool = True) -> None:
        """Checks ``actual`` (ints, or expressions while building) against the
        ``expected`` shape, binding the sizes met for the first time.

        ``strict`` (run time) requires every expected dimension to be decided.
        """
        expected = tuple(expected)
        actual = tuple(actual)
        if len(expected) != len(actual):
            raise ArgumentError(
                f"{what}: expected rank {len(expected)} {shape_text(expected)}, got rank "
                f"{len(actual)} {shape_text(actual)}"
            )
        for index, (want, got) in enumerate(zip(expected, actual)):
            got = self.evaluate(got)
            if isinstance(want, Var) and self.value_of(want) is None:
                self.bind(want, got, f"dimension {index} of {what}")
                continue
            value = self.evaluate(want)
            if isinstance(value, int) and isinstance(got, int):
                if value != got:
                    raise ArgumentError(self._mismatch(what, index, want, value, got))
            elif isinstance(value, PrimExpr) and isinstance(got, PrimExpr):
                continue  # symbolic on both sides: decided at run time
            elif strict and not isinstance(value, int):
                raise ArgumentError(
                    f"{what}: dimension {index} ({dim_text(want)}) is not determined by "
                    "the arguments"
                )

    def _mismatch(self, what, index, want, value, got) -> str:
        if isinstance(want, Var):
            origin = self.values[want][1]
            return (
                f"{what}: dimension {index} is {got}, but {want.name} = {value} (bound by {origin})"
            )
        if isinstance(want, IntImm):
            return f"{what}: dimension {index} is {got}, expected {value}"
        return f"{what}: dimension {index} is {got}, expected {dim_text(want)} = {value}"

    def concrete(self, shape, what: str) -> tuple[int, ...]:
        """``shape`` as ints; every size must be bound."""
        values = tuple(self.evaluate(d) for d in shape)
        for index, value in enumerate(values):
            if not isinstance(value, int):
                raise ArgumentError(
                    f"{what}: dimension {index} ({dim_text(shape[index])}) is not determined "
                    "by the arguments"
                )
        return values


def same_shape(a, b) -> bool:
    """True when two shapes are provably the same (used for storage reuse)."""
    return len(a) == len(b) and all(structural_equal(x, y) for x, y in zip(a, b))

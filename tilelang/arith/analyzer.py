"""The Analyzer: variable bounds in scope, and the entry points that use them."""

from __future__ import annotations

from contextlib import contextmanager

from tilelang.arith.bound import ConstBound, const_bound, mul_bounds
from tilelang.arith.linear import LinearForm
from tilelang.ir import expr as E
from tilelang.ir.node import deep_recursion


class Analyzer:
    """Holds inclusive constant bounds of variables and simplifies under them.

    Example::

        ana = Analyzer()
        with ana.bind(i_1, 0, 3):
            ana.simplify((i_0 * 4 + i_1) // 4)    # -> i_0
    """

    def __init__(self):
        self.var_bounds: dict[E.Var, ConstBound] = {}

    @contextmanager
    def bind(self, var: E.Var, lo: int | None, hi: int | None):
        """Within the ``with`` body, ``lo <= var <= hi`` (either may be None)."""
        old = self.var_bounds.get(var)
        self.var_bounds[var] = ConstBound(lo, hi)
        try:
            yield
        finally:
            if old is None:
                del self.var_bounds[var]
            else:
                self.var_bounds[var] = old

    @contextmanager
    def bind_range(self, var: E.Var, min_value: E.PrimExpr, extent: E.PrimExpr):
        """``var`` runs over ``[min_value, min_value + extent)`` (a loop's range)."""
        lo = self.const_bound(min_value).lo
        hi_bound = self.const_bound(min_value).hi
        ext = self.const_bound(extent).hi
        hi = None if hi_bound is None or ext is None else hi_bound + ext - 1
        with self.bind(var, lo, hi):
            yield

    def const_bound(self, expr: E.PrimExpr) -> ConstBound:
        """Inclusive constant bounds of an integer expression."""
        with deep_recursion():
            return const_bound(expr, self.var_bounds)

    def form_bound(self, form: LinearForm) -> ConstBound:
        """Bounds of a linear form, term by term (tighter than bounding its rebuilt
        expression, which would see ``x - x`` as two unrelated values)."""
        lo = hi = form.const
        for atom, coeff in form.live_terms():
            b = mul_bounds(self.const_bound(atom), ConstBound(coeff, coeff))
            lo = None if lo is None or b.lo is None else lo + b.lo
            hi = None if hi is None or b.hi is None else hi + b.hi
        return ConstBound(lo, hi)

    def simplify(self, expr: E.PrimExpr) -> E.PrimExpr:
        """``expr`` simplified under the known bounds; the same object when nothing
        changed."""
        from tilelang.arith.simplifier import Simplifier

        if isinstance(expr, (E.Var, E.IntImm, E.FloatImm, E.StringImm)):
            return expr
        return Simplifier(self).visit(expr)

    def can_prove(self, cond: E.PrimExpr) -> bool:
        """True when ``cond`` simplifies to the constant true."""
        result = self.simplify(cond)
        return isinstance(result, E.IntImm) and bool(result.value)


def simplify(expr: E.PrimExpr, var_bounds: dict | None = None) -> E.PrimExpr:
    """``expr`` simplified; ``var_bounds`` maps variables to inclusive ``(lo, hi)``."""
    analyzer = Analyzer()
    for var, (lo, hi) in (var_bounds or {}).items():
        analyzer.var_bounds[var] = ConstBound(lo, hi)
    return analyzer.simplify(expr)


def const_value(expr) -> int | None:
    """The integer value of ``expr`` once simplified (``n - n + 4`` is 4), or None when
    it is not a constant; Python ints pass through. The schedule's test for constant
    extents and offsets."""
    if isinstance(expr, E.IntImm):
        return expr.value
    if isinstance(expr, int) and not isinstance(expr, bool):
        return expr
    if not isinstance(expr, E.PrimExpr) or not (expr.dtype.is_integer() and expr.dtype.lanes == 1):
        return None
    expr = simplify(expr)
    return expr.value if isinstance(expr, E.IntImm) else None

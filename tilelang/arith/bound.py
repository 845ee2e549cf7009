"""Constant interval bounds of integer expressions (TVM's ``ConstIntBound``).

``const_bound(expr, var_bounds)`` is an inclusive ``ConstBound(lo, hi)``; either side
is ``None`` when unknown. A ``SizeVar`` is at least 0. Only integer scalar
expressions get bounds; anything else is ``(None, None)``.
"""

from __future__ import annotations

import attrs

from tilelang.ir import expr as E
from tilelang.ir.functor import NodeFunctor


@attrs.frozen
class ConstBound:
    """Inclusive ``[lo, hi]``; ``None`` means unbounded on that side."""

    lo: int | None
    hi: int | None

    def is_const(self) -> bool:
        return self.lo is not None and self.lo == self.hi


UNKNOWN = ConstBound(None, None)


def _add(x, y):
    return None if x is None or y is None else x + y


def _floordiv(x, c):
    return None if x is None else x // c


class _Bounder(NodeFunctor):
    def __init__(self, var_bounds):
        self.var_bounds = var_bounds

    def bound(self, expr: E.PrimExpr) -> ConstBound:
        if not (expr.dtype.is_integer() and expr.dtype.lanes == 1):
            return UNKNOWN
        return self.visit(expr)

    def generic_visit(self, expr):
        return UNKNOWN

    def visit_int_imm(self, op):
        return ConstBound(op.value, op.value)

    def visit_var(self, op):
        known = self.var_bounds.get(op)
        if known is not None:
            return known
        return ConstBound(0, None) if isinstance(op, E.SizeVar) else UNKNOWN

    def visit_add(self, op):
        a, b = self.bound(op.a), self.bound(op.b)
        return ConstBound(_add(a.lo, b.lo), _add(a.hi, b.hi))

    def visit_sub(self, op):
        a, b = self.bound(op.a), self.bound(op.b)
        neg_lo = None if b.hi is None else -b.hi
        neg_hi = None if b.lo is None else -b.lo
        return ConstBound(_add(a.lo, neg_lo), _add(a.hi, neg_hi))

    def visit_mul(self, op):
        return mul_bounds(self.bound(op.a), self.bound(op.b))

    def visit_floor_div(self, op):
        return floordiv_bounds(self.bound(op.a), self.bound(op.b))

    def visit_floor_mod(self, op):
        return floormod_bounds(self.bound(op.a), self.bound(op.b))

    def visit_div(self, op):
        a = self.bound(op.a)
        if a.lo is not None and a.lo >= 0:
            return floordiv_bounds(a, self.bound(op.b))
        return UNKNOWN

    def visit_mod(self, op):
        return mod_bounds(self.bound(op.a), self.bound(op.b))

    def visit_min(self, op):
        a, b = self.bound(op.a), self.bound(op.b)
        lo = None if a.lo is None or b.lo is None else min(a.lo, b.lo)
        his = [h for h in (a.hi, b.hi) if h is not None]
        return ConstBound(lo, min(his) if his else None)

    def visit_max(self, op):
        a, b = self.bound(op.a), self.bound(op.b)
        los = [lo for lo in (a.lo, b.lo) if lo is not None]
        hi = None if a.hi is None or b.hi is None else max(a.hi, b.hi)
        return ConstBound(max(los) if los else None, hi)

    def visit_select(self, op):
        a, b = self.bound(op.true_value), self.bound(op.false_value)
        lo = None if a.lo is None or b.lo is None else min(a.lo, b.lo)
        hi = None if a.hi is None or b.hi is None else max(a.hi, b.hi)
        return ConstBound(lo, hi)

    def visit_cast(self, op):
        src = op.value.dtype
        if src.is_integer() and src.lanes == 1 and op.dtype.bits >= src.bits:
            if src.is_uint() or op.dtype.is_int() or op.dtype.bits > src.bits:
                return self.bound(op.value)
        return UNKNOWN


def floordiv_bounds(a: ConstBound, b: ConstBound) -> ConstBound:
    """The bound of ``a // b`` (rounding down) for a positive constant ``b``."""
    if b.is_const() and b.lo > 0:
        return ConstBound(_floordiv(a.lo, b.lo), _floordiv(a.hi, b.lo))
    return UNKNOWN


def floormod_bounds(a: ConstBound, b: ConstBound) -> ConstBound:
    """The bound of ``a % b`` (rounding down) for a positive constant ``b``: exact when
    ``a`` stays within one period, else ``[0, b - 1]``."""
    if not (b.is_const() and b.lo > 0):
        return UNKNOWN
    c = b.lo
    if a.lo is not None and a.hi is not None and a.lo // c == a.hi // c:
        return ConstBound(a.lo % c, a.hi % c)
    return ConstBound(0, c - 1)


def mod_bounds(a: ConstBound, b: ConstBound) -> ConstBound:
    """The bound of the truncating ``a % b`` (C's) for a positive constant ``b``."""
    if a.lo is not None and a.lo >= 0:
        return floormod_bounds(a, b)
    if b.is_const() and b.lo > 0:
        return ConstBound(-(b.lo - 1), b.lo - 1)
    return UNKNOWN


def mul_bounds(a: ConstBound, b: ConstBound) -> ConstBound:
    """The bound of a product of two bounded values."""
    if a.is_const() and a.lo == 0 or b.is_const() and b.lo == 0:
        return ConstBound(0, 0)
    if None in (a.lo, a.hi, b.lo, b.hi):
        for x, y in ((a, b), (b, a)):
            if x.is_const():
                c = x.lo
                lo, hi = (y.lo, y.hi) if c > 0 else (y.hi, y.lo)
                return ConstBound(None if lo is None else lo * c, None if hi is None else hi * c)
        return UNKNOWN
    products = [a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi]
    return ConstBound(min(products), max(products))


def const_bound(expr: E.PrimExpr, var_bounds: dict | None = None) -> ConstBound:
    """Inclusive constant bounds of an integer expression; see the module docstring."""
    return _Bounder(var_bounds or {}).bound(expr)

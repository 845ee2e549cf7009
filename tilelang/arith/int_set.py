"""Symbolic integer intervals (TVM's ``arith.IntSet`` / ``EvalSet``).

:func:`eval_interval` bounds an index expression while some of its variables range over
intervals (loop variables relaxed over their loops). Bounds are *inclusive* and are
expressions, so a bound may stay symbolic (``vi * 16`` .. ``vi * 16 + 15``); ``None``
means "no bound known" and callers fall back to a buffer's full extent.

Sums, differences, products with constants, divisions by constants, ``min``/``max``
and ``Select`` keep symbolic bounds, folded through the simplifier's linear forms.
Where only constant bounds make sense (``%``, a product of two ranging values) the
operands' bounds go through the same rules as :func:`~tilelang.arith.const_bound`.

Example::

    i = Var("i")
    lo, hi = eval_interval(vo * 16 + i, {i: Range(0, 16)})
    # lo is vo * 16, hi is vo * 16 + 15
"""

from __future__ import annotations

from tilelang.arith.analyzer import simplify
from tilelang.arith.bound import ConstBound, floormod_bounds, mod_bounds, mul_bounds
from tilelang.arith.constfold import trunc_div, wrap_int
from tilelang.arith.linear import linear_form
from tilelang.ir import expr as E
from tilelang.ir.buffer import Range
from tilelang.ir.convert import binary, const_int_value
from tilelang.ir.functor import NodeFunctor
from tilelang.ir.node import deep_recursion
from tilelang.ir.var_usage import collect_vars

Bound = E.PrimExpr | None

__all__ = ["eval_interval", "const_difference", "fold_min", "fold_max", "range_extent"]


def _is_int_scalar(expr: E.PrimExpr) -> bool:
    return expr.dtype.is_integer() and expr.dtype.lanes == 1


def const_difference(a: E.PrimExpr, b: E.PrimExpr) -> int | None:
    """``a - b`` when it is a constant (``vi + 3`` minus ``vi`` is 3), else None."""
    if not (_is_int_scalar(a) and _is_int_scalar(b)):
        return None
    form = linear_form(binary("sub", a, b))
    return form.const if form.is_const() else None


def fold_min(a: Bound, b: Bound) -> Bound:
    """``min(a, b)``, picked outright when the difference is a known constant."""
    if a is None or b is None:
        return None
    diff = const_difference(a, b)
    if diff is not None:
        return a if diff <= 0 else b
    return binary("min", a, b)


def fold_max(a: Bound, b: Bound) -> Bound:
    """``max(a, b)``, picked outright when the difference is a known constant."""
    if a is None or b is None:
        return None
    diff = const_difference(a, b)
    if diff is not None:
        return a if diff >= 0 else b
    return binary("max", a, b)


def range_extent(lo: E.PrimExpr, hi: E.PrimExpr) -> E.PrimExpr:
    """The extent ``hi - lo + 1`` of the inclusive interval ``[lo, hi]``, folded."""
    return simplify(binary("add", binary("sub", hi, lo), 1))


def _add(a: Bound, b: Bound) -> Bound:
    return None if a is None or b is None else simplify(binary("add", a, b))


def _sub(a: Bound, b: Bound) -> Bound:
    return None if a is None or b is None else simplify(binary("sub", a, b))


def _scale(a: Bound, c: int) -> Bound:
    return None if a is None else simplify(binary("mul", a, c))


def _const_bound(lo: Bound, hi: Bound) -> ConstBound:
    return ConstBound(const_int_value(lo), const_int_value(hi))


def _as_exprs(bound: ConstBound, dtype) -> tuple[Bound, Bound]:
    low, high = dtype.value_range()
    # a bound past the type's range is no bound the type can state
    return tuple(
        None if v is None or not low <= v <= high else E.IntImm(dtype, v)
        for v in (bound.lo, bound.hi)
    )


def eval_interval(
    expr: E.PrimExpr, var_ranges: dict, bindings: dict | None = None
) -> tuple[Bound, Bound]:
    """Inclusive bounds ``(lo, hi)`` of ``expr`` while each variable in ``var_ranges``
    (a ``Var -> Range`` dict) runs over its range.

    ``bindings`` maps let-bound variables to their values. Variables in neither map are
    symbolic and stay in the bounds. A side that cannot be bounded is ``None``. An
    expression that uses none of the ranged variables is returned as ``(expr, expr)``,
    the very same object.
    """
    with deep_recursion():
        return _IntervalEval(var_ranges, bindings or {}).eval(expr)


class _IntervalEval(NodeFunctor):
    def __init__(self, var_ranges: dict, bindings: dict):
        self.ranges = var_ranges
        self.bindings = bindings
        self._uses_cache: dict[int, bool] = {}

    def uses_relaxed(self, expr: E.PrimExpr) -> bool:
        # the usual index, a variable or a constant, answered without a walk
        if type(expr) is E.Var:
            return expr in self.ranges or expr in self.bindings
        if type(expr) is E.IntImm:
            return False
        key = id(expr)
        cached = self._uses_cache.get(key)
        if cached is None:
            cached = any(v in self.ranges or v in self.bindings for v in collect_vars(expr))
            self._uses_cache[key] = cached
        return cached

    def eval(self, expr: E.PrimExpr) -> tuple[Bound, Bound]:
        if not self.uses_relaxed(expr):
            return expr, expr
        return self.visit(expr)

    def generic_visit(self, expr):
        return None, None  # unbounded

    def visit_var(self, var):
        if var in self.bindings:
            return self.eval(self.bindings[var])
        rng: Range = self.ranges[var]
        lo = self.eval(rng.min)[0]
        hi = self.eval(simplify(binary("sub", binary("add", rng.min, rng.extent), 1)))[1]
        return lo, hi

    def visit_add(self, op):
        (alo, ahi), (blo, bhi) = self.eval(op.a), self.eval(op.b)
        return _add(alo, blo), _add(ahi, bhi)

    def visit_sub(self, op):
        (alo, ahi), (blo, bhi) = self.eval(op.a), self.eval(op.b)
        return _sub(alo, bhi), _sub(ahi, blo)

    def visit_mul(self, op):
        for var_side, const_side in ((op.a, op.b), (op.b, op.a)):
            c = const_int_value(const_side)
            if c is not None:
                lo, hi = self.eval(var_side)
                return (_scale(lo, c), _scale(hi, c)) if c >= 0 else (_scale(hi, c), _scale(lo, c))
        a, b = _const_bound(*self.eval(op.a)), _const_bound(*self.eval(op.b))
        return _as_exprs(mul_bounds(a, b), op.dtype)

    def _divide(self, op, floor: bool):
        c = const_int_value(op.b)
        if c is None or c <= 0 or self.uses_relaxed(op.b):
            return None, None
        lo, hi = self.eval(op.a)
        kind = "floordiv" if floor else "div"
        return tuple(None if b is None else _fold_div(b, c, kind) for b in (lo, hi))

    def visit_floor_div(self, op):
        return self._divide(op, floor=True)

    def visit_div(self, op):
        if not op.dtype.is_integer():
            return None, None
        return self._divide(op, floor=False)

    def visit_floor_mod(self, op):
        divisor = _const_bound(op.b, op.b)
        return _as_exprs(floormod_bounds(_const_bound(*self.eval(op.a)), divisor), op.dtype)

    def visit_mod(self, op):
        if not op.dtype.is_integer():
            return None, None
        divisor = _const_bound(op.b, op.b)
        return _as_exprs(mod_bounds(_const_bound(*self.eval(op.a)), divisor), op.dtype)

    def visit_min(self, op):
        (alo, ahi), (blo, bhi) = self.eval(op.a), self.eval(op.b)
        # min(a, b) <= either upper bound, so one known upper bound suffices.
        hi = bhi if ahi is None else ahi if bhi is None else fold_min(ahi, bhi)
        return fold_min(alo, blo), hi

    def visit_max(self, op):
        (alo, ahi), (blo, bhi) = self.eval(op.a), self.eval(op.b)
        lo = blo if alo is None else alo if blo is None else fold_max(alo, blo)
        return lo, fold_max(ahi, bhi)

    def visit_select(self, op):
        (alo, ahi), (blo, bhi) = self.eval(op.true_value), self.eval(op.false_value)
        return fold_min(alo, blo), fold_max(ahi, bhi)

    def visit_cast(self, op):
        src = op.value.dtype
        if not (op.dtype.is_integer() and src.is_integer() and op.dtype.bits >= src.bits):
            return None, None
        lo, hi = self.eval(op.value)
        return tuple(None if b is None else _fold_cast(b, op.dtype) for b in (lo, hi))

    def visit_let(self, op):
        inner = _IntervalEval(self.ranges, {**self.bindings, op.var: op.value})
        return inner.eval(op.body)


def _fold_div(value: E.PrimExpr, c: int, kind: str) -> E.PrimExpr:
    v = const_int_value(value)
    if v is not None:
        q = v // c if kind == "floordiv" else trunc_div(v, c)
        return E.IntImm(value.dtype, wrap_int(q, value.dtype))
    return value if c == 1 else binary(kind, value, c)


def _fold_cast(value: E.PrimExpr, dtype) -> E.PrimExpr:
    v = const_int_value(value)
    return E.IntImm(dtype, wrap_int(v, dtype)) if v is not None else value.astype(dtype)

"""Integer interval arithmetic and a small affine simplifier.

:func:`eval_interval` bounds an index expression when some of its variables range over
intervals (loop variables relaxed over their loops). Bounds are *inclusive* and are
expressions, so a bound may stay symbolic (``vi * 16`` .. ``vi * 16 + 15``); ``None``
means "no bound known" and callers fall back to the buffer's full extent.

:func:`simplify` folds constants in affine expressions (``vi * 16 + 15 - vi * 16 + 1``
is ``16``), which is what region inference needs to turn two bounds into an extent.
It is deliberately small: sums of terms times constant coefficients, nothing more.

Example::

    i = Var("i")
    lo, hi = eval_interval(vo * 16 + i, {i: Range(0, 16)})
    # lo is vo * 16, hi is vo * 16 + 15
"""

from __future__ import annotations

from tilelang.ir import expr as E
from tilelang.ir.buffer import Range
from tilelang.ir.convert import binary, const_int_value
from tilelang.ir.node import deep_recursion
from tilelang.ir.structural import structural_equal

Bound = E.PrimExpr | None

__all__ = [
    "eval_interval",
    "simplify",
    "const_difference",
    "fold_min",
    "fold_max",
    "range_extent",
]


# ---------------------------------------------------------------- affine forms


def _linear(expr: E.PrimExpr):
    """``(terms, constant)`` with ``terms`` a list of ``[term, coeff]``; any non-affine
    sub-expression is an opaque term (matched structurally)."""
    terms: list[list] = []
    constant = 0
    # An explicit stack: 5,000-term sums must not recurse.
    stack = [(expr, 1)]
    while stack:
        node, sign = stack.pop()
        if sign == 0:
            continue
        if isinstance(node, E.IntImm) and node.dtype.is_integer():
            constant += sign * node.value
        elif isinstance(node, E.Add):
            stack.append((node.b, sign))
            stack.append((node.a, sign))
        elif isinstance(node, E.Sub):
            stack.append((node.b, -sign))
            stack.append((node.a, sign))
        elif isinstance(node, E.Mul) and isinstance(node.b, E.IntImm):
            stack.append((node.a, sign * node.b.value))
        elif isinstance(node, E.Mul) and isinstance(node.a, E.IntImm):
            stack.append((node.b, sign * node.a.value))
        else:
            _add_term(terms, node, sign)
    return terms, constant


def _add_term(terms: list, term: E.PrimExpr, coeff: int) -> None:
    for entry in terms:
        if entry[0] is term or (not isinstance(term, E.Var) and structural_equal(entry[0], term)):
            entry[1] += coeff
            return
    terms.append([term, coeff])


def _rebuild(terms, constant: int, dtype) -> E.PrimExpr:
    result = None
    for term, coeff in terms:
        if coeff == 0:
            continue
        magnitude = term if abs(coeff) == 1 else binary("mul", term, abs(coeff))
        if result is None:
            result = magnitude if coeff > 0 else binary("mul", term, coeff)
        else:
            result = binary("add" if coeff > 0 else "sub", result, magnitude)
    if result is None:
        return E.IntImm(dtype, constant)
    if constant > 0:
        result = binary("add", result, E.IntImm(result.dtype, constant))
    elif constant < 0:
        result = binary("sub", result, E.IntImm(result.dtype, -constant))
    return result


def _is_affine_integer(expr: E.PrimExpr) -> bool:
    return expr.dtype.is_integer() and expr.dtype.lanes == 1


def simplify(expr: E.PrimExpr) -> E.PrimExpr:
    """``expr`` with its affine part normalised and constants folded.

    Returns ``expr`` itself when nothing could be folded, so unchanged expressions keep
    their identity (and their printed form).
    """
    if not _is_affine_integer(expr) or isinstance(expr, (E.Var, E.IntImm)):
        return expr
    terms, constant = _linear(expr)
    live = [t for t in terms if t[1] != 0]
    if not live:
        return E.IntImm(expr.dtype, constant)
    if len(live) == 1 and live[0][1] == 1 and constant == 0:
        return live[0][0]
    rebuilt = _rebuild(live, constant, expr.dtype)
    return expr if structural_equal(rebuilt, expr) else rebuilt


def const_difference(a: E.PrimExpr, b: E.PrimExpr) -> int | None:
    """``a - b`` when it is a constant (``vi + 3`` minus ``vi`` is 3), else None."""
    if not (_is_affine_integer(a) and _is_affine_integer(b)):
        return None
    terms, constant = _linear(binary("sub", a, b))
    return constant if all(coeff == 0 for _, coeff in terms) else None


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


def _add(a: Bound, b: Bound) -> Bound:
    return None if a is None or b is None else simplify(binary("add", a, b))


def _sub(a: Bound, b: Bound) -> Bound:
    return None if a is None or b is None else simplify(binary("sub", a, b))


def _scale(a: Bound, c: int) -> Bound:
    return None if a is None else simplify(binary("mul", a, c))


def range_extent(lo: E.PrimExpr, hi: E.PrimExpr) -> E.PrimExpr:
    """The extent ``hi - lo + 1`` of the inclusive interval ``[lo, hi]``, folded."""
    return simplify(binary("add", binary("sub", hi, lo), 1))


# ------------------------------------------------------------------ intervals


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


class _IntervalEval:
    def __init__(self, var_ranges: dict, bindings: dict):
        self.ranges = var_ranges
        self.bindings = bindings
        self._uses_cache: dict[int, bool] = {}

    def uses_relaxed(self, expr: E.PrimExpr) -> bool:
        from tilelang.ir.analysis import collect_vars

        key = id(expr)
        cached = self._uses_cache.get(key)
        if cached is None:
            cached = any(v in self.ranges or v in self.bindings for v in collect_vars(expr))
            self._uses_cache[key] = cached
        return cached

    def eval(self, expr: E.PrimExpr) -> tuple[Bound, Bound]:
        if not self.uses_relaxed(expr):
            return expr, expr
        method = getattr(self, "eval_" + type(expr).visit_name, None)
        if method is None:
            return None, None
        return method(expr)

    def eval_var(self, var):
        if var in self.bindings:
            return self.eval(self.bindings[var])
        rng: Range = self.ranges[var]
        lo = self.eval(rng.min)[0]
        hi = self.eval(simplify(binary("sub", binary("add", rng.min, rng.extent), 1)))[1]
        return lo, hi

    eval_size_var = eval_var

    def eval_add(self, op):
        (alo, ahi), (blo, bhi) = self.eval(op.a), self.eval(op.b)
        return _add(alo, blo), _add(ahi, bhi)

    def eval_sub(self, op):
        (alo, ahi), (blo, bhi) = self.eval(op.a), self.eval(op.b)
        return _sub(alo, bhi), _sub(ahi, blo)

    def eval_mul(self, op):
        for var_side, const_side in ((op.a, op.b), (op.b, op.a)):
            c = const_int_value(const_side)
            if c is not None:
                lo, hi = self.eval(var_side)
                return (_scale(lo, c), _scale(hi, c)) if c >= 0 else (_scale(hi, c), _scale(lo, c))
        bounds = [*self.eval(op.a), *self.eval(op.b)]
        values = [const_int_value(b) for b in bounds]
        if any(v is None for v in values):
            return None, None
        products = [values[i] * values[j] for i in (0, 1) for j in (2, 3)]
        return E.IntImm(op.dtype, min(products)), E.IntImm(op.dtype, max(products))

    def _divide(self, op, floor: bool):
        c = const_int_value(op.b)
        if c is None or c <= 0 or self.uses_relaxed(op.b):
            return None, None
        lo, hi = self.eval(op.a)
        kind = "floordiv" if floor else "div"
        return tuple(None if b is None else _fold_div(b, c, kind) for b in (lo, hi))

    def eval_floor_div(self, op):
        return self._divide(op, floor=True)

    def eval_div(self, op):
        if not op.dtype.is_integer():
            return None, None
        return self._divide(op, floor=False)

    def eval_floor_mod(self, op):
        c = const_int_value(op.b)
        if c is None or c <= 0:
            return None, None
        lo, hi = self.eval(op.a)
        clo, chi = const_int_value(lo), const_int_value(hi)
        if clo is not None and chi is not None and clo // c == chi // c:
            return E.IntImm(op.dtype, clo % c), E.IntImm(op.dtype, chi % c)
        return E.IntImm(op.dtype, 0), E.IntImm(op.dtype, c - 1)

    def eval_mod(self, op):
        c = const_int_value(op.b)
        if c is None or c <= 0 or not op.dtype.is_integer():
            return None, None
        lo, _ = self.eval(op.a)
        clo = const_int_value(lo)
        low = 0 if clo is not None and clo >= 0 else -(c - 1)
        return E.IntImm(op.dtype, low), E.IntImm(op.dtype, c - 1)

    def eval_min(self, op):
        (alo, ahi), (blo, bhi) = self.eval(op.a), self.eval(op.b)
        # min(a, b) <= either upper bound, so one known upper bound suffices.
        hi = bhi if ahi is None else ahi if bhi is None else fold_min(ahi, bhi)
        return fold_min(alo, blo), hi

    def eval_max(self, op):
        (alo, ahi), (blo, bhi) = self.eval(op.a), self.eval(op.b)
        lo = blo if alo is None else alo if blo is None else fold_max(alo, blo)
        return lo, fold_max(ahi, bhi)

    def eval_select(self, op):
        (alo, ahi), (blo, bhi) = self.eval(op.true_value), self.eval(op.false_value)
        return fold_min(alo, blo), fold_max(ahi, bhi)

    def eval_cast(self, op):
        src = op.value.dtype
        if not (op.dtype.is_integer() and src.is_integer() and op.dtype.bits >= src.bits):
            return None, None
        lo, hi = self.eval(op.value)
        return tuple(None if b is None else _fold_cast(b, op.dtype) for b in (lo, hi))

    def eval_let(self, op):
        inner = _IntervalEval(self.ranges, {**self.bindings, op.var: op.value})
        return inner.eval(op.body)


def _fold_div(value: E.PrimExpr, c: int, kind: str) -> E.PrimExpr:
    v = const_int_value(value)
    if v is not None:
        q = v // c if kind == "floordiv" else int(v / c)
        return E.IntImm(value.dtype, q)
    return value if c == 1 else binary(kind, value, c)


def _fold_cast(value: E.PrimExpr, dtype) -> E.PrimExpr:
    v = const_int_value(value)
    return E.IntImm(dtype, v) if v is not None else value.astype(dtype)

"""Integer arithmetic the schedule primitives need: a linear canonical form
(``(i_0 * 8 + i_1) * 8 + i_2`` reads back as ``i_0 * 64 + i_1 * 8 + i_2``) and
bounds of an index over loop ranges.

Terms keep the order in which their variables first appear, so simplified bindings
read like TVM's (outer loops first). Anything that is not linear (a product of two
variables, a call) is kept as an opaque *atom*.
"""

from __future__ import annotations

from tilelang.ir import expr as E
from tilelang.ir.convert import const_int_value
from tilelang.ir.functor import post_order_visit
from tilelang.ir.structural import structural_equal, structural_hash


class NotLinear(Exception):
    """The expression cannot be bounded with the ranges given."""


class Linear:
    """``sum(coef * atom) + const``; atoms are keyed by variable identity or structure."""

    def __init__(self, dtype, terms=None, const=0):
        self.dtype = dtype
        self.terms: dict = dict(terms or {})  # key -> [atom, coef]
        self.const = const

    @staticmethod
    def key(atom):
        return atom if isinstance(atom, E.Var) else ("expr", structural_hash(atom))

    def add(self, other: Linear, scale: int = 1) -> Linear:
        terms = {k: list(v) for k, v in self.terms.items()}
        for key, (atom, coef) in other.terms.items():
            if key in terms and (isinstance(atom, E.Var) or structural_equal(terms[key][0], atom)):
                terms[key][1] += scale * coef
            else:
                terms[key] = [atom, scale * coef]
        terms = {k: v for k, v in terms.items() if v[1] != 0}
        return Linear(self.dtype, terms, self.const + scale * other.const)

    def scale(self, factor: int) -> Linear:
        if factor == 0:
            return Linear(self.dtype)
        return Linear(
            self.dtype,
            {k: [a, c * factor] for k, (a, c) in self.terms.items()},
            self.const * factor,
        )

    def is_const(self) -> bool:
        return not self.terms

    def to_expr(self) -> E.PrimExpr:
        result = None
        for atom, coef in self.terms.values():
            magnitude = abs(coef)
            term = atom if magnitude == 1 else E.Mul(atom, E.IntImm(self.dtype, magnitude))
            if result is None:
                result = term if coef > 0 else E.Mul(atom, E.IntImm(self.dtype, coef))
            else:
                result = E.Add(result, term) if coef > 0 else E.Sub(result, term)
        if result is None:
            return E.IntImm(self.dtype, self.const)
        if self.const > 0:
            return E.Add(result, E.IntImm(self.dtype, self.const))
        if self.const < 0:
            return E.Sub(result, E.IntImm(self.dtype, -self.const))
        return result


def _is_int(expr) -> bool:
    return expr.dtype.lanes == 1 and expr.dtype.is_integer()


def linear(expr: E.PrimExpr) -> Linear:
    """The linear form of an integer expression (non-linear parts become atoms)."""
    dtype = expr.dtype
    if isinstance(expr, E.IntImm):
        return Linear(dtype, const=expr.value)
    if isinstance(expr, E.Var):
        return Linear(dtype, {expr: [expr, 1]})
    if isinstance(expr, (E.Add, E.Sub)) and _is_int(expr):
        return linear(expr.a).add(linear(expr.b), 1 if isinstance(expr, E.Add) else -1)
    if isinstance(expr, E.Mul) and _is_int(expr):
        a, b = linear(expr.a), linear(expr.b)
        if b.is_const():
            return a.scale(b.const)
        if a.is_const():
            return b.scale(a.const)
        return _atom(E.Mul(a.to_expr(), b.to_expr()))
    if isinstance(expr, (E.FloorDiv, E.FloorMod)) and _is_int(expr):
        return _floor_op(expr)
    return _atom(expr)


def _atom(expr) -> Linear:
    return Linear(expr.dtype, {Linear.key(expr): [expr, 1]})


def _floor_op(expr) -> Linear:
    a, b = linear(expr.a), linear(expr.b)
    if not b.is_const() or b.const <= 0:
        return _atom(type(expr)(a.to_expr(), b.to_expr()))
    divisor = b.const
    if a.is_const():
        value = a.const // divisor if isinstance(expr, E.FloorDiv) else a.const % divisor
        return Linear(expr.dtype, const=value)
    if divisor == 1:
        return a if isinstance(expr, E.FloorDiv) else Linear(expr.dtype)
    if all(coef % divisor == 0 for _, coef in a.terms.values()):
        if isinstance(expr, E.FloorDiv):
            whole = Linear(a.dtype, {k: [t, c // divisor] for k, (t, c) in a.terms.items()})
            return whole.add(Linear(a.dtype, const=a.const // divisor))
        return Linear(expr.dtype, const=a.const % divisor)
    return _atom(type(expr)(a.to_expr(), E.IntImm(expr.dtype, divisor)))


def simplify(expr: E.PrimExpr) -> E.PrimExpr:
    """``expr`` in linear canonical form when it is a scalar integer expression."""
    if not _is_int(expr):
        return expr
    return linear(expr).to_expr()


def const_value(expr) -> int | None:
    """The integer value of ``expr`` after simplification, or None."""
    value = const_int_value(expr)
    if value is not None or not isinstance(expr, E.PrimExpr) or not _is_int(expr):
        return value
    form = linear(expr)
    return form.const if form.is_const() else None


def uses_any(expr, variables) -> bool:
    """True when ``expr`` mentions one of ``variables`` (compared by identity)."""
    wanted = {id(v) for v in variables}
    found = []
    post_order_visit(expr, lambda n: found.append(n) if id(n) in wanted else None)
    return bool(found)


def bound(expr: E.PrimExpr, dom: dict) -> tuple[E.PrimExpr, E.PrimExpr]:
    """Inclusive ``(lo, hi)`` of ``expr`` when each variable ``v`` in ``dom`` ranges
    over ``[min, min + extent)`` (``dom[v] = (min, extent)``); other variables stay
    symbolic. Raises :class:`NotLinear` for what it cannot bound."""
    lo, hi = _bound_linear(linear(expr), dom)
    return lo.to_expr(), hi.to_expr()


def _bound_linear(form: Linear, dom: dict) -> tuple[Linear, Linear]:
    dtype = form.dtype
    lo, hi = Linear(dtype, const=form.const), Linear(dtype, const=form.const)
    for atom, coef in form.terms.values():
        a_lo, a_hi = _bound_atom(atom, dom)
        if coef < 0:
            a_lo, a_hi = a_hi, a_lo
        lo, hi = lo.add(a_lo.scale(coef)), hi.add(a_hi.scale(coef))
    return lo, hi


def _bound_atom(atom, dom: dict) -> tuple[Linear, Linear]:
    if isinstance(atom, E.Var):
        if atom not in dom:
            return linear(atom), linear(atom)
        low, extent = dom[atom]
        low = linear(low)
        return low, low.add(linear(extent)).add(Linear(atom.dtype, const=-1))
    if not uses_any(atom, dom.keys()):
        return linear(atom), linear(atom)
    divisor = const_int_value(atom.b) if isinstance(atom, (E.FloorDiv, E.FloorMod)) else None
    if divisor is None or divisor <= 0:
        raise NotLinear(f"cannot bound {atom!r}")
    a_lo, a_hi = _bound_linear(linear(atom.a), dom)
    if isinstance(atom, E.FloorDiv):
        if a_lo.is_const() and a_hi.is_const():
            return (
                Linear(atom.dtype, const=a_lo.const // divisor),
                Linear(atom.dtype, const=a_hi.const // divisor),
            )
        return linear(E.FloorDiv(a_lo.to_expr(), atom.b)), linear(
            E.FloorDiv(a_hi.to_expr(), atom.b)
        )
    if a_lo.is_const() and a_hi.is_const() and a_lo.const // divisor == a_hi.const // divisor:
        return (
            Linear(atom.dtype, const=a_lo.const % divisor),
            Linear(atom.dtype, const=a_hi.const % divisor),
        )
    return Linear(atom.dtype, const=0), Linear(atom.dtype, const=divisor - 1)


def can_prove_less(a: E.PrimExpr, b: E.PrimExpr, dom: dict) -> bool:
    """True when ``a < b`` holds for every value of the variables in ``dom``."""
    try:
        _, hi = bound(E.Sub(a, b) if a.dtype == b.dtype else a - b, dom)
    except NotLinear:
        return False
    value = const_value(hi)
    return value is not None and value < 0

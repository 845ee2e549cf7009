"""The rewriting simplifier (TVM's ``RewriteSimplifier`` + ``CanonicalSimplifier``
in one small mutator).

* Integer ``+ - *`` clusters become canonical linear forms: like terms collect
  (``a * x + b * x``), constants fold, ``x * 1`` and ``x + 0`` vanish.
* ``floordiv``/``floormod`` by a positive constant split off the multiples of the
  divisor and drop the remainder when bounds show it stays in one period:
  ``(i_0 * 4 + i_1) // 4 -> i_0`` and ``(i_0 * 4 + i_1) % 4 -> i_1`` when
  ``0 <= i_1 < 4``. Truncating ``Div``/``Mod`` of a provably non-negative value
  follow the same rules.
* Comparisons, ``min`` and ``max`` whose outcome the bounds decide are folded.
* ``Select``, ``if_then_else`` and the logical operators fold on constant
  conditions; casts of constants fold with C semantics.
* Vector index arithmetic: ``Ramp(b, s, n) + Broadcast(x, n) -> Ramp(b + x, s, n)``
  and the like, so a flattened vector access stays a single ``Ramp``.

Float arithmetic is never reassociated; only constant operands are folded (in the
operand's own precision) and ``x * 1``, ``x + 0`` are dropped.
"""

from __future__ import annotations

from tilelang.arith.constfold import fold_binary, fold_cast
from tilelang.arith.linear import LinearForm, is_linear_node, linear_form, same_expr
from tilelang.ir import expr as E
from tilelang.ir.convert import binary
from tilelang.ir.dtype import BOOL
from tilelang.ir.functor import StmtExprMutator

TRUE = E.IntImm(BOOL, 1)
FALSE = E.IntImm(BOOL, 0)


def _is_int_scalar(expr: E.PrimExpr) -> bool:
    return expr.dtype.is_integer() and expr.dtype.lanes == 1


def _const_value(expr):
    return expr.value if isinstance(expr, (E.IntImm, E.FloatImm)) else None


def _rebuilt(op, a, b):
    return op if a is op.a and b is op.b else type(op)(a, b, span=op.span)


class Simplifier(StmtExprMutator):
    """Simplifies one expression under an :class:`~tilelang.arith.Analyzer`'s bounds."""

    def __init__(self, analyzer):
        self.ana = analyzer

    # ------------------------------------------------------------ + - *
    def _linear(self, op):
        new = linear_form(op, atom_fn=self.visit).to_expr()
        return op if same_expr(new, op) else new

    def _arith(self, op):
        if is_linear_node(op):
            return self._linear(op)
        a, b = self.visit(op.a), self.visit(op.b)
        folded = fold_binary(type(op), a, b)
        if folded is not None:
            return folded
        vector = _vector_rule(type(op), a, b)
        if vector is not None:
            return self.visit(vector)
        cls, ca, cb = type(op), _const_value(a), _const_value(b)
        if cls is E.Add and (cb == 0 or ca == 0):
            return a if cb == 0 else b
        if cls is E.Sub and cb == 0:
            return a
        if cls is E.Mul and (cb == 1 or ca == 1):
            return a if cb == 1 else b
        return _rebuilt(op, a, b)

    visit_add = visit_sub = visit_mul = _arith

    # ------------------------------------------------------ divisions
    def visit_floor_div(self, op):
        return self._division(op, floor=True, is_div=True)

    def visit_floor_mod(self, op):
        return self._division(op, floor=True, is_div=False)

    def visit_div(self, op):
        return self._division(op, floor=False, is_div=True)

    def visit_mod(self, op):
        return self._division(op, floor=False, is_div=False)

    def _division(self, op, floor: bool, is_div: bool):
        a, b = self.visit(op.a), self.visit(op.b)
        folded = fold_binary(type(op), a, b)
        if folded is not None:
            return folded
        vector = _vector_rule(type(op), a, b)
        if vector is not None:
            return self.visit(vector)
        c = b.value if isinstance(b, E.IntImm) else None
        if not _is_int_scalar(a) or c is None or c <= 0:
            return _rebuilt(op, a, b)
        if c == 1:
            return a if is_div else E.IntImm(a.dtype, 0)
        if not floor:
            lo = self.ana.const_bound(a).lo
            if lo is None or lo < 0:
                return _rebuilt(op, a, b)
        form = linear_form(a)
        quotient, rest = LinearForm(a.dtype), LinearForm(a.dtype)
        for atom, coeff in form.live_terms():
            if coeff % c == 0:
                quotient.add_atom(atom, coeff // c)
            else:
                rest.add_atom(atom, coeff)
        quotient.const, rest.const = divmod(form.const, c)
        bound = self.ana.form_bound(rest)
        if floor and not (
            bound.lo is not None and bound.hi is not None and bound.lo // c == bound.hi // c
        ):
            # ``(x * 8 + 7) // 16`` is ``x // 2``: split each term whose coefficient
            # divides c into its whole periods and a bounded remainder
            split_q, split_r = _split_terms(quotient, rest, c)
            split_bound = self.ana.form_bound(split_r)
            lo, hi = split_bound.lo, split_bound.hi
            if lo is not None and hi is not None and lo // c == hi // c:
                quotient, rest, bound = split_q, split_r, split_bound
        if not _one_period(bound, c):
            # ``(x * 360 + 359) // 16`` is ``x * 22 + (x * 8 + 359) // 16``: the whole
            # periods of each coefficient move out, and for 0 <= x <= 1 the
            # remainder stays in one period (TVM's canonical simplifier does this)
            split_q, split_r = _split_coefficients(quotient, rest, c)
            split_bound = self.ana.form_bound(split_r)
            if _one_period(split_bound, c):
                quotient, rest, bound = split_q, split_r, split_bound
        if bound.lo is not None and bound.hi is not None and bound.lo // c == bound.hi // c:
            period = bound.lo // c
            if is_div:
                quotient.const += period
                return quotient.to_expr()
            rest.const -= period * c
            return rest.to_expr()
        node_cls = E.FloorDiv if is_div else E.FloorMod
        remainder = node_cls(rest.to_expr(), b)
        if not is_div:
            return op if same_expr(remainder, op) else remainder
        quotient.add_atom(remainder, 1)
        result = quotient.to_expr()
        return op if same_expr(result, op) else result

    # -------------------------------------------------- min / max
    def _min_max(self, op):
        a, b = self.visit(op.a), self.visit(op.b)
        folded = fold_binary(type(op), a, b)
        if folded is not None:
            return folded
        if _is_int_scalar(a):
            bound = self.ana.form_bound(linear_form(E.Sub(a, b)))
            a_first = bound.hi is not None and bound.hi <= 0  # a <= b
            b_first = bound.lo is not None and bound.lo >= 0  # a >= b
            if isinstance(op, E.Min) and (a_first or b_first):
                return a if a_first else b
            if isinstance(op, E.Max) and (a_first or b_first):
                return b if a_first else a
        if same_expr(a, b):
            return a
        absorbed = _absorb(op, a, b)
        if absorbed is not None:
            return absorbed
        return _rebuilt(op, a, b)

    visit_min = visit_max = _min_max

    # ------------------------------------------------ comparisons
    def visit_cmp_op(self, op):
        a, b = self.visit(op.a), self.visit(op.b)
        folded = fold_binary(type(op), a, b)
        if folded is not None:
            return folded
        if _is_int_scalar(a):
            decided = _decide(type(op), self.ana.form_bound(linear_form(E.Sub(a, b))))
            if decided is not None:
                return TRUE if decided else FALSE
            undivided = _undivided_lt(op, a, b)
            if undivided is not None:
                return self.visit(undivided)
        return _rebuilt(op, a, b)

    # --------------------------------------------------- logic
    def visit_and(self, op):
        a, b = self.visit(op.a), self.visit(op.b)
        for x, y in ((a, b), (b, a)):
            if isinstance(x, E.IntImm) and x.dtype.lanes == 1:
                return y if x.value else FALSE
        tightened = _tighten_by_remainder(a, b)
        if tightened is not None:
            return _rebuilt(op, tightened, b)
        return _rebuilt(op, a, b)

    def visit_or(self, op):
        a, b = self.visit(op.a), self.visit(op.b)
        for x, y in ((a, b), (b, a)):
            if isinstance(x, E.IntImm) and x.dtype.lanes == 1:
                return TRUE if x.value else y
        return _rebuilt(op, a, b)

    def visit_not(self, op):
        a = self.visit(op.a)
        if isinstance(a, E.IntImm):
            return FALSE if a.value else TRUE
        if isinstance(a, E.Not):
            return a.a
        return op if a is op.a else E.Not(a, span=op.span)

    def visit_select(self, op):
        new = self.generic_visit(op)
        if isinstance(new.condition, E.IntImm):
            return new.true_value if new.condition.value else new.false_value
        return new

    def visit_call(self, op):
        new = self.generic_visit(op)
        if new.op == "if_then_else" and isinstance(new.args[0], E.IntImm):
            return new.args[1] if new.args[0].value else new.args[2]
        if new.op == "likely" and isinstance(new.args[0], E.IntImm):
            return new.args[0]
        return new

    def visit_cast(self, op):
        value = self.visit(op.value)
        if value.dtype == op.dtype:
            return value
        folded = fold_cast(op.dtype, value)
        if folded is not None:
            return folded
        return op if value is op.value else E.Cast(op.dtype, value, span=op.span)


def _decide(cls, bound) -> bool | None:
    """The truth of ``d <op> 0`` for ``d`` in ``bound``, or None when undecided."""
    lo, hi = bound.lo, bound.hi
    below = hi is not None and hi < 0  # d < 0 everywhere
    at_most = hi is not None and hi <= 0
    above = lo is not None and lo > 0
    at_least = lo is not None and lo >= 0
    zero = lo == 0 and hi == 0
    table = {
        E.LT: (below, at_least),
        E.LE: (at_most, above),
        E.GT: (above, at_most),
        E.GE: (at_least, below),
        E.EQ: (zero, below or above),
        E.NE: (below or above, zero),
    }
    true_when, false_when = table[cls]
    if true_when:
        return True
    if false_when:
        return False
    return None


def _positive_divisor(expr, cls):
    """``(x, c)`` when ``expr`` is ``cls(x, c)`` of an integer ``x`` by a constant
    ``c > 0``."""
    if isinstance(expr, cls) and isinstance(expr.b, E.IntImm) and expr.b.value > 0:
        return expr.a, expr.b.value
    return None


def _undivided_lt(op, a, b):
    """TVM's rewrite rules taking a floor division out of a comparison with a
    constant: ``x // c1 < c2`` is ``x < c1 * c2`` and ``c1 < x // c2`` is
    ``(c1 + 1) * c2 - 1 < x``."""
    if not isinstance(op, E.LT):
        return None
    left, right = _positive_divisor(a, E.FloorDiv), _positive_divisor(b, E.FloorDiv)
    if left is not None and isinstance(b, E.IntImm):
        x, c1 = left
        bound = _scalar_const(x.dtype, c1 * b.value)
        return None if bound is None else E.LT(x, bound)
    if right is not None and isinstance(a, E.IntImm):
        x, c2 = right
        bound = _scalar_const(x.dtype, (a.value + 1) * c2 - 1)
        return None if bound is None else E.LT(bound, x)
    return None


def _scalar_const(dtype, value: int):
    """``value`` as a scalar constant of ``dtype``, or None when the type cannot hold
    it (a rewritten bound past the type's range is no rewrite: the comparison stands)."""
    if dtype.is_vector():
        return None
    low, high = dtype.value_range()
    return E.IntImm(dtype, value) if low <= value <= high else None


def _tighten_by_remainder(a, b):
    """TVM's rule for ``x < c1 and x % c2 < c3``: the last ``c2 - c3`` values below a
    period's end fail the second condition, so the first becomes ``x < c1 - c2 + c3``
    (``c2`` dividing ``c1``), or ``x < c1 - c1 % c2 + c3`` when ``c1 % c2 > c3``.
    Returns the new first condition, or None."""
    if not (isinstance(a, E.LT) and isinstance(a.b, E.IntImm) and isinstance(b, E.LT)):
        return None
    mod = _positive_divisor(b.a, E.FloorMod)
    if mod is None or not isinstance(b.b, E.IntImm) or not same_expr(mod[0], a.a):
        return None
    c1, c2, c3 = a.b.value, mod[1], b.b.value
    if not 0 < c3 <= c2:
        return None
    if c1 % c2 == 0:
        bound = c1 - c2 + c3
    elif c1 % c2 > c3:
        bound = c1 - c1 % c2 + c3
    else:
        return None
    tightened = _scalar_const(a.b.dtype, bound)
    return None if tightened is None else E.LT(a.a, tightened)


def _split_terms(quotient, rest, c):
    """``quotient`` and ``rest`` with each ``atom * k`` of ``rest`` (``k`` dividing
    ``c``) written as ``atom // (c / k) * c + atom % (c / k) * k`` (floor semantics)."""
    new_q, new_r = LinearForm(rest.dtype), LinearForm(rest.dtype)
    new_q.add_form(quotient)
    new_r.const = rest.const
    for atom, coeff in rest.live_terms():
        if coeff > 0 and c % coeff == 0 and not isinstance(atom, E.IntImm):
            k = E.IntImm(atom.dtype, c // coeff)
            new_q.add_atom(E.FloorDiv(atom, k), 1)
            new_r.add_atom(E.FloorMod(atom, k), coeff)
        else:
            new_r.add_atom(atom, coeff)
    return new_q, new_r


def _absorb(op, a, b):
    """``min(max(x, y), x)`` is ``x``, as is ``max(min(x, y), x)`` (either order)."""
    other = E.Max if isinstance(op, E.Min) else E.Min
    for inner, outer in ((a, b), (b, a)):
        if isinstance(inner, other) and (same_expr(inner.a, outer) or same_expr(inner.b, outer)):
            return outer
    return None


def _one_period(bound, c) -> bool:
    """Whether a bounded value stays within one period of ``c``."""
    return bound.lo is not None and bound.hi is not None and bound.lo // c == bound.hi // c


def _split_coefficients(quotient, rest, c):
    """``quotient`` and ``rest`` with each ``atom * k`` of ``rest`` written as
    ``atom * (k // c) * c + atom * (k % c)`` (exact for floor division)."""
    new_q, new_r = LinearForm(rest.dtype), LinearForm(rest.dtype)
    new_q.add_form(quotient)
    new_r.const = rest.const
    for atom, coeff in rest.live_terms():
        whole, part = divmod(coeff, c)
        if whole:
            new_q.add_atom(atom, whole)
        if part:
            new_r.add_atom(atom, part)
    return new_q, new_r


def _vector_rule(cls, a, b):
    """Ramp/Broadcast arithmetic pushed into the lanes' scalar expressions."""
    if not (isinstance(a, (E.Ramp, E.Broadcast)) and isinstance(b, (E.Ramp, E.Broadcast))):
        return None
    name = {E.Add: "add", E.Sub: "sub", E.Mul: "mul", E.FloorDiv: "floordiv"}.get(cls)
    if name is None and cls is not E.FloorMod:
        return None
    name = name or "floormod"
    if isinstance(a, E.Broadcast) and isinstance(b, E.Broadcast):
        return E.Broadcast(binary(name, a.value, b.value), a.lanes)
    if cls in (E.Add, E.Sub):
        if isinstance(a, E.Ramp) and isinstance(b, E.Ramp):
            return E.Ramp(binary(name, a.base, b.base), binary(name, a.stride, b.stride), a.lanes)
        if isinstance(a, E.Ramp):
            return E.Ramp(binary(name, a.base, b.value), a.stride, a.lanes)
        if cls is E.Sub:
            return E.Ramp(binary("sub", a.value, b.base), binary("sub", 0, b.stride), a.lanes)
        return E.Ramp(binary("add", a.value, b.base), b.stride, a.lanes)
    if cls is E.Mul:
        ramp, scale = (a, b) if isinstance(a, E.Ramp) else (b, a)
        if isinstance(ramp, E.Ramp) and isinstance(scale, E.Broadcast):
            return E.Ramp(
                binary("mul", ramp.base, scale.value),
                binary("mul", ramp.stride, scale.value),
                ramp.lanes,
            )
    return None

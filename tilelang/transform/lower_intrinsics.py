"""LowerIntrinsics: intrinsics defined by a formula become that formula, so every
backend computes them with the arithmetic it already has.

``q_multiply_shift(x, y, q, s)`` is TVM's fixed-point multiply: with ``ls = max(s, 0)``
and ``rs = max(-s, 0)``, ``int32(((int64(x) << ls) * int64(y) + (1 << (rs + q - 1))) >>
(rs + q))``. ``q_multiply_shift_per_axis(x, y, ls, rs, q, lshift_required, _)`` is the
same with the shifts given (the left shift applied only when ``lshift_required``).
These are the general formulas of TVM's legalisation (its shortcut for ``y == 2**30``
assumes ``q == 31``, where it agrees with them).
"""

from __future__ import annotations

from tilelang.ir import expr as E
from tilelang.ir.convert import binary, convert
from tilelang.ir.dtype import INT32, INT64
from tilelang.ir.functor import StmtExprMutator
from tilelang.ir.op import call_intrin, select
from tilelang.transform.pass_infra import prim_func_pass


def _fixed_point_multiply(x, y, q, left_shift, right_shift, lshift_required):
    lanes = x.dtype.lanes
    wide, narrow = INT64.with_lanes(lanes), INT32.with_lanes(lanes)
    x, y = E.Cast(wide, x), E.Cast(wide, y)
    shifted = call_intrin("shift_left", x, E.Cast(wide, convert(left_shift)))
    x = select(lshift_required, shifted, x)
    product = binary("mul", x, y)
    total = E.Cast(wide, binary("add", right_shift, q))
    one = E.IntImm(INT64, 1) if lanes == 1 else E.Broadcast(E.IntImm(INT64, 1), lanes)
    rounding = call_intrin("shift_left", one, binary("sub", total, 1))
    return E.Cast(narrow, call_intrin("shift_right", binary("add", product, rounding), total))


def lower_q_multiply_shift(call: E.Call) -> E.PrimExpr:
    """The arithmetic of one ``q_multiply_shift``/``_per_axis`` call."""
    if call.op == "q_multiply_shift":
        x, y, q, s = call.args
        zero = E.IntImm(s.dtype.element_of(), 0)
        left = select(binary("gt", s, zero), s, zero)
        right = select(binary("gt", s, zero), zero, binary("sub", zero, s))
        return _fixed_point_multiply(x, y, q, left, right, binary("ne", left, zero))
    x, y, left, right, q, lshift_required, _ = call.args
    return _fixed_point_multiply(x, y, q, left, right, lshift_required)


class _Lower(StmtExprMutator):
    def visit_call(self, op):
        new = self.generic_visit(op)
        if new.op in ("q_multiply_shift", "q_multiply_shift_per_axis"):
            return lower_q_multiply_shift(new)
        return new


def _lower(func, mod, ctx):
    import attrs

    body = _Lower().visit(func.body)
    return func if body is func.body else attrs.evolve(func, body=body)


def LowerIntrinsics():  # noqa: N802 - TVM's pass naming
    """The pass replacing formula-defined intrinsics by their arithmetic."""
    return prim_func_pass(_lower, opt_level=0, name="tl.LowerIntrinsics")

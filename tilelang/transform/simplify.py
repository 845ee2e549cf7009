"""Simplify: every expression simplified under the bounds of the loops around it.

Inside ``for i in range(min, min + extent)`` the analyzer knows
``min <= i <= min + extent - 1`` (and the value range of a ``let`` variable), so
``(i_0 * 4 + i_1) // 4`` becomes ``i_0`` and a test the bounds decide disappears: an
``if`` whose condition is proven true is replaced by its then-branch, one proven false
by its else-branch (or nothing). Serial loops of one iteration are replaced by their
body with the variable bound to the minimum. See :mod:`tilelang.arith` for the rules.
"""

from __future__ import annotations

from tilelang.arith import Analyzer
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.functor import StmtExprMutator, substitute
from tilelang.transform.pass_infra import prim_func_pass

_NOOP = S.Evaluate(E.IntImm("int32", 0))


class StmtSimplifier(StmtExprMutator):
    """Simplifies statements and the expressions in them; see the module docstring."""

    def __init__(self, analyzer: Analyzer | None = None):
        self.analyzer = analyzer or Analyzer()

    def visit(self, node):
        if isinstance(node, E.PrimExpr):
            return self.analyzer.simplify(node)
        return super().visit(node)

    def visit_for(self, op: S.For):
        min_value, extent = self.visit(op.min), self.visit(op.extent)
        step = None if op.step is None else self.visit(op.step)
        unit = isinstance(extent, E.IntImm) and extent.value == 1
        if unit and op.kind in (S.ForKind.SERIAL, S.ForKind.UNROLLED) and not op.annotations:
            return self.visit(substitute(op.body, {op.loop_var: min_value}))
        with self.analyzer.bind_range(op.loop_var, min_value, extent):
            body = self.visit(op.body)
        if min_value is op.min and extent is op.extent and step is op.step and body is op.body:
            return op
        return S.For(
            op.loop_var, min_value, extent, op.kind, body, op.thread_binding, op.annotations,
            step, span=op.span,
        )  # fmt: skip

    def visit_if_then_else(self, op: S.IfThenElse):
        cond = self.visit(op.condition)
        if isinstance(cond, E.IntImm):
            if cond.value:
                return self.visit(op.then_case)
            return _NOOP if op.else_case is None else self.visit(op.else_case)
        then_case = self.visit(op.then_case)
        else_case = None if op.else_case is None else self.visit(op.else_case)
        if cond is op.condition and then_case is op.then_case and else_case is op.else_case:
            return op
        return S.IfThenElse(cond, then_case, else_case, span=op.span)

    def visit_let_stmt(self, op: S.LetStmt):
        value = self.visit(op.value)
        bound = self.analyzer.const_bound(value)
        with self.analyzer.bind(op.var, bound.lo, bound.hi):
            body = self.visit(op.body)
        if value is op.value and body is op.body:
            return op
        return S.LetStmt(op.var, value, body, span=op.span)


def Simplify():  # noqa: N802 - TVM's pass name
    """The pass; see the module docstring."""

    def transform(func, mod, ctx):
        return func.with_body(StmtSimplifier().visit(func.body))

    return prim_func_pass(transform, opt_level=0, name="tir.Simplify")

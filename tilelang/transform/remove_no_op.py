"""RemoveNoOp: statements that do nothing are dropped.

``T.evaluate(0)`` (any constant) in a sequence, loops of zero iterations or with an
empty body, ``if`` statements with empty branches, and lets and allocations around
nothing. A body that becomes empty is ``T.evaluate(0)``.
"""

from __future__ import annotations

from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.functor import StmtExprMutator
from tilelang.transform.pass_infra import prim_func_pass

_NOOP = S.Evaluate(E.IntImm("int32", 0))


def is_no_op(stmt) -> bool:
    """True for a statement with no effect."""
    if stmt is None:
        return True
    if isinstance(stmt, S.Evaluate):
        return isinstance(stmt.value, (E.IntImm, E.FloatImm, E.StringImm))
    if isinstance(stmt, S.SeqStmt):
        return all(is_no_op(s) for s in stmt.seq)
    return False


class _RemoveNoOp(StmtExprMutator):
    def visit(self, node):
        if isinstance(node, E.PrimExpr):
            return node  # expressions have no statements inside
        return super().visit(node)

    def visit_seq_stmt(self, op):
        new = super().visit_seq_stmt(op)
        if not isinstance(new, S.SeqStmt):
            return _NOOP if is_no_op(new) else new
        kept = [s for s in new.seq if not is_no_op(s)]
        if len(kept) == len(new.seq):
            return new
        return S.seq_stmt(*kept) if kept else _NOOP

    def visit_for(self, op):
        new = self.generic_visit(op)
        extent = new.extent
        if is_no_op(new.body) or (isinstance(extent, E.IntImm) and extent.value <= 0):
            return _NOOP
        return new

    def visit_if_then_else(self, op):
        new = self.generic_visit(op)
        then_empty, else_empty = is_no_op(new.then_case), is_no_op(new.else_case)
        if then_empty and else_empty:
            return _NOOP
        if else_empty and new.else_case is not None:
            return S.IfThenElse(new.condition, new.then_case, None, span=op.span)
        if then_empty:
            return S.IfThenElse(E.Not(new.condition), new.else_case, None, span=op.span)
        return new

    def _wrapper(self, op):
        new = self.generic_visit(op)
        return _NOOP if is_no_op(new.body) else new

    visit_let_stmt = visit_allocate = visit_decl_buffer = _wrapper

    def visit_attr_stmt(self, op):
        # a software pipeline's commit / wait marks act with an empty body too
        if op.attr_key in KEPT_ATTRS:
            return self.generic_visit(op)
        return self._wrapper(op)


#: attributes that are not no-ops whatever their body (asynchronous copy groups)
KEPT_ATTRS = ("async_commit_queue_scope", "async_wait_queue_scope", "async_wait_inflight_count")


def RemoveNoOp():  # noqa: N802 - TVM's pass name
    """The pass; see the module docstring."""

    def transform(func, mod, ctx):
        return func.with_body(_RemoveNoOp().visit(func.body))

    return prim_func_pass(transform, opt_level=0, name="tir.RemoveNoOp")

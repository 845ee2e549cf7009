"""InstrumentBoundCheckers: a run-time check before every access not shown in bounds.

Enabled by ``build(..., bounds_check=True)``, ``tilec --bounds-check`` or TVM's
``PassContext(config={"tir.instrument_bound_checkers": True})``; the python reference
backend always runs with it. It runs after the blocks are lowered, while buffers still
have their shapes, so a failure names the index tuple as the program wrote it.

Each statement that evaluates expressions (a store, a let, a condition, loop bounds,
a call) is preceded by ``assert 0 <= index < extent`` for every index of every access
it makes, unless the loop domains in scope prove the index inside (an affine index
over its loops costs nothing). A load that runs only under a condition -- a branch of
``if_then_else``/``Select``, the right side of ``and``/``or`` -- is checked under that
condition. The assertion's message is the call ``tl.bounds_error(site, indices...,
extents...)``: ``site`` describes the access (function, buffer, source location) and
the backends record the values, so the error names the index that was out of bounds.
A failed check stops the call before the access: nothing is written past a buffer.
"""

from __future__ import annotations

import attrs

from tilelang.arith import const_difference, eval_interval
from tilelang.bounds.report import BOUNDS_ERROR, site_payload
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.buffer import Range
from tilelang.ir.convert import binary, logical
from tilelang.ir.functor import StmtExprMutator
from tilelang.transform.pass_infra import prim_func_pass

CONFIG = "tir.instrument_bound_checkers"


def _in_range(index: E.PrimExpr, extent: E.PrimExpr) -> E.PrimExpr:
    zero = E.IntImm(index.dtype, 0)
    return logical("and", binary("le", zero, index), binary("lt", index, extent))


def _scalar_indices(index: E.PrimExpr) -> list[E.PrimExpr]:
    if isinstance(index, E.Ramp):
        last = binary("add", index.base, binary("mul", index.stride, index.lanes - 1))
        return [index.base, last]
    if isinstance(index, E.Broadcast):
        return [index.value]
    return [index]


class _AccessCollector:
    """The checks one expression needs: ``(access, guard or None)`` in evaluation
    order, with the ``Let`` bindings each is under."""

    def __init__(self):
        self.found: list[tuple] = []

    def collect(self, expr, guard=None, lets=()):
        if isinstance(expr, E.BufferLoad):
            for index in expr.indices:
                self.collect(index, guard, lets)
            self.found.append((expr, guard, lets))
        elif isinstance(expr, (E.Select,)) or (
            isinstance(expr, E.Call) and expr.op == "if_then_else"
        ):
            cond, then, other = (
                (expr.condition, expr.true_value, expr.false_value)
                if isinstance(expr, E.Select)
                else expr.args
            )
            self.collect(cond, guard, lets)
            self.collect(then, _and(guard, cond), lets)
            self.collect(other, _and(guard, E.Not(cond)), lets)
        elif isinstance(expr, (E.And, E.Or)):
            self.collect(expr.a, guard, lets)
            first = expr.a if isinstance(expr, E.And) else E.Not(expr.a)
            self.collect(expr.b, _and(guard, first), lets)
        elif isinstance(expr, E.Let):
            self.collect(expr.value, guard, lets)
            self.collect(expr.body, guard, lets + ((expr.var, expr.value),))
        elif isinstance(expr, E.Call):
            for arg in expr.args:
                if isinstance(arg, E.PrimExpr):
                    self.collect(arg, guard, lets)
        elif isinstance(expr, E.PrimExpr):
            for name in ("a", "b", "value", "base", "stride"):
                child = getattr(expr, name, None)
                if isinstance(child, E.PrimExpr):
                    self.collect(child, guard, lets)


def _under_lets(expr, lets):
    """``expr`` evaluated inside the ``Let`` bindings an access was found under."""
    for var, value in reversed(lets):
        expr = E.Let(var, value, expr)
    return expr


def _and(guard, cond):
    return cond if guard is None else logical("and", guard, cond)


class _Instrumenter(StmtExprMutator):
    def __init__(self, func_name: str):
        self.func_name = func_name
        self.ranges: dict = {}
        self.located: list = []

    def visit(self, node):
        has_span = isinstance(node, S.Stmt) and getattr(node, "span", None) is not None
        if has_span:
            self.located.append(node)
        try:
            return super().visit(node)
        finally:
            if has_span:
                self.located.pop()

    # -- the checks
    def checks(self, exprs, store=None) -> list[tuple[E.PrimExpr, E.PrimExpr]]:
        collector = _AccessCollector()
        for expr in exprs:
            if expr is not None:
                collector.collect(expr)
        if store is not None:
            collector.found.append((store, None, ()))
        out = []
        for access, guard, lets in collector.found:
            check = self.check(access, guard, lets)
            if check is not None:
                out.append(check)
        return out

    def check(self, access, guard, lets):
        if access.predicate is not None:
            # a masked access may name lanes outside the buffer that it never touches;
            # the backends that take it check the lanes it does touch
            return None
        conds = []
        for index, extent in zip(access.indices, access.buffer.shape):
            for scalar in _scalar_indices(index):
                if not self.shown_inside(scalar, extent, lets):
                    conds.append(_in_range(scalar, extent))
        if not conds:
            return None
        cond = conds[0]
        for more in conds[1:]:
            cond = logical("and", cond, more)
        if guard is not None:
            cond = logical("or", E.Not(guard), cond)
        node = (
            access
            if getattr(access, "span", None) is not None
            else (self.located[-1] if self.located else None)
        )
        values = [_scalar_indices(i)[0] for i in access.indices]
        values = [E.Cast("int64", v) if v.dtype != "int64" else v for v in values]
        extents = [E.Cast("int64", x) if x.dtype != "int64" else x for x in access.buffer.shape]
        payload = E.StringImm(site_payload(self.func_name, access, node))
        values = [_under_lets(v, lets) for v in (*values, *extents)]
        return _under_lets(cond, lets), E.Call("handle", BOUNDS_ERROR, (payload, *values))

    def shown_inside(self, index, extent, lets) -> bool:
        if lets or not index.dtype.is_integer():
            return False
        lo, hi = eval_interval(index, self.ranges)
        if lo is None or hi is None:
            return False
        low = const_difference(lo, E.IntImm(lo.dtype, 0))
        high = const_difference(binary("sub", extent, 1), hi)
        return low is not None and low >= 0 and high is not None and high >= 0

    def guarded(self, stmt, checks):
        for cond, message in reversed(checks):
            stmt = S.AssertStmt(cond, message, stmt)
        return stmt

    # -- statements that evaluate expressions
    def visit_buffer_store(self, op: S.BufferStore):
        return self.guarded(op, self.checks([op.value, *op.indices], store=op))

    def visit_let_stmt(self, op: S.LetStmt):
        body = self.visit(op.body)
        new = op if body is op.body else attrs.evolve(op, body=body)
        return self.guarded(new, self.checks([op.value]))

    def visit_if_then_else(self, op: S.IfThenElse):
        new = self.generic_visit(op)
        return self.guarded(new, self.checks([op.condition]))

    def visit_evaluate(self, op: S.Evaluate):
        return self.guarded(op, self.checks([op.value]))

    def visit_assert_stmt(self, op: S.AssertStmt):
        new = self.generic_visit(op)
        return self.guarded(new, self.checks([op.condition]))

    def visit_while(self, op: S.While):
        checks = self.checks([op.condition])
        body = self.visit(op.body)
        if checks:  # the condition is evaluated again after each iteration
            body = S.seq_stmt(body, self.guarded(S.Evaluate(E.IntImm("int32", 0)), checks))
        new = op if body is op.body else attrs.evolve(op, body=body)
        return self.guarded(new, checks)

    def visit_for(self, op: S.For):
        checks = self.checks([op.min, op.extent, op.step])
        self.ranges[op.loop_var] = Range(op.min, op.extent)
        try:
            body = self.visit(op.body)
        finally:
            del self.ranges[op.loop_var]
        new = op
        if body is not op.body:
            # A checked access stops the call where it fails; that needs scalar code.
            kind = S.ForKind.SERIAL if op.kind == S.ForKind.VECTORIZED else op.kind
            new = attrs.evolve(op, body=body, kind=kind)
        return self.guarded(new, checks)


def instrument_bound_checkers(func, name: str = "main"):
    """``func`` (blocks lowered, buffers not yet flattened) with a bounds check before
    every access that is not shown inside its buffer."""
    body = _Instrumenter(func.attrs.get("global_symbol", name)).visit(func.body)
    return func if body is func.body else func.with_body(body)


def _transform(func, mod, ctx):
    name = next((n for n, f in mod.functions.items() if f is func), "main")
    return instrument_bound_checkers(func, name)


def InstrumentBoundCheckers():  # noqa: N802 - TVM's pass name
    """The pass (the pipeline includes it when bounds checks are asked for: see
    :func:`tilelang.transform.lower`)."""
    return prim_func_pass(_transform, opt_level=0, name="tir.InstrumentBoundCheckers")

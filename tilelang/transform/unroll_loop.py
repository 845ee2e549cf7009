"""UnrollLoop: ``T.unroll`` loops with a constant trip count of at most 64 become
straight-line code, one copy of the body per iteration with the loop variable
replaced by its value. Variables and buffers the body defines are renewed in each
copy, so no two copies define the same variable. Longer unrolled loops stay loops
(a backend may emit an unroll pragma for them).
"""

from __future__ import annotations

import attrs

from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.convert import const_int_value
from tilelang.ir.functor import StmtExprMutator
from tilelang.transform.pass_infra import prim_func_pass

MAX_UNROLL = 64


class _RenewDefs(StmtExprMutator):
    """Fresh copies of every variable and buffer defined in a statement."""

    def __init__(self, vmap: dict):
        self.vmap = dict(vmap)
        self.bmap: dict = {}

    def visit_var(self, var):
        return self.vmap.get(var, var)

    visit_size_var = visit_var

    def visit_var_def(self, var):
        fresh = type(var)(var.name, var.dtype, span=var.span)
        self.vmap[var] = fresh
        return fresh

    def visit_buffer_def(self, buffer):
        if buffer.data not in self.vmap:
            self.visit_var_def(buffer.data)
        fresh = attrs.evolve(
            buffer,
            data=self.vmap[buffer.data],
            shape=tuple(self.visit(x) for x in buffer.shape),
            strides=tuple(self.visit(x) for x in buffer.strides),
            elem_offset=self.visit(buffer.elem_offset),
        )
        self.bmap[buffer] = fresh
        return fresh

    def visit_buffer_ref(self, buffer):
        return self.bmap.get(buffer, buffer)


def _trip_values(op: S.For):
    lo, extent = const_int_value(op.min), const_int_value(op.extent)
    step = 1 if op.step is None else const_int_value(op.step)
    if lo is None or extent is None or step is None or step <= 0:
        return None
    values = range(lo, lo + extent, step)
    return values if len(values) <= MAX_UNROLL else None


class _Unroll(StmtExprMutator):
    def visit(self, node):
        if isinstance(node, E.PrimExpr):
            return node
        return super().visit(node)

    def visit_for(self, op: S.For):
        new = self.generic_visit(op)
        if new.kind != S.ForKind.UNROLLED:
            return new
        values = _trip_values(new)
        if values is None:
            return new
        copies = [
            _RenewDefs({new.loop_var: E.IntImm(new.loop_var.dtype, v)}).visit(new.body)
            for v in values
        ]
        return S.seq_stmt(*copies)


def UnrollLoop():  # noqa: N802 - TVM's pass name
    """The pass; see the module docstring."""

    def transform(func, mod, ctx):
        return func.with_body(_Unroll().visit(func.body))

    return prim_func_pass(transform, opt_level=0, name="tir.UnrollLoop")

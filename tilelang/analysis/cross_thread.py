"""Cross-thread reductions: reduction blocks whose reduction iterator is bound to a
loop over ``threadIdx.x/y/z``. TVM lowers them to a ``tvm_thread_allreduce``
(LowerCrossThreadReduction); tilelang's CPU backends run bound loops serially, so
the reduction is computed as written, and the CUDA backend, which has no such
lowering, refuses them (every thread would update the same element at once)."""

from __future__ import annotations

from tilelang.ir import stmt as S
from tilelang.ir.functor import StmtExprVisitor
from tilelang.ir.var_usage import uses_any_var


class _Finder(StmtExprVisitor):
    def __init__(self):
        self.threads = []  # loop variables bound to threadIdx, outermost first
        self.found = []

    def visit_for(self, op):
        bound = op.kind is S.ForKind.THREAD_BINDING and str(op.thread_binding).startswith(
            "threadIdx."
        )
        if bound:
            self.threads.append(op.loop_var)
        self.generic_visit(op)
        if bound:
            self.threads.pop()

    def visit_block_realize(self, op):
        for iv, value in zip(op.block.iter_vars, op.iter_values):
            if iv.iter_type == S.IterVar.CommReduce and uses_any_var(value, self.threads):
                self.found.append((op.block.name_hint, iv.var.name))
                break
        self.generic_visit(op)


def cross_thread_reductions(func) -> list[tuple[str, str]]:
    """``(block name, reduction iterator)`` of each block of ``func`` that reduces
    across threads."""
    finder = _Finder()
    finder.visit(func.body)
    return finder.found

"""ConvertBlocksToOpaque: block iterators are replaced by the values bound to them.

Afterwards every block has no iterators and its ``BlockRealize`` no bindings; the
body, regions, match_buffer sources and allocations speak of loop variables only::

    for i, j in T.grid(4, 4):                for i, j in T.grid(4, 4):
        with T.block("C"):                      with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])      C[i, j] = A[i, j]
            C[vi, vj] = A[vi, vj]
"""

from __future__ import annotations

import attrs

from tilelang.ir import stmt as S
from tilelang.ir.functor import StmtExprMutator, substitute
from tilelang.transform.pass_infra import prim_func_pass


class _ToOpaque(StmtExprMutator):
    def visit_block_realize(self, op: S.BlockRealize):
        block = op.block
        if block.iter_vars:
            vmap = {iv.var: value for iv, value in zip(block.iter_vars, op.iter_values)}
            block = attrs.evolve(substitute(block, vmap), iter_vars=())
        block = self.visit(block)
        if block is op.block and not op.iter_values:
            return op
        return S.BlockRealize((), op.predicate, block, span=op.span)


def ConvertBlocksToOpaque():  # noqa: N802 - TVM's pass name
    """The pass; see the module docstring."""

    def transform(func, mod, ctx):
        return func.with_body(_ToOpaque().visit(func.body))

    return prim_func_pass(transform, opt_level=0, name="tir.ConvertBlocksToOpaque")

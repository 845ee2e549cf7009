"""LowerOpaqueBlock: blocks disappear.

A block's allocations become ``Allocate`` + ``DeclBuffer`` where the block stood, its
``T.where`` predicate an ``IfThenElse``; the root block of a function leaves only its
allocations behind. Runs after ConvertBlocksToOpaque (no iterators left) and
LowerMatchBuffer (no match_buffers left)::

    with T.block("C"):                         if i * 4 + j < 10:
        T.where(i * 4 + j < 10)          ->         C[i * 4 + j] = 0.0
        C[i * 4 + j] = 0.0
"""

from __future__ import annotations

from tilelang.errors import BuildError
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.functor import StmtExprMutator
from tilelang.transform.extern_imports import block_import_attrs
from tilelang.transform.pass_infra import prim_func_pass


def allocate_buffer(buffer, body: S.Stmt) -> S.Stmt:
    """``Allocate`` + ``DeclBuffer`` of ``buffer`` around ``body``."""
    return S.Allocate(
        buffer.data,
        buffer.dtype,
        buffer.shape,
        E.IntImm("bool", 1),
        S.DeclBuffer(buffer, body),
        scope=buffer.scope,
    )


class _LowerOpaque(StmtExprMutator):
    def visit_block_realize(self, op: S.BlockRealize):
        block = op.block
        if block.iter_vars or op.iter_values:
            raise BuildError(
                f"block {block.name_hint!r} still has iterators; run ConvertBlocksToOpaque first"
            )
        if block.match_buffers:
            raise BuildError(
                f"block {block.name_hint!r} still has match_buffers; run LowerMatchBuffer first"
            )
        body = self.visit(block.body)
        for buffer in reversed(block.alloc_buffers):
            body = allocate_buffer(buffer, body)
        if not (isinstance(op.predicate, E.IntImm) and op.predicate.value):
            body = S.IfThenElse(op.predicate, body)
        # extern code a block asks for (a tensorized micro-kernel) outlives the block
        return block_import_attrs(block, body)


def LowerOpaqueBlock():  # noqa: N802 - TVM's pass name
    """The pass; see the module docstring."""

    def transform(func, mod, ctx):
        return func.with_body(_LowerOpaque().visit(func.body))

    return prim_func_pass(transform, opt_level=0, name="tir.LowerOpaqueBlock")

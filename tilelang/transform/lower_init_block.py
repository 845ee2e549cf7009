"""LowerInitBlock: a reduction block's ``T.init()`` becomes an ``if`` in its body.

The init runs on the first reduction iteration, when every reduction iterator sits at
the minimum of its domain::

    with T.block("Y"):                       with T.block("Y"):
        ...                                      ...
        with T.init():               ->          if vk == 0:
            Y[vi, vj] = 0.0                          Y[vi, vj] = 0.0
        Y[vi, vj] = Y[vi, vj] + ...              Y[vi, vj] = Y[vi, vj] + ...
"""

from __future__ import annotations

import attrs

from tilelang.ir import stmt as S
from tilelang.ir.convert import binary
from tilelang.ir.functor import StmtExprMutator
from tilelang.ir.stmt import IterVar
from tilelang.transform.pass_infra import prim_func_pass


def init_condition(block: S.Block):
    """``vk == min_k and ...`` over the block's reduction iterators, or None."""
    cond = None
    for iv in block.iter_vars:
        if iv.iter_type == IterVar.CommReduce:
            test = binary("eq", iv.var, iv.dom.min)
            cond = test if cond is None else cond & test
    return cond


class _LowerInit(StmtExprMutator):
    def visit_block(self, op: S.Block):
        new = self.generic_visit(op)
        if new.init is None:
            return new
        cond = init_condition(new)
        init = new.init if cond is None else S.IfThenElse(cond, new.init)
        return attrs.evolve(new, init=None, body=S.seq_stmt(init, new.body))


def LowerInitBlock():  # noqa: N802 - TVM's pass name
    """The pass; see the module docstring."""

    def transform(func, mod, ctx):
        return func.with_body(_LowerInit().visit(func.body))

    return prim_func_pass(transform, opt_level=0, name="tir.LowerInitBlock")

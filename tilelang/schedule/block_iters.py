"""Rewrites of one block's signature: reorder_block_iter_var (the order of its
iterators) and unsafe_set_dtype (the element type of a buffer it writes).

reorder_block_iter_var(C, [2, 1, 0])::

    vi, vj, vk = T.axis.remap("SSR", [i, j, k])   ->   vk, vj, vi = T.axis.remap("RSS", [k, j, i])

unsafe_set_dtype(B, 0, "float16"): the intermediate ``B`` is stored as float16; what
is stored into it is cast to float16, what is loaded from it cast back::

    B[vi, vj] = A[vi, vj] * 2.0              B[vi, vj] = T.Cast("float16", A[vi, vj] * 2.0)
    C[vi, vj] = B[vi, vj] + 1.0              C[vi, vj] = T.Cast("float32", B[vi, vj]) + 1.0
"""

from __future__ import annotations

import attrs

from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.analysis import get_block_read_write_region
from tilelang.ir.dtype import DataType
from tilelang.ir.functor import StmtExprMutator, post_order_visit
from tilelang.schedule.common import block_subject, find_block
from tilelang.schedule.errors import schedule_error
from tilelang.schedule.inline import allocated_in
from tilelang.schedule.state import Tree, rewrite


def reorder_block_iter_var(func, name, new_order):
    """Returns the new function: block ``name`` with its iterators (and their
    bindings) in ``new_order``, a permutation of their positions."""
    tree = Tree(func)
    realize = find_block(tree, name, "reorder_block_iter_var")
    block, subject = realize.block, block_subject(realize)
    order = list(new_order)
    n = len(block.iter_vars)
    if sorted(order) != list(range(n)) or not all(isinstance(x, int) for x in order):
        raise schedule_error(
            "reorder_block_iter_var", subject,
            f"the new order {order} is not a permutation of the positions 0..{n - 1} of the "
            f"block's {n} iterators",
            realize,
        )  # fmt: skip
    new_block = attrs.evolve(block, iter_vars=tuple(block.iter_vars[i] for i in order))
    new_realize = attrs.evolve(
        realize, iter_values=tuple(realize.iter_values[i] for i in order), block=new_block
    )
    return rewrite(func, {id(realize): new_realize})


class _SetDtype(StmtExprMutator):
    def __init__(self, buffers: dict, old_dtype):
        self.buffers = buffers  # old buffer (and views of it) -> retyped buffer
        self.old_dtype = old_dtype

    def visit_buffer_ref(self, buffer):
        return self.buffers.get(buffer, buffer)

    def visit_buffer_def(self, buffer):
        return self.buffers.get(buffer, buffer)

    def visit_buffer_load(self, op):
        new = self.generic_visit(op)
        if op.buffer not in self.buffers:
            return new
        return E.Cast(self.old_dtype, new)

    def visit_buffer_store(self, op):
        new = self.generic_visit(op)
        if op.buffer not in self.buffers:
            return new
        return attrs.evolve(new, value=E.Cast(self.buffers[op.buffer].dtype, new.value))


def unsafe_set_dtype(func, name, buffer_index, dtype):
    """Returns the new function: ``writes[buffer_index]`` of block ``name`` (an
    allocated intermediate) retyped to ``dtype``, with casts at every access."""
    tree = Tree(func)
    realize = find_block(tree, name, "unsafe_set_dtype")
    block, subject = realize.block, block_subject(realize)
    writes = block.writes if block.reads or block.writes else get_block_read_write_region(block)[1]
    if not isinstance(buffer_index, int) or not 0 <= buffer_index < len(writes):
        raise schedule_error(
            "unsafe_set_dtype", subject,
            f"write buffer index {buffer_index!r} is out of range; the block writes "
            f"{[r.buffer.name for r in writes]}",
        )  # fmt: skip
    buffer = writes[buffer_index].buffer
    if allocated_in(tree, buffer) is None:
        raise schedule_error(
            "unsafe_set_dtype", subject,
            f"{buffer.name} is not allocated inside the function: an argument's type is "
            "fixed by the caller",
        )  # fmt: skip
    try:
        new_dtype = DataType(dtype)
    except Exception:
        raise schedule_error("unsafe_set_dtype", subject, f"unknown dtype {dtype!r}") from None
    if new_dtype == buffer.dtype:
        return func
    buffers = {buffer: attrs.evolve(buffer, dtype=new_dtype)}

    def retype_views(node):
        if isinstance(node, S.Block):
            for match in node.match_buffers:
                if match.source.buffer is buffer:
                    buffers[match.buffer] = attrs.evolve(match.buffer, dtype=new_dtype)

    post_order_visit(func.body, retype_views)
    return func.with_body(_SetDtype(buffers, buffer.dtype).visit(func.body))

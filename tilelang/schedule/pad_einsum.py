"""pad_einsum: rounds the iterators of an einsum-like block up to multiples of the
given paddings; the buffers it reads and writes along a padded iterator are staged
through zero-padded copies.

Before / after ``pad_einsum(C, [1, 32, 1])`` (C: ``C[i, j] += A[i, k] * B[j, k]``,
``j`` over ``n``)::

                                                 B_pad = T.alloc_buffer(((n + 31) // 32 * 32, 8))
                                                 C_pad = T.alloc_buffer((4, (n + 31) // 32 * 32))
                                                 for i0, i1 in T.grid((n + 31) // 32 * 32, 8):
                                                     with T.block("B_pad"):
                                                         B_pad[v0, v1] = T.if_then_else(
                                                             v0 < n, B[v0, v1], T.float32(0))
    for i, j, k in T.grid(4, n, 8):              for i, j, k in T.grid(4, (n + 31) // 32 * 32, 8):
        with T.block("C"):                           with T.block("C"):
            C[i, j] += A[i, k] * B[j, k]                 C_pad[i, j] += A[i, k] * B_pad[j, k]
                                                 for i0, i1 in T.grid(4, n):
                                                     with T.block("C_pad"):
                                                         C[v0, v1] = C_pad[v0, v1]

Every access of the block is one point whose indices are iterators or constants
(an einsum), each buffer accessed once. The extra iterations compute garbage into the
padding of the outputs, never copied back. A padded *reduction* iterator adds its
extra terms into real outputs, so the update must be ``acc = acc + e`` with ``e``
zero whenever a zero-padded input is zero (a product, as in a matmul); a max or a
sum of inputs that are not all padded is refused. Integer division by a padded input
is refused too (its padding is zero). The loops that are the padded iterators are
lengthened, so they must hold only this block, and so must the statement of the scope
that holds it (the copies go right before and after that statement).
"""

from __future__ import annotations

import attrs

from tilelang.arith import const_value, simplify
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.buffer import BufferRegion, Range, decl_buffer
from tilelang.ir.convert import binary, logical
from tilelang.ir.functor import StmtExprMutator, post_order_visit
from tilelang.schedule.common import (
    block_subject,
    find_block,
    fresh_name,
    replace_scope_body,
    scope_items,
    taken_names,
    top_index,
)
from tilelang.schedule.errors import schedule_error
from tilelang.schedule.state import Tree

P = "pad_einsum"


def pad_einsum(func, name, padding):
    """Returns the new function; see the module docstring."""
    tree = Tree(func)
    realize = find_block(tree, name, P)
    block, subject = realize.block, block_subject(realize)
    _check_padding(subject, block, padding)
    accesses = _einsum_accesses(subject, realize)
    padded = {}  # block iterator -> its new extent
    loop_extents = {}  # loop variable -> its new extent
    for iv, value, pad in zip(block.iter_vars, realize.iter_values, padding):
        extent = iv.dom.extent
        new = simplify(binary("mul", binary("floordiv", extent + (pad - 1), pad), pad))
        if const_value(simplify(new - extent)) == 0:
            continue
        padded[iv.var] = new
        if isinstance(value, E.Var) and any(
            value is lp.loop_var for lp in tree.loops_above(realize)
        ):
            loop_extents[value] = new
    if not padded:
        return func
    _check_loops(tree, subject, realize, loop_extents)
    _check_reduction(subject, realize, padded, accesses)
    scope, items = scope_items(tree, realize)
    position = top_index(tree, items, realize)
    others = [r for r in tree.blocks_under(items[position]) if r is not realize]
    if others:
        raise schedule_error(
            P, subject,
            f"the statement holding it also holds block {others[0].block.name_hint!r}; the "
            "padded copies go around that statement",
        )  # fmt: skip
    taken = taken_names(tree)
    reads, writes, allocs, buffer_map = [], [], [], {}
    for region, is_read in accesses:
        if not any(isinstance(r.min, E.Var) and r.min in padded for r in region.region):
            continue
        buffer = region.buffer
        shape = tuple(
            padded.get(r.min, dim) if isinstance(r.min, E.Var) else dim
            for r, dim in zip(region.region, buffer.shape)
        )
        new_name = fresh_name(taken, buffer.name + "_pad")
        taken.add(new_name)
        new = decl_buffer(shape, buffer.dtype, new_name, scope=buffer.scope)
        buffer_map[buffer] = new
        allocs.append(new)
        (reads if is_read else writes).append(_copy(buffer, new, is_read))
    stmt = _Pad(padded, loop_extents, buffer_map).visit(items[position])
    items[position : position + 1] = [*reads, stmt, *writes]
    return replace_scope_body(func, scope, items, allocs)


def _check_padding(subject, block, padding):
    ok = isinstance(padding, (list, tuple)) and len(padding) == len(block.iter_vars)
    ok = ok and all(isinstance(p, int) and not isinstance(p, bool) and p > 0 for p in padding)
    if not ok:
        raise schedule_error(
            P, subject,
            f"the padding must be a list of {len(block.iter_vars)} positive integers (one per "
            f"block iterator), not {padding!r}",
        )  # fmt: skip


def _einsum_accesses(subject, realize) -> list:
    """``(region, is_read)`` of every access; each must be one point indexed by
    iterators or constants, each buffer accessed once."""
    block = realize.block
    seen, out = set(), []
    for regions, is_read in ((block.reads, True), (block.writes, False)):
        for region in regions:
            point = all(
                const_value(r.extent) == 1
                and (isinstance(r.min, E.IntImm) or isinstance(r.min, E.Var))
                for r in region.region
            )
            if region.buffer in seen or not point:
                raise schedule_error(
                    P, subject,
                    f"is not an einsum: {region.buffer.name} must be accessed once, at one "
                    "point indexed by block iterators or constants",
                    realize,
                )  # fmt: skip
            seen.add(region.buffer)
            out.append((region, is_read))
    return out


def _check_loops(tree, subject, realize, loop_extents):
    for var in loop_extents:
        loop = tree.loops[id(var)]
        if tree.blocks_under(loop) != [realize]:
            raise schedule_error(
                P, subject,
                f"loop {var.name} also holds other blocks; lengthening it would run them "
                "on the padding",
            )  # fmt: skip


def _loads(expr) -> list:
    found = []
    post_order_visit(expr, lambda n: found.append(n) if isinstance(n, E.BufferLoad) else None)
    return found


def _check_reduction(subject, realize, padded, accesses):
    block = realize.block
    padded_buffers = {
        region.buffer
        for region, is_read in accesses
        if is_read and any(isinstance(r.min, E.Var) and r.min in padded for r in region.region)
    }
    for node in _nodes(block.body):
        if isinstance(node, (E.Div, E.Mod, E.FloorDiv, E.FloorMod)) and node.dtype.is_integer():
            if any(ld.buffer in padded_buffers for ld in _loads(node.b)):
                raise schedule_error(
                    P, subject, "it divides by a padded input, which is zero in the padding"
                )
    reduce_vars = [
        iv.var for iv in block.iter_vars if iv.iter_type != S.IterVar.DataPar and iv.var in padded
    ]
    if not reduce_vars:
        return
    store = block.body
    ok = (
        isinstance(store, S.BufferStore)
        and isinstance(store.value, E.Add)
        and isinstance(store.value.a, E.BufferLoad)
        and store.value.a.buffer is store.buffer
    )
    for var in reduce_vars:
        zeroed = {
            region.buffer
            for region, is_read in accesses
            if is_read and any(r.min is var for r in region.region)
        }
        if not ok or not _zero_when(store.value.b, zeroed):
            raise schedule_error(
                P, subject,
                f"padding the reduction iterator {var.name} adds terms to the result: the "
                "update must be acc = acc + e with e zero when the padded inputs are zero",
                realize,
            )  # fmt: skip


def _zero_when(expr, zeroed) -> bool:
    """Whether ``expr`` is zero when every load of ``zeroed`` is."""
    if isinstance(expr, E.BufferLoad):
        return expr.buffer in zeroed
    if isinstance(expr, (E.IntImm, E.FloatImm)):
        return expr.value == 0
    if isinstance(expr, E.Cast):
        return _zero_when(expr.value, zeroed)
    if isinstance(expr, E.Mul):
        return _zero_when(expr.a, zeroed) or _zero_when(expr.b, zeroed)
    if isinstance(expr, (E.Add, E.Sub)):
        return _zero_when(expr.a, zeroed) and _zero_when(expr.b, zeroed)
    return False


def _nodes(stmt) -> list:
    found = []
    post_order_visit(stmt, found.append)
    return found


def _copy(buffer, padded, is_read):
    """The nest copying ``buffer`` into ``padded`` (zero outside ``buffer``) or the
    padded result back into ``buffer``."""
    shape = padded.shape if is_read else buffer.shape
    loop_vars = [E.Var(f"i{d}", dim.dtype) for d, dim in enumerate(shape)]
    ivs = tuple(
        S.IterVar(Range(E.IntImm(dim.dtype, 0), dim), E.Var(f"v{d}", dim.dtype), S.IterVar.DataPar)
        for d, dim in enumerate(shape)
    )
    indices = tuple(iv.var for iv in ivs)
    point = tuple(Range(v, E.IntImm(v.dtype, 1)) for v in indices)
    if is_read:
        inside = None
        for v, old, new in zip(indices, buffer.shape, padded.shape):
            if const_value(simplify(new - old)) != 0:
                cond = binary("lt", v, old)
                inside = cond if inside is None else logical("and", inside, cond)
        load = E.BufferLoad(buffer, indices)
        zero = E.FloatImm(load.dtype, 0.0) if load.dtype.is_float() else E.IntImm(load.dtype, 0)
        value = load if inside is None else E.Call(load.dtype, "if_then_else", (inside, load, zero))
        body = S.BufferStore(padded, value, indices)
        reads, writes = (BufferRegion(buffer, point),), (BufferRegion(padded, point),)
    else:
        body = S.BufferStore(buffer, E.BufferLoad(padded, indices), indices)
        reads, writes = (BufferRegion(padded, point),), (BufferRegion(buffer, point),)
    block = S.Block(ivs, reads, writes, padded.name, body)
    stmt = S.BlockRealize(tuple(loop_vars), E.IntImm("bool", 1), block)
    for var, dim in reversed(list(zip(loop_vars, shape))):
        stmt = S.For(var, E.IntImm(dim.dtype, 0), dim, S.ForKind.SERIAL, stmt)
    return stmt


class _Pad(StmtExprMutator):
    """Longer loops and iterator domains, and the padded buffers in the block."""

    def __init__(self, padded, loop_extents, buffer_map):
        self.padded, self.loop_extents, self.buffer_map = padded, loop_extents, buffer_map

    def visit_for(self, op):
        new = self.generic_visit(op)
        extent = self.loop_extents.get(op.loop_var)
        return new if extent is None else attrs.evolve(new, extent=extent)

    def visit_block(self, op):
        new = self.generic_visit(op)
        iter_vars = tuple(
            attrs.evolve(iv, dom=Range(iv.dom.min, self.padded[iv.var]))
            if iv.var in self.padded
            else iv
            for iv in new.iter_vars
        )
        return attrs.evolve(new, iter_vars=iter_vars)

    def visit_buffer_load(self, op):
        op = self.generic_visit(op)
        new = self.buffer_map.get(op.buffer)
        return op if new is None else attrs.evolve(op, buffer=new)

    def visit_buffer_store(self, op):
        op = self.generic_visit(op)
        new = self.buffer_map.get(op.buffer)
        return op if new is None else attrs.evolve(op, buffer=new)

    def visit_buffer_ref(self, buffer):
        return self.buffer_map.get(buffer, buffer)

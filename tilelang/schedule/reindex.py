"""reindex: a buffer a block accesses is staged through a new buffer indexed directly
by the block's iterators.

Before / after ``reindex(B, ("read", 0))``::

    for i, j in T.grid(128, 128):            A_reindex = T.alloc_buffer((128, 128))
        with T.block("B"):                   for i, j in T.grid(128, 128):
            vi, vj = T.axis.remap(...)           with T.block("A_reindex"):
            B[vi, vj] = A[vj, vi] * 2.0              vi, vj = T.axis.remap("SS", [i, j])
                                                     A_reindex[vi, vj] = A[vj, vi]
                                             for i, j in T.grid(128, 128):
                                                 with T.block("B"):
                                                     B[vi, vj] = A_reindex[vi, vj] * 2.0

The block must access the buffer with one set of indices. Those indices, simplified
under the iterators' domains, decide which iterators index the new buffer (in the
block's order; ``co // 64`` with ``co < 64`` uses no iterator). The copy is a new
block over those iterators, all spatial, placed right before (a read) or after (a
write) the block's loop nest in its scope; the new buffer is allocated there.
"""

from __future__ import annotations

import attrs

from tilelang.arith import Analyzer, ConstBound, const_value
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir import structural_equal
from tilelang.ir.analysis import get_block_read_write_region, uses_any_var
from tilelang.ir.buffer import BufferRegion, Range, decl_buffer
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
from tilelang.schedule.state import Tree, rewrite


def resolve_buffer(primitive, realize, buffer_index):
    """``(buffer, is_write)`` for ``("read", i)``, ``("write", i)`` or a buffer name."""
    block, subject = realize.block, block_subject(realize)
    reads, writes = (block.reads, block.writes) if block.reads or block.writes else (
        get_block_read_write_region(block))  # fmt: skip
    if isinstance(buffer_index, str):
        for regions, is_write in ((writes, True), (reads, False)):
            for region in regions:
                if region.buffer.name == buffer_index:
                    return region.buffer, is_write
        raise schedule_error(primitive, subject, f"the block accesses no buffer {buffer_index!r}")
    if (
        not isinstance(buffer_index, (tuple, list))
        or len(buffer_index) != 2
        or buffer_index[0] not in ("read", "write")
    ):
        raise schedule_error(
            primitive, subject,
            f'buffer {buffer_index!r}: expected ("read", index), ("write", index) or a name',
        )  # fmt: skip
    kind, index = buffer_index
    regions = writes if kind == "write" else reads
    if not isinstance(index, int) or not 0 <= index < len(regions):
        raise schedule_error(
            primitive, subject,
            f"{kind} buffer index {index!r} is out of range; the block {kind}s "
            f"{[r.buffer.name for r in regions]}",
        )  # fmt: skip
    return regions[index].buffer, kind == "write"


def _accesses(block, buffer) -> list:
    found = []

    def visit(node):
        if isinstance(node, (E.BufferLoad, S.BufferStore)) and node.buffer is buffer:
            found.append(node.indices)

    post_order_visit(block.body, visit)
    if block.init is not None:
        post_order_visit(block.init, visit)
    return found


class _Replace(StmtExprMutator):
    def __init__(self, old, new, indices):
        self.old, self.new, self.indices = old, new, indices

    def visit_buffer_load(self, op):
        op = self.generic_visit(op)
        if op.buffer is not self.old:
            return op
        return E.BufferLoad(self.new, self.indices, predicate=op.predicate, span=op.span)

    def visit_buffer_store(self, op):
        op = self.generic_visit(op)
        if op.buffer is not self.old:
            return op
        return S.BufferStore(self.new, op.value, self.indices, predicate=op.predicate, span=op.span)


def reindex(func, name, buffer_index):
    """Returns ``(new_func, reindex_block_name)``; see the module docstring."""
    tree = Tree(func)
    realize = find_block(tree, name, "reindex")
    block, subject = realize.block, block_subject(realize)
    buffer, is_write = resolve_buffer("reindex", realize, buffer_index)
    analyzer = Analyzer()
    for iv in block.iter_vars:
        lo, extent = const_value(iv.dom.min), const_value(iv.dom.extent)
        if lo is not None and extent is not None:
            analyzer.var_bounds[iv.var] = ConstBound(lo, lo + extent - 1)
    accesses = [tuple(analyzer.simplify(x) for x in idx) for idx in _accesses(block, buffer)]
    if not accesses:
        raise schedule_error("reindex", subject, f"the block's body never accesses {buffer.name}")
    first = accesses[0]
    for other in accesses[1:]:
        if len(other) != len(first) or not all(
            structural_equal(a, b) for a, b in zip(first, other)
        ):
            raise schedule_error(
                "reindex", subject,
                f"{buffer.name} is accessed with different indices "
                f"[{', '.join(map(str, first))}] and [{', '.join(map(str, other))}]",
                realize,
            )  # fmt: skip
    used = [iv for iv in block.iter_vars if uses_any_var_list(first, iv.var)]
    taken = taken_names(tree)
    new_name = fresh_name(taken, f"{buffer.name}_reindex")
    new_buffer = decl_buffer(
        [iv.dom.extent for iv in used], buffer.dtype, new_name, scope=buffer.scope
    )
    # the block now accesses the new buffer at its own iterators
    own = tuple(_offset(iv.var, iv.dom.min) for iv in used)
    new_block = _Replace(buffer, new_buffer, own).visit(block)
    new_block = attrs.evolve(
        new_block,
        reads=_swap_regions(new_block.reads, buffer, new_buffer, used),
        writes=_swap_regions(new_block.writes, buffer, new_buffer, used),
    )
    copy = _copy_nest(new_name, used, first, buffer, new_buffer, is_write)
    func = rewrite(func, {id(block): new_block})
    return _insert(func, new_block, copy, new_buffer, after=is_write), new_name


def uses_any_var_list(exprs, var) -> bool:
    return any(uses_any_var(x, [var]) for x in exprs)


def _offset(var, lo):
    return var if const_value(lo) == 0 else var - lo


def _swap_regions(regions, old, new, used) -> tuple:
    region = tuple(Range(_offset(iv.var, iv.dom.min), E.IntImm(iv.var.dtype, 1)) for iv in used)
    return tuple(BufferRegion(new, region) if r.buffer is old else r for r in regions)


def _copy_nest(name, used, indices, buffer, new_buffer, is_write):
    """The copy block over fresh spatial iterators, one loop each."""
    ivs, loops, vmap = [], [], {}
    for d, iv in enumerate(used):
        var = E.Var(iv.var.name, iv.var.dtype)
        ivs.append(S.IterVar(iv.dom, var, S.IterVar.DataPar))
        loops.append(E.Var(f"ax{d}", iv.var.dtype))
        vmap[iv.var] = var
    from tilelang.ir.functor import substitute

    source = tuple(substitute(x, vmap) for x in indices)
    mine = tuple(_offset(iv.var, iv.dom.min) for iv in ivs)
    if is_write:
        body = S.BufferStore(buffer, E.BufferLoad(new_buffer, mine), source)
    else:
        body = S.BufferStore(new_buffer, E.BufferLoad(buffer, source), mine)
    block = S.Block(tuple(ivs), (), (), name, body)
    reads, writes = get_block_read_write_region(block)
    block = attrs.evolve(block, reads=tuple(reads), writes=tuple(writes))
    values = tuple(
        loop if const_value(iv.dom.min) == 0 else loop + iv.dom.min for loop, iv in zip(loops, ivs)
    )
    stmt = S.BlockRealize(values, E.IntImm("bool", 1), block)
    for loop, iv in reversed(list(zip(loops, ivs))):
        stmt = S.For(loop, E.IntImm(loop.dtype, 0), iv.dom.extent, S.ForKind.SERIAL, stmt)
    return stmt


def _insert(func, block, stmt, new_buffer, after: bool):
    """``stmt`` placed before/after the top-level statement of ``block``'s scope that
    holds it, and ``new_buffer`` allocated in that scope (a root block is made when
    the function has none)."""
    tree = Tree(func)
    realize = next(r for rs in tree.realizes.values() for r in rs if r.block is block)
    scope, items = scope_items(tree, realize)
    position = top_index(tree, items, realize)
    items.insert(position + 1 if after else position, stmt)
    return replace_scope_body(func, scope, items, (new_buffer,))

"""Cache stages in a block's own iteration space: reindex_cache_read and
reindex_cache_write (TVM's ``ReindexCacheRead`` / ``ReindexCacheWrite``).

The block must touch the buffer at one point per iteration. The cache buffer is
indexed by ``index_map`` applied to the block's iterators, and the copy block runs
over the block's iterators that the old or the new indices use (each needs both to
use it), bound as the block binds them, under the loops those bindings use:

- read: the copy sits in the lowest common loop (or scope) of the buffer's producer
  and the block, right before the block's subtree; only this block reads the cache.
- write: the block writes (and, for a reduction, reads) the cache; the copy back
  sits in the lowest common loop of the block and the buffer's consumers, right
  before the first consumer, or at the end of the scope when nothing consumes it.
"""

from __future__ import annotations

import attrs

from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.analysis import uses_any_var
from tilelang.ir.buffer import BufferRegion, Range, decl_buffer
from tilelang.ir.functor import StmtExprMutator, substitute
from tilelang.schedule.cache import _check_scope, _pick, _regions
from tilelang.schedule.common import (
    block_subject,
    find_block,
    fresh_name,
    taken_names,
    top_index,
)
from tilelang.schedule.errors import schedule_error
from tilelang.schedule.index_map import IndexMap
from tilelang.schedule.regions import buffers_of, siblings
from tilelang.schedule.state import Tree, rewrite, stmt_children


def reindex_cache_read(func, name, index, scope, index_map):
    """Block ``name`` reads ``reads[index]`` through a cache indexed by ``index_map``
    of its iterators. Returns ``(new_func, cache_block_name)``."""
    return _reindex("reindex_cache_read", func, name, index, scope, index_map, read=True)


def reindex_cache_write(func, name, index, scope, index_map):
    """Block ``name`` writes ``writes[index]`` into a cache indexed by ``index_map`` of
    its iterators, copied back by a new block. Returns ``(new_func, cache_block_name)``."""
    return _reindex("reindex_cache_write", func, name, index, scope, index_map, read=False)


def _reindex(primitive, func, name, index, scope, index_map, read):
    tree = Tree(func)
    realize = find_block(tree, name, primitive)
    block, subject = realize.block, block_subject(realize)
    _check_scope(primitive, subject, scope)
    reads, writes = _regions(block)
    regions = reads if read else writes
    buffer = _pick(primitive, realize, index, regions, "read" if read else "write")
    region = next(r for r in regions if r.buffer is buffer)
    if not all(isinstance(r.extent, E.IntImm) and r.extent.value == 1 for r in region.region):
        raise schedule_error(
            primitive,
            subject,
            f"the block does not access {buffer.name} at a single point per iteration",
            realize,
        )
    writers = [r for r in siblings(tree, realize) if buffer in buffers_of(r)[1]]
    if not read and writers:
        raise schedule_error(
            primitive,
            subject,
            f"block {writers[0].block.name_hint!r} also writes {buffer.name}",
            realize,
        )
    if read and len(writers) > 1:
        raise schedule_error(primitive, subject, f"{buffer.name} has several producers", realize)
    if read and buffer in buffers_of(realize)[1]:
        raise schedule_error(primitive, subject, f"the block also writes {buffer.name}", realize)

    ivs = block.iter_vars
    try:
        imap = IndexMap.from_func(index_map, len(ivs))
        new_indices = imap.map_indices([iv.var for iv in ivs])
    except Exception as exc:  # the user's function failed on the block's iterators
        raise schedule_error(primitive, subject, f"bad index map: {exc}", realize) from None
    shape = imap.map_shape([iv.dom.extent for iv in ivs])
    if any(extent is None for extent in shape):
        raise schedule_error(primitive, subject, f"the index map {imap} has an unbounded index")
    old_indices = [r.min for r in region.region]
    used = []
    for iv, value in zip(ivs, realize.iter_values):
        in_old = any(uses_any_var(x, [iv.var]) for x in old_indices)
        in_new = any(uses_any_var(x, [iv.var]) for x in new_indices)
        if in_old != in_new:
            raise schedule_error(
                primitive,
                subject,
                f"the block iterator {iv.var.name} appears in "
                f"{'the old' if in_old else 'the new'} indices "
                f"{_show(old_indices if in_old else new_indices)} "
                f"but not in {_show(new_indices if in_old else old_indices)}",
                realize,
            )
        if in_new:
            used.append((iv, value))

    scope_realize = tree.scope_realize(realize)
    scope_node = scope_realize.block if scope_realize is not None else None
    if read:
        related = writers
        loc = _lca(tree, [realize, *related], scope_node) if related else scope_node
    else:
        related = [
            r
            for r in siblings(tree, realize)
            if buffer in buffers_of(r)[0] and tree.order.index(r) > tree.order.index(realize)
        ]
        loc = _lca(tree, [realize, *related], scope_node) if related else scope_node
    body = func.body if loc is None else loc.body
    items = list(body.seq) if isinstance(body, S.SeqStmt) else [body]
    if read:
        position = top_index(tree, items, realize) if related else 0
    else:
        position = top_index(tree, items, related[0]) if related else len(items)

    new_name = fresh_name(taken_names(tree), f"{buffer.name}_{scope.replace('.', '_')}")
    cache = decl_buffer(shape, buffer.dtype, new_name, scope=scope)
    below = [f for f in tree.loops_above(realize) if loc is None or tree.is_ancestor(loc, f)]
    stage = _stage(new_name, buffer, cache, old_indices, new_indices, used, below, read)
    new_block = _redirect(block, buffer, cache, new_indices, read)

    items = [_replace_in(item, block, new_block) for item in items]
    items.insert(position, stage)
    new_body = S.seq_stmt(*items)
    mapping = {}
    if loc is None:
        root = S.Block((), (), (), "root", new_body, alloc_buffers=(cache,))
        return func.with_body(S.BlockRealize((), E.IntImm("bool", 1), root)), new_name
    mapping[id(loc)] = attrs.evolve(loc, body=new_body)
    if loc is scope_node:
        mapping[id(loc)] = attrs.evolve(
            loc, body=new_body, alloc_buffers=(*loc.alloc_buffers, cache)
        )
        return rewrite(func, mapping), new_name
    func = rewrite(func, mapping)
    owner = Tree(func).realizes[scope_node.name_hint][0].block
    alloc = attrs.evolve(owner, alloc_buffers=(*owner.alloc_buffers, cache))
    return rewrite(func, {id(owner): alloc}), new_name


def _show(indices) -> str:
    return "[" + ", ".join(x.script() for x in indices) + "]"


def _lca(tree, realizes, scope_node):
    """The lowest loop (or the scope block) above all of ``realizes``."""
    common = tree.ancestors(realizes[0])
    for other in realizes[1:]:
        common = [a for a, b in zip(common, tree.ancestors(other)) if a is b]
    for node in reversed(common):
        if node is scope_node:
            return node
        if isinstance(node, S.For):
            return node
    return scope_node


def _stage(name, buffer, cache, old_indices, new_indices, used, loops, read):
    """The copy nest: ``cache[new] = buffer[old]`` (read) or the reverse (write), over
    the used iterators, under fresh copies of the loops their bindings use."""
    values = [value for _, value in used]
    loops = [f for f in loops if any(uses_any_var(v, [f.loop_var]) for v in values)]
    loop_vars = {f.loop_var: E.Var(f.loop_var.name, f.loop_var.dtype) for f in loops}
    vmap = dict(loop_vars)
    ivs, bindings = [], []
    for iv, value in used:
        var = E.Var(iv.var.name, iv.var.dtype)
        ivs.append(S.IterVar(iv.dom, var, S.IterVar.DataPar))
        bindings.append(substitute(value, loop_vars))
        vmap[iv.var] = var
    old = [substitute(x, vmap) for x in old_indices]
    new = [substitute(x, vmap) for x in new_indices]
    src, src_idx, dst, dst_idx = (buffer, old, cache, new) if read else (cache, new, buffer, old)
    point = lambda buf, idx: BufferRegion(buf, [Range(x, 1) for x in idx])  # noqa: E731
    block = S.Block(
        tuple(ivs),
        (point(src, src_idx),),
        (point(dst, dst_idx),),
        name,
        S.BufferStore(dst, E.BufferLoad(src, tuple(src_idx)), tuple(dst_idx)),
    )
    stmt = S.BlockRealize(tuple(bindings), E.IntImm("bool", 1), block)
    for f in reversed(loops):
        stmt = S.For(loop_vars[f.loop_var], f.min, f.extent, S.ForKind.SERIAL, stmt)
    return stmt


class _Redirect(StmtExprMutator):
    """Accesses of ``old`` become accesses of ``new`` at ``indices`` (loads only for a
    cache read)."""

    def __init__(self, old, new, indices, loads_only):
        self.old, self.new, self.indices, self.loads_only = old, new, tuple(indices), loads_only

    def visit_buffer_load(self, op):
        op = self.generic_visit(op)
        if op.buffer is not self.old:
            return op
        return E.BufferLoad(self.new, self.indices, predicate=op.predicate)

    def visit_buffer_store(self, op):
        op = self.generic_visit(op)
        if op.buffer is self.old and not self.loads_only:
            return attrs.evolve(op, buffer=self.new, indices=self.indices)
        return op


def _redirect(block, old, new, indices, read):
    """``block`` reading (or writing) ``new`` at ``indices`` instead of ``old``."""
    mutator = _Redirect(old, new, indices, loads_only=read)
    body = mutator.visit(block.body)
    init = mutator.visit(block.init) if block.init is not None else None
    point = BufferRegion(new, [Range(x, 1) for x in indices])

    def swap(regions, which):
        return tuple(point if r.buffer is old and which else r for r in regions)

    return attrs.evolve(
        block,
        body=body,
        init=init,
        reads=swap(block.reads, True),
        writes=swap(block.writes, not read),
    )


def _replace_in(stmt, old, new):
    if stmt is old:
        return new
    if not any(k is old or _contains(k, old) for k in stmt_children(stmt)):
        return stmt
    from tilelang.schedule.state import _Rewrite

    return _Rewrite({id(old): new}).visit(stmt)


def _contains(stmt, target) -> bool:
    stack = [stmt]
    while stack:
        node = stack.pop()
        if node is target:
            return True
        stack.extend(stmt_children(node))
    return False

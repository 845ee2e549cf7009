"""Cache stages and storage scopes: cache_read, cache_write, set_scope."""

from __future__ import annotations

import attrs

from tilelang.analysis import get_block_access_region, get_block_read_write_region
from tilelang.arith import const_value, eval_interval, simplify
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.buffer import Range, decl_buffer
from tilelang.ir.functor import StmtExprMutator, StmtExprVisitor, post_order_visit, substitute
from tilelang.ir.structural import structural_equal
from tilelang.schedule.cache_region import (
    Rebase,
    at_least_zero,
    compact_copy_nest,
    compact_region,
    covers,
    declared_bounds,
    symbolic_region,
)
from tilelang.schedule.common import block_subject, find_block, fresh_name
from tilelang.schedule.errors import schedule_error
from tilelang.schedule.inline import _with_regions, allocated_in
from tilelang.schedule.regions import buffers_of, siblings
from tilelang.schedule.state import Tree, rewrite


class _SwapBuffer(StmtExprMutator):
    """Replaces a buffer in loads (and, unless ``loads_only``, everywhere else). With
    ``loads_only`` the read regions of nested blocks follow the loads, so that a
    block under a blockized block does not keep declaring the old buffer."""

    def __init__(self, old, new, loads_only=False):
        self.old, self.new, self.loads_only = old, new, loads_only

    def visit_buffer_load(self, op):
        op = self.generic_visit(op)
        return attrs.evolve(op, buffer=self.new) if op.buffer is self.old else op

    def visit_block(self, op):
        op = self.generic_visit(op)
        if not self.loads_only or not any(r.buffer is self.old for r in op.reads):
            return op
        reads = tuple(
            attrs.evolve(r, buffer=self.new) if r.buffer is self.old else r for r in op.reads
        )
        return attrs.evolve(op, reads=reads)

    def visit_buffer_ref(self, buffer):
        return self.new if buffer is self.old and not self.loads_only else buffer

    def visit_buffer_def(self, buffer):
        return self.new if buffer is self.old and not self.loads_only else buffer


def swap_buffer(node, old, new, loads_only=False):
    return _SwapBuffer(old, new, loads_only).visit(node)


def _regions(block):
    if block.reads or block.writes:
        return list(block.reads), list(block.writes)
    return get_block_read_write_region(block)


def _pick(primitive, realize, index, regions, kind):
    subject = block_subject(realize)
    if isinstance(index, str):  # a buffer given by name (TVM accepts both)
        named = [k for k, r in enumerate(regions) if r.buffer.name == index]
        index = named[0] if named else index
    if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(regions):
        raise schedule_error(
            primitive,
            subject,
            f"{kind} buffer index {index!r} is out of range; the block {kind}s "
            f"{[r.buffer.name for r in regions]}",
            realize,
        )
    return regions[index].buffer


#: storage scope ranks TVM knows (``StorageScope::Create``); a tag may follow a dot
SCOPE_RANKS = ("global", "shared", "warp", "local", "wmma", "metal", "texture")


def _check_scope(primitive, subject, scope):
    if (
        not isinstance(scope, str)
        or not scope
        or " " in scope
        or scope.split(".")[0] not in SCOPE_RANKS
    ):
        raise schedule_error(
            primitive,
            subject,
            f"invalid storage scope {scope!r}; a scope is one of {list(SCOPE_RANKS)} "
            "with an optional .tag",
        )


def _copy_nest(name, src, dst, region=None):
    """``for ax...: with T.block(name): dst[v...] = src[v...]`` over ``region`` (per
    dimension ``(min, extent)``; the whole buffer when None)."""
    dims = len(src.shape)
    if region is None:
        region = [(E.IntImm(extent.dtype, 0), extent) for extent in src.shape]
    ivs = tuple(
        S.IterVar(
            Range(E.IntImm(extent.dtype, 0), extent),  # int64 shapes keep int64 domains
            E.Var(f"v{d}", extent.dtype),
            S.IterVar.DataPar,
        )
        for d, extent in enumerate(src.shape)
    )
    axes = [E.Var(f"ax{d}", extent.dtype) for d, extent in enumerate(src.shape)]
    values = tuple(ax if const_value(lo) == 0 else lo + ax for ax, (lo, _) in zip(axes, region))
    indices = tuple(iv.var for iv in ivs)
    body = S.BufferStore(dst, E.BufferLoad(src, indices), indices)
    block = _with_regions(S.Block(ivs, (), (), name, body))
    stmt = S.BlockRealize(values, E.IntImm("bool", 1), block)
    for d in reversed(range(dims)):
        extent = region[d][1]
        stmt = S.For(axes[d], E.IntImm(extent.dtype, 0), extent, S.ForKind.SERIAL, stmt)
    return stmt


def _touched_region(tree, realize, buffer, writes):
    """Per dimension ``(min, extent)`` of ``buffer`` that ``realize`` writes (or reads)
    over its whole loop nest in its scope, within the buffer; a dimension that
    cannot be bounded to constants is the whole dimension."""
    reads_, writes_ = get_block_access_region(realize.block)
    bindings = {iv.var: v for iv, v in zip(realize.block.iter_vars, realize.iter_values)}
    dom = {lp.loop_var: Range(lp.min, lp.extent) for lp in tree.loops_above(realize)}
    regions = [r for r in (writes_ if writes else reads_) if r.buffer is buffer]
    out = []
    for d, extent in enumerate(buffer.shape):
        lo_all = hi_all = None
        for region in regions:
            rng = region.region[d]
            lo = eval_interval(substitute(rng.min, bindings), dom)[0]
            hi = eval_interval(substitute(simplify(rng.min + rng.extent - 1), bindings), dom)[1]
            lo, hi = const_value(lo), const_value(hi)
            if lo is None or hi is None:
                lo_all = hi_all = None
                break
            lo_all = lo if lo_all is None else min(lo_all, lo)
            hi_all = hi if hi_all is None else max(hi_all, hi)
        size = const_value(extent)
        if lo_all is None or size is None:
            out.append((E.IntImm(extent.dtype, 0), extent))
            continue
        lo_all, hi_all = max(lo_all, 0), min(hi_all, size - 1)
        out.append((E.IntImm(extent.dtype, lo_all), E.IntImm(extent.dtype, hi_all - lo_all + 1)))
    return out


def _writes_in(tree, item, buffer) -> bool:
    """Whether statement ``item`` writes ``buffer``: in a block's write region or by a
    plain store under loops outside any block."""
    found = []

    def visit(node):
        if isinstance(node, S.BufferStore) and node.buffer is buffer:
            found.append(node)

    post_order_visit(item, visit)
    return bool(found) or any(buffer in buffers_of(r)[1] for r in tree.blocks_under(item))


def _reads_in(tree, item, buffer) -> bool:
    """Whether statement ``item`` reads ``buffer`` (a load anywhere, or a read region)."""
    found = []

    def visit(node):
        if isinstance(node, E.BufferLoad) and node.buffer is buffer:
            found.append(node)

    post_order_visit(item, visit)
    return bool(found) or any(buffer in buffers_of(r)[0] for r in tree.blocks_under(item))


def _scope_items(tree, realize):
    """The scope block's realize and the top-level statements of its body."""
    scope = tree.scope_realize(realize)
    body = tree.func.body if scope is None else scope.block.body
    return scope, list(body.seq) if isinstance(body, S.SeqStmt) else [body]


def _top_index(tree, items, node):
    return next(i for i, it in enumerate(items) if it is node or tree.is_ancestor(it, node))


def _commit(func, tree, scope, items, new_buffer, extra_mapping):
    """Writes the new top-level statements and allocates ``new_buffer`` in the scope."""
    func = rewrite(func, extra_mapping)
    tree = Tree(func)
    if scope is None:  # no root block yet: make one to hold the allocation
        body = S.seq_stmt(*items)
        root = S.Block((), (), (), "root", body, alloc_buffers=(new_buffer,))
        return func.with_body(S.BlockRealize((), E.IntImm("bool", 1), root))
    scope = tree.realizes[scope.block.name_hint][0]
    block = attrs.evolve(
        scope.block, body=S.seq_stmt(*items), alloc_buffers=(*scope.block.alloc_buffers, new_buffer)
    )
    return rewrite(func, {id(scope.block): block})


def cache_read(func, name, index, scope):
    """Reads buffer ``reads[index]`` of block ``name`` through a copy in ``scope``.

    Before / after ``cache_read(C, 0, "shared")``::

        for i in range(1024):                    A_shared = T.alloc_buffer((1027,), scope="shared")
            with T.block("C"):                   for ax0 in range(1027):
                B[vi] = A[vi] + A[vi + 1]            with T.block("A_shared"):
                                                         v0 = T.axis.spatial(1027, ax0)
                                                         A_shared[v0] = A[v0]
                                                 for i in range(1024):
                                                     with T.block("C"):
                                                         B[vi] = A_shared[vi] + A_shared[vi + 1]

    Every block reading the buffer after the copy reads the cache. Returns
    ``(new_func, cache_block_name)``.
    """
    tree = Tree(func)
    realize = find_block(tree, name, "cache_read")
    subject = block_subject(realize)
    _check_scope("cache_read", subject, scope)
    buffer = _pick("cache_read", realize, index, _regions(realize.block)[0], "read")
    scope_realize, items = _scope_items(tree, realize)
    readers = [r for r in [realize, *siblings(tree, realize)] if buffer in buffers_of(r)[0]]
    if buffer in buffers_of(realize)[1]:
        raise schedule_error("cache_read", subject, f"the block also writes {buffer.name}", realize)
    writer_blocks = [r for r in siblings(tree, realize) if buffer in buffers_of(r)[1]]
    if len(writer_blocks) > 1:
        names = ", ".join(repr(r.block.name_hint) for r in writer_blocks)
        raise schedule_error(
            "cache_read", subject, f"{buffer.name} has several producers ({names})", realize
        )
    # Writers are blocks or plain loops storing to the buffer.
    writer_items = [i for i, it in enumerate(items) if _writes_in(tree, it, buffer)]
    position = max(writer_items) + 1 if writer_items else 0
    if _top_index(tree, items, realize) < position:
        raise schedule_error("cache_read", subject, f"{buffer.name} is written after the block")
    new_name = fresh_name(_taken(tree), f"{buffer.name}_{scope.replace('.', '_')}")
    rewired = [
        r
        for r in readers
        if _top_index(tree, items, r) >= position and buffer not in buffers_of(r)[1]
    ]
    # Inside a non-root block the cache holds only the region the block produces
    # (its one writer's) or declares it reads (an input of the block), as in TVM.
    if writer_items:
        single = len(writer_blocks) == 1 and len(writer_items) == 1
        single = single and tree.is_ancestor(items[writer_items[0]], writer_blocks[0])
        bounds = symbolic_region(tree, writer_blocks[0], buffer, True) if single else None
    else:
        bounds = declared_bounds(scope_realize.block, buffer) if scope_realize else None
    users = [symbolic_region(tree, r, buffer, False) for r in rewired]
    region = compact_region(tree, scope_realize, buffer, bounds, users)
    shape = buffer.shape if region is None else tuple(ext for _, ext in region)
    cached = decl_buffer(shape, buffer.dtype, new_name, scope=scope)
    mapping = {}
    for reader in rewired:
        if region is None:
            new_block = swap_buffer(reader.block, buffer, cached, loads_only=True)
        else:
            lows = [lo for lo, _ in region]
            new_block = Rebase(buffer, cached, lows, stores=False).visit(reader.block)
        mapping[id(reader.block)] = _with_regions(new_block)
    new_items = [_rewritten(it, mapping) for it in items]
    if region is None:
        new_items.insert(position, _copy_nest(new_name, buffer, cached))
    else:
        new_items.insert(position, compact_copy_nest(new_name, buffer, cached, region, True))
    return _commit(func, tree, scope_realize, new_items, cached, {}), new_name


def _rewritten(stmt, mapping):
    return rewrite_stmt(stmt, mapping)


def rewrite_stmt(stmt, mapping):
    from tilelang.schedule.state import _Rewrite

    return _Rewrite(mapping).visit(stmt) if mapping else stmt


def _taken(tree) -> set:
    names = set(tree.realizes)
    for realizes in tree.realizes.values():
        for r in realizes:
            names.update(b.name for b in r.block.alloc_buffers)
    names.update(b.name for b in tree.func.buffer_map.values())
    return names


def cache_write(func, name, index, scope):
    """Makes block ``name`` write ``writes[index]`` into a buffer in ``scope``, copied
    back by a new block right after it.

    Before / after ``cache_write(C, 0, "local")``::

        for i, j in T.grid(64, 64):              C_local = T.alloc_buffer((64, 64), scope="local")
            with T.block("C"):                   for i, j in T.grid(64, 64):
                C[vi, vj] = A[vi, vj] + 1            with T.block("C"):
                                                         C_local[vi, vj] = A[vi, vj] + 1
                                                 for ax0, ax1 in T.grid(64, 64):
                                                     with T.block("C_local"):
                                                         C[v0, v1] = C_local[v0, v1]

    Returns ``(new_func, cache_block_name)``.
    """
    tree = Tree(func)
    realize = find_block(tree, name, "cache_write")
    subject = block_subject(realize)
    _check_scope("cache_write", subject, scope)
    buffer = _pick("cache_write", realize, index, _regions(realize.block)[1], "write")
    for other in siblings(tree, realize):
        if buffer in buffers_of(other)[1]:
            raise schedule_error(
                "cache_write", subject, f"block {other.block.name_hint!r} also writes {buffer.name}"
            )
    scope_realize, items = _scope_items(tree, realize)
    position = _top_index(tree, items, realize)
    if _accessed_outside_blocks(items[position], buffer):
        raise schedule_error(
            "cache_write", subject, f"a plain loop in its loop nest also accesses {buffer.name}"
        )
    for r in tree.blocks_under(items[position]):
        if (
            r is not realize
            and buffer in buffers_of(r)[0]
            and tree.scope_realize(r) is scope_realize
        ):
            raise schedule_error(
                "cache_write",
                subject,
                f"block {r.block.name_hint!r} reads {buffer.name} inside the same loop nest",
            )
    new_name = fresh_name(_taken(tree), f"{buffer.name}_{scope.replace('.', '_')}")
    compact = _compact_write(tree, scope_realize, realize, buffer, items, position, new_name, scope)
    if compact is not None:
        return _commit(func, tree, scope_realize, compact[0], compact[1], {}), new_name
    cached = decl_buffer(buffer.shape, buffer.dtype, new_name, scope=scope)
    new_block = _with_regions(swap_buffer(realize.block, buffer, cached))
    new_items = [_rewritten(it, {id(realize.block): new_block}) for it in items]
    region = _touched_region(tree, realize, buffer, writes=True)
    # Back only what the block writes, so the rest of the buffer keeps its values.
    new_items.insert(position + 1, _copy_nest(new_name, cached, buffer, region))
    if _needs_copy_in(tree, realize, buffer):
        read_region = _touched_region(tree, realize, buffer, writes=False)
        union = _union_region(region, read_region)
        new_items[position + 1] = _copy_nest(new_name, cached, buffer, union)
        new_items.insert(position, _copy_nest(f"{new_name}_in", buffer, cached, union))
    return _commit(func, tree, scope_realize, new_items, cached, {}), new_name


def _compact_write(tree, scope_realize, realize, buffer, items, position, new_name, scope):
    """cache_write inside a non-root block: a cache of the region the block writes
    there, accesses rebased (TVM's form); None where the whole buffer is cached."""
    bounds = symbolic_region(tree, realize, buffer, True)
    reads = buffer in buffers_of(realize)[0]
    users = [symbolic_region(tree, realize, buffer, False)] if reads else []
    region = compact_region(tree, scope_realize, buffer, bounds, users)
    if region is None:
        return None
    shape = tuple(ext for _, ext in region)
    cached = decl_buffer(shape, buffer.dtype, new_name, scope=scope)
    rebase = Rebase(buffer, cached, [lo for lo, _ in region], stores=True)
    new_block = _with_regions(rebase.visit(realize.block))
    if rebase.opaque:
        return None
    new_items = [_rewritten(it, {id(realize.block): new_block}) for it in items]
    new_items.insert(position + 1, compact_copy_nest(new_name, cached, buffer, region, False))
    if _needs_copy_in(tree, realize, buffer):
        copy_in = compact_copy_nest(f"{new_name}_in", buffer, cached, region, True)
        new_items.insert(position, copy_in)
    return new_items, cached


def _needs_copy_in(tree, realize, buffer) -> bool:
    """The cache must start as a copy of the buffer when the block reads values it
    has not written (it reads its output without an init), or when a predicate may
    skip part of the region copied back."""
    block = realize.block
    nested = tree.blocks_under(block.body)
    if not nested:
        if buffer in buffers_of(realize)[0] and block.init is None:
            return True
    else:
        for k, reader in enumerate(nested):
            if buffer not in buffers_of(reader)[0] or tree.blocks_under(reader.block.body):
                continue
            if buffer in buffers_of(reader)[1] and reader.block.init is None:
                return True
            wanted = symbolic_region(tree, reader, buffer, writes=False)
            if not any(
                covers(symbolic_region(tree, w, buffer, writes=True), wanted)
                for w in nested[:k]
                if buffer in buffers_of(w)[1]
            ):
                return True
    predicated = [realize, *nested]
    return not all(_bounds_only(r) for r in predicated)


def _bounds_only(realize) -> bool:
    """Whether the block's predicate only cuts iterations outside its iterators'
    domains (``T.where(i * 8 + j < 120)`` for a domain of 120, as split makes): then
    every position of the region is still written."""
    conds, stack = [], [realize.predicate]
    while stack:
        cond = stack.pop()
        if isinstance(cond, E.And):
            stack += [cond.a, cond.b]
        else:
            conds.append(cond)
    bindings = list(zip(realize.block.iter_vars, realize.iter_values))
    for cond in conds:
        if isinstance(cond, E.IntImm) and cond.value:
            continue
        if not isinstance(cond, (E.LT, E.LE)):
            return False
        ok = False
        for iv, value in bindings:
            end = simplify(iv.dom.min + iv.dom.extent)
            if cond.a is value or structural_equal(cond.a, value):  # value < c
                limit = cond.b if isinstance(cond, E.LT) else simplify(cond.b + 1)
                ok = ok or at_least_zero(simplify(limit - end))
            elif cond.b is value or structural_equal(cond.b, value):  # c <= value
                first = cond.a if isinstance(cond, E.LE) else simplify(cond.a + 1)
                ok = ok or at_least_zero(simplify(iv.dom.min - first))
        if not ok:
            return False
    return True


def _union_region(a, b):
    out = []
    for (alo, aext), (blo, bext) in zip(a, b):
        lo = [const_value(x) for x in (alo, aext, blo, bext)]
        if None in lo:  # a symbolic side is a whole dimension (see _touched_region)
            whole = (alo, aext) if None in lo[:2] else (blo, bext)
            out.append(whole)
            continue
        low = min(lo[0], lo[2])
        high = max(lo[0] + lo[1], lo[2] + lo[3])
        out.append((E.IntImm(alo.dtype, low), E.IntImm(aext.dtype, high - low)))
    return out


def _accessed_outside_blocks(stmt, buffer) -> bool:
    """Whether ``stmt`` loads or stores ``buffer`` outside any block."""
    found = []

    class _Walk(StmtExprVisitor):
        def visit_block_realize(self, op):
            return None

        def visit_buffer_store(self, op):
            if op.buffer is buffer:
                found.append(op)
            self.generic_visit(op)

        def visit_buffer_load(self, op):
            if op.buffer is buffer:
                found.append(op)
            self.generic_visit(op)

    _Walk().visit(stmt)
    return bool(found)


def set_scope(func, name, index, scope):
    """Changes the storage scope of buffer ``writes[index]`` of block ``name``.

    Before / after ``set_scope(B, 0, "shared")``::

        B = T.alloc_buffer((128,))               B = T.alloc_buffer((128,), scope="shared")
    """
    tree = Tree(func)
    realize = find_block(tree, name, "set_scope")
    subject = block_subject(realize)
    _check_scope("set_scope", subject, scope)
    buffer = _pick("set_scope", realize, index, _regions(realize.block)[1], "write")
    if allocated_in(tree, buffer) is None:
        raise schedule_error(
            "set_scope", subject, f"{buffer.name} is a function parameter, not an allocated buffer"
        )
    return func.with_body(swap_buffer(func.body, buffer, attrs.evolve(buffer, scope=scope)))

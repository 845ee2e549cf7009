"""Cache stages: cache_read and cache_write (set_scope is in :mod:`.set_scope`)."""

from __future__ import annotations

import attrs

from tilelang.analysis import get_block_read_write_region
from tilelang.arith import const_value
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.buffer import Range, decl_buffer
from tilelang.ir.functor import StmtExprMutator, StmtExprVisitor, post_order_visit
from tilelang.schedule.cache_copy_in import needs_copy_in, union_region
from tilelang.schedule.cache_region import (
    checked_region,
    compact_copy_nest,
)
from tilelang.schedule.cache_rewrite import CacheReadRewriter, CacheWriteRewriter
from tilelang.schedule.cache_stage import (
    body_items,
    declared,
    detect_location,
    nested_predicate,
    relax_region,
)
from tilelang.schedule.common import block_subject, find_block, fresh_name, taken_names, top_index
from tilelang.schedule.errors import schedule_error
from tilelang.schedule.inline import _with_regions
from tilelang.schedule.regions import buffers_of
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


#: storage scope ranks TVM knows (``StorageScope::Create``); a tag may follow a dot.
#: ``m16n8k16`` is ours: the mma.sync register fragments (``m16n8k16.matrixA``...,
#: :mod:`tilelang.intrinsics.cuda_mma`), as TVM's ``m16n8k8.matrixA`` are for m16n8k8
SCOPE_RANKS = ("global", "shared", "warp", "local", "wmma", "m16n8k16", "metal", "texture")


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


def _writes_in(tree, item, buffer) -> bool:
    """Whether statement ``item`` writes ``buffer``: in a block's write region or by a
    plain store under loops outside any block."""
    found = []

    def visit(node):
        if isinstance(node, S.BufferStore) and node.buffer is buffer:
            found.append(node)

    post_order_visit(item, visit)
    return bool(found) or any(buffer in buffers_of(r)[1] for r in tree.blocks_under(item))


def _with_root(func):
    """``func`` with its body in a root block (a cache is allocated there)."""
    if isinstance(func.body, S.BlockRealize) and not func.body.iter_values:
        return func
    root = S.Block((), (), (), "root", func.body)
    return func.with_body(S.BlockRealize((), E.IntImm("bool", 1), root))


def _consumer_ids(tree, primitive, names, target, scope_realize) -> frozenset:
    """The blocks named by ``names`` and the blocks nested in them; each must lie in
    the scope of ``target`` (the block cache_read / cache_write is applied to), not
    around it."""
    out = set()
    for name in names:
        realize = find_block(tree, name, primitive)
        if realize is not target and (
            not tree.is_ancestor(scope_realize, realize) or tree.is_ancestor(realize, target)
        ):
            raise schedule_error(
                primitive,
                block_subject(target),
                f"consumer block {name!r} is not a block of its scope "
                f"{scope_realize.block.name_hint!r}",
            )
        out.update(id(r.block) for r in tree.blocks_under(realize))
    return frozenset(out)


def _check_consumer_order(primitive, subject, tree, scope_block, writer, names, buffer):
    """The blocks asked to read the cache must all read the buffer after its writer,
    or, for cache_read, all before it in statements of their own (the copy then goes
    first and holds the old values, TVM's in-place form); otherwise some would read a
    cache not yet filled or stale (TVM does not check)."""
    items = body_items(scope_block.body)
    w_top, w_at = top_index(tree, items, writer), tree.order.index(writer)
    sides = {}
    for name in names:
        realize = find_block(tree, name, primitive)
        if realize is writer or not declared(realize.block, buffer, False):
            continue
        top = top_index(tree, items, realize)
        if tree.order.index(realize) > w_at:
            sides.setdefault("after", name)
        elif primitive == "cache_read" and (top < w_top or _runs_once(tree, realize, writer)):
            sides.setdefault("before", name)
        else:
            raise schedule_error(
                primitive,
                subject,
                f"consumer block {name!r} reads {buffer.name} before its writer "
                f"{writer.block.name_hint!r} (in its loop nest or for cache_write), so it "
                "cannot read the cache",
            )
    if len(sides) == 2:
        raise schedule_error(
            primitive,
            subject,
            f"consumer blocks {sides['before']!r} and {sides['after']!r} read {buffer.name} "
            f"before and after its writer {writer.block.name_hint!r}: one cache cannot hold "
            "both values",
        )


def _default_consumers(tree, realize, writer, buffer) -> list:
    """The blocks that read the cache when none are named: those reading ``buffer``
    on the same side of its writer as ``realize`` (TVM takes every block, so a block
    reading the old values before the writer would read a cache not yet filled)."""
    after = tree.order.index(realize) > tree.order.index(writer)
    at = tree.order.index(writer)
    return [
        r.block.name_hint
        for r in tree.order
        if r is not writer
        and declared(r.block, buffer, False)
        and (tree.order.index(r) > at) == after
        and tree.is_ancestor(tree.scope_realize(realize), r)
    ]


def _runs_once(tree, a, b) -> bool:
    """Whether the loops around both ``a`` and ``b`` run once (no later iteration of
    ``a`` can see what ``b`` wrote)."""
    shared = [x for x in tree.ancestors(a) if isinstance(x, S.For) and tree.is_ancestor(x, b)]
    return all(const_value(lp.extent) == 1 for lp in shared)


def _writers(tree, scope_realize, buffer) -> list:
    """The blocks of the scope whose ``T.writes`` name ``buffer``."""
    return [
        r
        for r in tree.order
        if r is not scope_realize
        and tree.scope_realize(r) is scope_realize
        and declared(r.block, buffer, True)
    ]


def _raw_consumers(tree, scope_realize, writer, buffer) -> set:
    """Ids of the blocks of the scope after ``writer`` that read ``buffer``."""
    after = tree.order[tree.order.index(writer) + 1 :]
    return {
        id(r.block)
        for r in after
        if tree.scope_realize(r) is scope_realize and declared(r.block, buffer, False)
    }


def cache_read(func, name, index, scope, consumers=()):
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

    The blocks named in ``consumers`` (every block, when empty) read the cache; the
    copy goes where :func:`~tilelang.schedule.cache_stage.detect_location` puts it.
    Returns ``(new_func, cache_block_name)``.
    """
    func = _with_root(func)
    tree = Tree(func)
    realize = find_block(tree, name, "cache_read")
    subject = block_subject(realize)
    _check_scope("cache_read", subject, scope)
    buffer = _pick("cache_read", realize, index, _regions(realize.block)[0], "read")
    scope_realize = tree.scope_realize(realize)
    scope_block = scope_realize.block
    writers = _writers(tree, scope_realize, buffer)
    if len(writers) > 1:
        names = ", ".join(repr(r.block.name_hint) for r in writers)
        raise schedule_error(
            "cache_read", subject, f"{buffer.name} has several producers ({names})", realize
        )
    if writers and not consumers:
        consumers = _default_consumers(tree, realize, writers[0], buffer)
    consumer_ids = _consumer_ids(tree, "cache_read", consumers, realize, scope_realize)
    if writers:
        writer = writers[0]
        _check_consumer_order("cache_read", subject, tree, scope_block, writer, consumers, buffer)
        # the copy goes before the first consumer that really reads the buffer
        readers = {
            id(r.block)
            for r in tree.order
            if id(r.block) in consumer_ids and declared(r.block, buffer, False)
        }
        related = readers if consumer_ids else _raw_consumers(tree, scope_realize, writer, buffer)
        loc, pos = detect_location(scope_block, writer.block, related)
        (produced,) = declared(writer.block, buffer, True)[:1]
        region = relax_region(tree, writer, produced, loc)
    else:
        loc, pos = scope_block, _after_plain_writers(tree, scope_block, realize, buffer)
        region = _input_region(tree, realize, scope_block, buffer)
    readers = [
        r
        for r in tree.order
        if tree.scope_realize(r) is scope_realize
        and (id(r.block) in consumer_ids if consumer_ids else not declared(r.block, buffer, True))
    ]
    compact = isinstance(loc, S.Block)
    if compact:  # a cache of the region's shape must hold every read of it
        region = checked_region(tree, scope_realize, buffer, region, _uses(tree, readers, buffer))
    new_name = fresh_name(taken_names(tree), f"{buffer.name}_{scope.replace('.', '_')}")
    shape = tuple(ext for _, ext in region) if compact else buffer.shape
    cached = decl_buffer(shape, buffer.dtype, new_name, scope=scope)
    if compact:
        stage = compact_copy_nest(new_name, buffer, cached, region, True)
    else:
        stage = _copy_nest(new_name, buffer, cached, region)
    lows = [lo for lo, _ in region] if compact else None
    rewriter = CacheReadRewriter(
        buffer, cached, lows, loc, [(pos, stage)], scope_block, consumers=consumer_ids
    )
    new_scope = rewriter.visit(scope_block)
    return rewrite(func, {id(scope_block): new_scope}), new_name


def _uses(tree, readers, buffer) -> list:
    """The regions of ``buffer`` the ``readers`` read over their loops, each under its
    nested blocks' ``T.where``."""
    return [
        relax_region(tree, r, use, None, nested_predicate(r.block, buffer, False))
        for r in readers
        for use in declared(r.block, buffer, False)
    ]


def _after_plain_writers(tree, scope_block, realize, buffer) -> int:
    """Where the copy of a buffer no block writes goes: first in the scope, or after
    the last statement storing to it outside any block (a plain loop, which TVM does
    not see); a ScheduleError when that comes after the reading block."""
    items = body_items(scope_block.body)
    stores = [i for i, it in enumerate(items) if _writes_in(tree, it, buffer)]
    if not stores:
        return 0
    if top_index(tree, items, realize) <= max(stores):
        raise schedule_error(
            "cache_read", block_subject(realize), f"{buffer.name} is written after the block"
        )
    return max(stores) + 1


def _input_region(tree, realize, scope_block, buffer):
    """What a cache of an input of the scope holds: the block's read region where a
    nested ``T.where`` limits the read, else the scope's declared read region, else
    the whole buffer."""
    reads = declared(realize.block, buffer, False)
    cond = nested_predicate(realize.block, buffer, False) if reads else None
    if cond is not None and tree.scope_realize(realize) is not None:
        return relax_region(tree, realize, reads[0], None, cond)
    outer = declared(scope_block, buffer, False)
    if outer:
        return [(r.min, r.extent) for r in outer[0].region]
    return [(E.IntImm(ext.dtype, 0), ext) for ext in buffer.shape]


def rewrite_stmt(stmt, mapping):
    from tilelang.schedule.state import _Rewrite

    return _Rewrite(mapping).visit(stmt) if mapping else stmt


def cache_write(func, name, index, scope, consumers=()):
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

    The copy back goes before the first block reading the buffer (as cache_read's
    copy, :mod:`.cache_stage`); the blocks named in ``consumers`` read the cache
    instead. Returns ``(new_func, cache_block_name)``.
    """
    func = _with_root(func)
    tree = Tree(func)
    realize = find_block(tree, name, "cache_write")
    subject = block_subject(realize)
    _check_scope("cache_write", subject, scope)
    buffer = _pick("cache_write", realize, index, _regions(realize.block)[1], "write")
    scope_realize = tree.scope_realize(realize)
    scope_block = scope_realize.block
    for other in _writers(tree, scope_realize, buffer):
        if other is not realize:
            raise schedule_error(
                "cache_write", subject, f"block {other.block.name_hint!r} also writes {buffer.name}"
            )
    top = realize
    while tree.parent_of(top) is not scope_block and tree.parent_of(top) is not None:
        top = tree.parent_of(top)
    if _accessed_outside_blocks(top, buffer):
        raise schedule_error(
            "cache_write", subject, f"a plain loop in its loop nest also accesses {buffer.name}"
        )
    consumer_ids = _consumer_ids(tree, "cache_write", consumers, realize, scope_realize)
    _check_consumer_order("cache_write", subject, tree, scope_block, realize, consumers, buffer)
    related = _raw_consumers(tree, scope_realize, realize, buffer) - consumer_ids
    loc, pos = detect_location(scope_block, realize.block, related)
    (written,) = declared(realize.block, buffer, True)[:1]
    region = relax_region(
        tree, realize, written, loc, nested_predicate(realize.block, buffer, True)
    )
    copy_in = needs_copy_in(tree, realize, buffer)
    if copy_in and declared(realize.block, buffer, False):
        (read,) = declared(realize.block, buffer, False)[:1]
        region = union_region(region, relax_region(tree, realize, read, loc))
    compact = isinstance(loc, S.Block)
    if compact:  # a cache of the region's shape must hold every read of it
        readers = [realize] + [r for r in tree.order if id(r.block) in consumer_ids]
        uses = _uses(tree, readers, buffer)
        checked = checked_region(tree, scope_realize, buffer, region, uses)
        if checked is not region:  # the whole buffer: what is not written keeps its values
            region, copy_in = checked, True
    new_name = fresh_name(taken_names(tree), f"{buffer.name}_{scope.replace('.', '_')}")
    shape = tuple(ext for _, ext in region) if compact else buffer.shape
    cached = decl_buffer(shape, buffer.dtype, new_name, scope=scope)
    if compact:
        stage = compact_copy_nest(new_name, cached, buffer, region, False)
    else:
        stage = _copy_nest(new_name, cached, buffer, region)
    inserts = [(pos, stage)]
    if copy_in:  # the cache starts as the buffer's values, right before the writer
        if compact:
            fill = compact_copy_nest(f"{new_name}_in", buffer, cached, region, True)
        else:
            fill = _copy_nest(f"{new_name}_in", buffer, cached, region)
        inserts.append((_position_of(tree, loc, realize), fill))
    lows = [lo for lo, _ in region] if compact else None
    rewriter = CacheWriteRewriter(
        buffer, cached, lows, loc, inserts, scope_block, writer=realize.block,
        consumers=consumer_ids,
    )  # fmt: skip
    new_scope = rewriter.visit(scope_block)
    return rewrite(func, {id(scope_block): new_scope}), new_name


def _position_of(tree, loc, realize) -> int:
    """The index, in the body of ``loc``, of the statement holding ``realize``."""
    items = body_items(loc.body)
    return top_index(tree, items, realize)


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

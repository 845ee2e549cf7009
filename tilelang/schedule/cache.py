"""Cache stages and storage scopes: cache_read, cache_write, set_scope."""

from __future__ import annotations

import attrs

from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.analysis import get_block_read_write_region
from tilelang.ir.buffer import Range, decl_buffer
from tilelang.ir.functor import StmtExprMutator
from tilelang.schedule.inline import _allocated_in, _with_regions
from tilelang.schedule.common import block_subject, find_block, fresh_name
from tilelang.schedule.errors import schedule_error
from tilelang.schedule.regions import buffers_of, siblings
from tilelang.schedule.state import Tree, rewrite


class _SwapBuffer(StmtExprMutator):
    """Replaces a buffer in loads (and, unless ``loads_only``, everywhere else)."""

    def __init__(self, old, new, loads_only=False):
        self.old, self.new, self.loads_only = old, new, loads_only

    def visit_buffer_load(self, op):
        op = self.generic_visit(op)
        return attrs.evolve(op, buffer=self.new) if op.buffer is self.old else op

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
    if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(regions):
        raise schedule_error(
            primitive,
            subject,
            f"{kind} buffer index {index!r} is out of range; the block {kind}s "
            f"{[r.buffer.name for r in regions]}",
            realize,
        )
    return regions[index].buffer


def _check_scope(primitive, subject, scope):
    if not isinstance(scope, str) or not scope or " " in scope:
        raise schedule_error(primitive, subject, f"invalid storage scope {scope!r}")


def _copy_nest(name, src, dst):
    """``for ax...: with T.block(name): dst[v...] = src[v...]`` over the whole buffer."""
    dims = len(src.shape)
    ivs = tuple(
        S.IterVar(Range(0, extent), E.Var(f"v{d}", extent.dtype), S.IterVar.DataPar)
        for d, extent in enumerate(src.shape)
    )
    axes = [E.Var(f"ax{d}", extent.dtype) for d, extent in enumerate(src.shape)]
    indices = tuple(iv.var for iv in ivs)
    body = S.BufferStore(dst, E.BufferLoad(src, indices), indices)
    block = _with_regions(S.Block(ivs, (), (), name, body))
    stmt = S.BlockRealize(tuple(axes), E.IntImm("bool", 1), block)
    for d in reversed(range(dims)):
        extent = src.shape[d]
        stmt = S.For(axes[d], E.IntImm(extent.dtype, 0), extent, S.ForKind.SERIAL, stmt)
    return stmt


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
    writers = [r for r in siblings(tree, realize) if buffer in buffers_of(r)[1]]
    if buffer in buffers_of(realize)[1]:
        raise schedule_error("cache_read", subject, f"the block also writes {buffer.name}", realize)
    position = 0
    if writers:
        position = max(_top_index(tree, items, w) for w in writers) + 1
    if _top_index(tree, items, realize) < position:
        raise schedule_error("cache_read", subject, f"{buffer.name} is written after the block")
    new_name = fresh_name(_taken(tree), f"{buffer.name}_{scope.replace('.', '_')}")
    cached = decl_buffer(buffer.shape, buffer.dtype, new_name, scope=scope)
    mapping = {}
    for reader in readers:
        if _top_index(tree, items, reader) >= position and buffer not in buffers_of(reader)[1]:
            new_block = swap_buffer(reader.block, buffer, cached, loads_only=True)
            mapping[id(reader.block)] = _with_regions(new_block)
    new_items = [_rewritten(it, mapping) for it in items]
    new_items.insert(position, _copy_nest(new_name, buffer, cached))
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
    cached = decl_buffer(buffer.shape, buffer.dtype, new_name, scope=scope)
    new_block = _with_regions(swap_buffer(realize.block, buffer, cached))
    new_items = [_rewritten(it, {id(realize.block): new_block}) for it in items]
    new_items.insert(position + 1, _copy_nest(new_name, cached, buffer))
    return _commit(func, tree, scope_realize, new_items, cached, {}), new_name


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
    if _allocated_in(tree, buffer) is None:
        raise schedule_error(
            "set_scope", subject, f"{buffer.name} is a function parameter, not an allocated buffer"
        )
    return func.with_body(swap_buffer(func.body, buffer, attrs.evolve(buffer, scope=scope)))

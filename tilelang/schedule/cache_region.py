"""The region a cache stage covers, as TVM sizes it.

When the cache stage of :func:`~tilelang.schedule.cache.cache_read` or
:func:`~tilelang.schedule.cache.cache_write` lands inside a block that is not the
function's root (a blockized block, a ``T.block("scope")`` over a loop nest), TVM
allocates the cache in that block with the shape of the region used there, not the
whole buffer: a 16×16 tile of a 128×128 buffer, a ``(32, 4)`` slice for the
``v * 32`` rows a blockized matmul reads. Accesses of the cache are rebased by the
region's minimum (``A_local[vi - i * 16, vj - j * 16]``). At the root the cache keeps
the buffer's shape.
"""

from __future__ import annotations

import attrs

from tilelang.analysis import get_block_access_region
from tilelang.arith import const_value, eval_interval, simplify
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.buffer import BufferRegion, Range
from tilelang.ir.functor import StmtExprMutator, post_order_visit, substitute


def symbolic_region(tree, realize, buffer, writes):
    """Per dimension inclusive ``(lo, hi)`` of ``buffer`` touched by ``realize`` over
    the loops up to its enclosing block (None where unbounded)."""
    reads_, writes_ = get_block_access_region(realize.block)
    bindings = {iv.var: v for iv, v in zip(realize.block.iter_vars, realize.iter_values)}
    dom = {lp.loop_var: Range(lp.min, lp.extent) for lp in tree.loops_above(realize)}
    out = None
    for region in writes_ if writes else reads_:
        if region.buffer is not buffer:
            continue
        dims = []
        for rng in region.region:
            lo = eval_interval(substitute(rng.min, bindings), dom)[0]
            hi = eval_interval(substitute(simplify(rng.min + rng.extent - 1), bindings), dom)[1]
            dims.append((lo, hi))
        out = dims if out is None else [None] * len(dims)  # several regions: give up
    return out


def covers(outer, inner) -> bool:
    """Whether inclusive per-dimension bounds ``outer`` provably contain ``inner``."""
    if outer is None or inner is None or any(d is None for d in (*outer, *inner)):
        return False
    for (olo, ohi), (ilo, ihi) in zip(outer, inner):
        if any(x is None for x in (olo, ohi, ilo, ihi)):
            return False
        if not (at_least_zero(simplify(ilo - olo)) and at_least_zero(simplify(ohi - ihi))):
            return False
    return True


def at_least_zero(expr) -> bool:
    value = const_value(expr)
    return value is not None and value >= 0


def _bound_vars(tree) -> set:
    """Loop variables and block iterators of the function: a cache allocated in a
    block cannot take its shape from them."""
    out = set()

    def visit(node):
        if isinstance(node, S.For):
            out.add(node.loop_var)
        elif isinstance(node, S.Block):
            out.update(iv.var for iv in node.iter_vars)

    post_order_visit(tree.func.body, visit)
    return out


def _vars_of(expr) -> set:
    out = set()
    post_order_visit(expr, lambda n: out.add(n) if isinstance(n, E.Var) else None)
    return out


def _inside_buffer(tree, scope_realize, buffer, bounds) -> bool:
    """Whether ``bounds`` provably stay inside ``buffer`` over the enclosing blocks'
    iterator domains. (A block's declared region is no proof: it may ignore the
    ``T.where`` that keeps a split's last tile inside the buffer.)"""
    dom = {}
    node = scope_realize
    while node is not None:
        dom.update({iv.var: iv.dom for iv in node.block.iter_vars})
        node = tree.scope_realize(node)
    for (lo, hi), extent in zip(bounds, buffer.shape):
        low = const_value(eval_interval(lo, dom)[0])
        high = eval_interval(hi, dom)[1]
        if low is None or low < 0 or high is None:
            return False
        if not at_least_zero(simplify(extent - 1 - high)):
            return False
    return True


def compact_region(tree, scope_realize, buffer, bounds, users):
    """The cache region ``[(min, extent), ...]`` for a cache of ``buffer`` allocated in
    block ``scope_realize``, from inclusive ``bounds`` of the region the stage copies;
    None (the whole buffer) at the root, when a bound is unknown or may leave the
    buffer, when an extent depends on a loop or iterator, or when a use ``(lo, hi)``
    in ``users`` may leave the region."""
    if scope_realize is None or tree.scope_realize(scope_realize) is None:
        return None
    if bounds is None or any(d is None or any(x is None for x in d) for d in bounds):
        return None
    if not all(covers(bounds, used) for used in users):
        return None
    if not _inside_buffer(tree, scope_realize, buffer, bounds):
        return None
    bound = _bound_vars(tree)
    out = []
    for lo, hi in bounds:
        extent = simplify(hi - lo + 1)
        value = const_value(extent)
        if (value is not None and value <= 0) or _vars_of(extent) & bound:
            return None
        out.append((lo, extent))
    return out


def declared_bounds(block, buffer):
    """Inclusive bounds of the one region of ``buffer`` in ``block``'s ``T.reads``."""
    regions = [r for r in block.reads if r.buffer is buffer]
    if len(regions) != 1:
        return None
    return [(rng.min, simplify(rng.min + rng.extent - 1)) for rng in regions[0].region]


class Rebase(StmtExprMutator):
    """Moves the accesses of ``old`` to ``new`` with indices shifted by ``-lows``:
    loads and nested blocks' read regions; with ``stores`` also stores and write
    regions. ``opaque`` is set when ``old`` is used another way (``match_buffer``,
    ``access_ptr``) that a shift cannot follow while stores move."""

    def __init__(self, old, new, lows, stores):
        self.old, self.new, self.lows, self.stores = old, new, lows, stores
        self.opaque = False

    def _shift(self, indices):
        return tuple(
            i if const_value(lo) == 0 else simplify(i - lo) for i, lo in zip(indices, self.lows)
        )

    def _region(self, region):
        if region.buffer is not self.old:
            return region
        mins = self._shift([r.min for r in region.region])
        ranges = tuple(Range(m, r.extent) for m, r in zip(mins, region.region))
        return BufferRegion(self.new, ranges)

    def visit_buffer_load(self, op):
        if op.buffer is not self.old:
            return self.generic_visit(op)
        indices = tuple(self.visit(i) for i in op.indices)
        return attrs.evolve(op, buffer=self.new, indices=self._shift(indices))

    def visit_buffer_store(self, op):
        if op.buffer is not self.old or not self.stores:
            return self.generic_visit(op)
        indices = tuple(self.visit(i) for i in op.indices)
        return attrs.evolve(
            op, buffer=self.new, value=self.visit(op.value), indices=self._shift(indices)
        )

    def visit_block(self, op):
        reads = tuple(self._region(r) for r in op.reads)
        writes = tuple(self._region(r) for r in op.writes) if self.stores else op.writes
        return self.generic_visit(attrs.evolve(op, reads=reads, writes=writes))

    def visit_buffer_ref(self, buffer):
        if buffer is self.old and self.stores:
            self.opaque = True
        return buffer


def compact_copy_nest(name, src, dst, region, cache_is_dst):
    """``for ax...: with T.block(name)`` copying ``region`` between the big buffer and
    a cache of the region's shape: the cache at ``v``, the big buffer at ``min + v``."""
    axes = [E.Var(f"ax{d}", ext.dtype) for d, (_, ext) in enumerate(region)]
    ivs = tuple(
        S.IterVar(Range(E.IntImm(ext.dtype, 0), ext), E.Var(f"v{d}", ext.dtype), S.IterVar.DataPar)
        for d, (_, ext) in enumerate(region)
    )
    small = tuple(iv.var for iv in ivs)
    big = tuple(v if const_value(lo) == 0 else lo + v for v, (lo, _) in zip(small, region))
    src_idx, dst_idx = (big, small) if cache_is_dst else (small, big)
    body = S.BufferStore(dst, E.BufferLoad(src, src_idx), dst_idx)
    reads = (BufferRegion(src, tuple(Range(i, E.IntImm(i.dtype, 1)) for i in src_idx)),)
    writes = (BufferRegion(dst, tuple(Range(i, E.IntImm(i.dtype, 1)) for i in dst_idx)),)
    block = S.Block(ivs, reads, writes, name, body)
    stmt = S.BlockRealize(tuple(axes), E.IntImm("bool", 1), block)
    for ax, (_, ext) in reversed(list(zip(axes, region))):
        stmt = S.For(ax, E.IntImm(ext.dtype, 0), ext, S.ForKind.SERIAL, stmt)
    return stmt

"""Helpers for sizing a cache stage: the region a block touches, whether one region
provably covers another, the copy nest of a cache of a region's shape (the cache at
``v``, the buffer at ``min + v``), and :func:`checked_region`, which widens a region
TVM would use to the whole buffer where a smaller cache would be read or copied out
of bounds.
"""

from __future__ import annotations

from tilelang.analysis import get_block_access_region
from tilelang.arith import const_value, eval_interval, simplify
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.buffer import BufferRegion, Range
from tilelang.ir.functor import substitute


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


def checked_region(tree, scope_realize, buffer, region, uses):
    """``region`` (per dimension ``(min, extent)``) when it provably stays inside
    ``buffer`` and holds each region of ``uses``; else the whole buffer. A cache of a
    smaller region would be read or copied out of bounds there (TVM does not check)."""
    whole = [(E.IntImm(ext.dtype, 0), ext) for ext in buffer.shape]

    def inclusive(r):
        return [(lo, simplify(lo + ext - 1)) for lo, ext in r]

    bounds = inclusive(region)
    if not all(covers(bounds, inclusive(use)) for use in uses):
        return whole
    if not covers(inclusive(whole), bounds) and not _inside_buffer(
        tree, scope_realize, buffer, bounds
    ):
        return whole
    return region

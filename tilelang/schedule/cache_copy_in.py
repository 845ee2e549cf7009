"""When cache_write must fill its cache from the buffer first (a ``<cache>_in``
stage): the block reads values it has not written, or a predicate may skip part of
the region copied back. TVM does not check this; without the fill the skipped part
would be copied back uninitialised."""

from __future__ import annotations

from tilelang.arith import const_value, simplify
from tilelang.arith.int_set import const_difference
from tilelang.ir import expr as E
from tilelang.ir.functor import substitute
from tilelang.ir.structural import structural_equal
from tilelang.schedule.cache_region import at_least_zero, covers, symbolic_region
from tilelang.schedule.cache_stage import declared
from tilelang.schedule.regions import buffers_of


def needs_copy_in(tree, realize, buffer) -> bool:
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
    cut = [r for r in [realize, *nested] if not _bounds_only(r)]
    if not cut:
        return False
    # A predicate bounding the written indices themselves (``T.where(vi < 10)`` over
    # ``C[vi, vj]``) cuts the cache region the same way (cache_stage.relax_region):
    # what it skips is not copied back. Only with one writer, whose box is the region.
    writers = [
        r
        for r in [realize, *nested]
        if not tree.blocks_under(r.block.body) and declared(r.block, buffer, True)
    ]
    return not (len(writers) == 1 and all(_cuts_written_points(r, buffer) for r in cut))


def _cuts_written_points(realize, buffer) -> bool:
    """Whether each conjunct of the block's predicate compares a point index of its
    write of ``buffer`` with a constant."""
    bind = {iv.var: v for iv, v in zip(realize.block.iter_vars, realize.iter_values)}
    indices = [
        simplify(substitute(r.min, bind))
        for region in declared(realize.block, buffer, True)
        for r in region.region
        if const_value(r.extent) == 1
    ]
    stack = [realize.predicate]
    while stack:
        cond = stack.pop()
        if isinstance(cond, E.And):
            stack += [cond.a, cond.b]
            continue
        if isinstance(cond, E.IntImm) and cond.value:
            continue
        if not isinstance(cond, (E.LT, E.LE, E.GT, E.GE)):
            return False
        sides = [(cond.a, cond.b), (cond.b, cond.a)]
        if not any(
            const_value(c) is not None and any(const_difference(x, i) == 0 for i in indices)
            for x, c in sides
        ):
            return False
    return True


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


def union_region(a, b):
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

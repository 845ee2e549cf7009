"""Inlining blocks: compute_inline and reverse_compute_inline, and the helpers the
other rewrites share (a block's recomputed regions, dropping an allocation)."""

from __future__ import annotations

import math

import attrs

from tilelang.analysis import get_block_read_write_region
from tilelang.arith import (
    Analyzer,
    ConstBound,
    const_value,
    eval_interval,
    simplify,
)
from tilelang.arith.iter_inverse import inverse_map
from tilelang.arith.linear import scale_ordered
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.buffer import Range
from tilelang.ir.functor import StmtExprMutator, post_order_visit, substitute
from tilelang.ir.structural import structural_equal
from tilelang.ir.var_usage import uses_var
from tilelang.schedule.common import and_predicate, block_subject, conjuncts, find_block
from tilelang.schedule.errors import schedule_error
from tilelang.schedule.regions import buffers_of, siblings
from tilelang.schedule.state import REMOVE, Tree, rewrite


def _single_store(primitive, subject, realize, producer=False) -> S.BufferStore:
    """The block's only statement, a store. The producer of reverse_compute_inline may
    have a predicate (kept, see ``_overcompute_predicate``) and an init when all its
    iterators are spatial (an accumulation in place, checked by the caller)."""
    block = realize.block
    if (block.init is not None and not producer) or any(
        iv.iter_type != S.IterVar.DataPar for iv in block.iter_vars
    ):
        raise schedule_error(primitive, subject, "a reduction block cannot be inlined", realize)
    if not isinstance(block.body, S.BufferStore):
        raise schedule_error(primitive, subject, "the body must be a single buffer store", realize)
    if block.body.predicate is not None:
        raise schedule_error(
            primitive, subject, "its store is masked (a predicated vstore)", realize
        )
    if block.init is not None and not (
        isinstance(block.init, S.BufferStore)
        and block.init.buffer is block.body.buffer
        and _same_indices(block.init.indices, block.body.indices)
    ):
        raise schedule_error(
            primitive, subject, "its init must store the element its body stores", realize
        )
    if not producer and (
        not isinstance(realize.predicate, E.IntImm) or not realize.predicate.value
    ):
        raise schedule_error(
            primitive, subject, "blocks with a T.where predicate cannot be inlined"
        )
    if block.alloc_buffers or block.match_buffers:
        raise schedule_error(primitive, subject, "the block allocates or matches buffers", realize)
    return block.body


def _check_scope_only(primitive, subject, tree, realize, buffer):
    """The buffer must not be used by a block outside the block's scope: inlining
    only rewrites that scope, and the buffer disappears."""
    scope = tree.scope_realize(realize)
    for r in tree.order:
        inside = scope is None or tree.is_ancestor(scope, r)
        if inside or r is scope or tree.is_ancestor(r, realize):
            continue
        if uses_var(r.block.body, buffer.data) or uses_var(r.predicate, buffer.data):
            raise schedule_error(
                primitive,
                subject,
                f"block {r.block.name_hint!r} outside its scope uses {buffer.name}",
                realize,
            )


def allocated_in(tree, buffer):
    for realizes in tree.realizes.values():
        for r in realizes:
            if any(b is buffer for b in r.block.alloc_buffers):
                return r
    return None


def _plain_indices(primitive, subject, realize, indices, buffer):
    """The iterators of a store/load index list that is exactly distinct iterators."""
    block_vars = [iv.var for iv in realize.block.iter_vars]
    if not all(isinstance(i, E.Var) and any(i is v for v in block_vars) for i in indices):
        raise schedule_error(
            primitive,
            subject,
            f"the indices of {buffer.name} must be plain block iterators",
            realize,
        )
    if len({id(i) for i in indices}) != len(indices) or len(indices) != len(block_vars):
        raise schedule_error(
            primitive,
            subject,
            f"the indices of {buffer.name} must use every block iterator exactly once",
            realize,
        )
    return list(indices)


class _ReplaceLoads(StmtExprMutator):
    def __init__(self, buffer, make):
        self.buffer, self.make, self.count = buffer, make, 0

    def visit_buffer_load(self, op):
        op = self.generic_visit(op)
        if op.buffer is self.buffer:
            self.count += 1
            return self.make(op)
        return op


def drop_alloc(func, buffer):
    """``func`` without the allocation of ``buffer`` (no longer used)."""
    owner = allocated_in(Tree(func), buffer)
    kept = tuple(b for b in owner.block.alloc_buffers if b is not buffer)
    return rewrite(func, {id(owner.block): attrs.evolve(owner.block, alloc_buffers=kept)})


def _with_regions(block, buffer_var_map=None):
    reads, writes = get_block_read_write_region(block, buffer_var_map)
    return attrs.evolve(block, reads=tuple(reads), writes=tuple(writes))


def data_buffers(func) -> dict:
    """Data pointer -> buffer for every buffer of ``func`` (parameters, allocations,
    matches), so that recomputed regions see ``access_ptr`` uses (TVM's
    ``buffer_var_map``)."""
    found = {buffer.data: buffer for buffer in func.buffer_map.values()}

    def visit(node):
        if isinstance(node, S.Block):
            for buffer in node.alloc_buffers:
                found.setdefault(buffer.data, buffer)
            for match in node.match_buffers:
                found.setdefault(match.buffer.data, match.buffer)

    post_order_visit(func.body, visit)
    return found


def compute_inline(func, name):
    """Inlines the producer block ``name`` into every block that reads its buffer,
    and removes the block and the buffer.

    Before / after ``compute_inline(B)``::

        for i in range(8):                       for i in range(8):
            with T.block("B"):                       with T.block("C"):
                vi = T.axis.spatial(8, i)                vi = T.axis.spatial(8, i)
                B[vi] = A[vi] * T.float32(2)             C[vi] = A[vi] * T.float32(2) + T.float32(1)
        for i in range(8):
            with T.block("C"):
                vi = T.axis.spatial(8, i)
                C[vi] = B[vi] + T.float32(1)
    """
    tree = Tree(func)
    realize = find_block(tree, name, "compute_inline")
    subject = block_subject(realize)
    store = _single_store("compute_inline", subject, realize)
    buffer = store.buffer
    if allocated_in(tree, buffer) is None:
        raise schedule_error(
            "compute_inline", subject, f"{buffer.name} is not an intermediate buffer", realize
        )
    indices = _plain_indices("compute_inline", subject, realize, store.indices, buffer)
    others = siblings(tree, realize)
    _check_scope_only("compute_inline", subject, tree, realize, buffer)
    # A reader may use the buffer only in its T.where: look at the whole realize.
    readers = [r for r in others if buffer in buffers_of(r)[0] or uses_var(r, buffer.data)]
    if any(buffer in buffers_of(r)[1] for r in others):
        raise schedule_error("compute_inline", subject, f"another block writes {buffer.name}")
    if buffer in buffers_of(realize)[0]:
        raise schedule_error("compute_inline", subject, f"the block reads {buffer.name} itself")
    position = tree.order.index(realize)
    for reader in readers:
        if tree.order.index(reader) < position:
            raise schedule_error(
                "compute_inline",
                subject,
                f"block {reader.block.name_hint!r} reads it before it is written",
            )
        between = [r for r in others if position < tree.order.index(r) < tree.order.index(reader)]
        for r in between:
            if buffers_of(r)[1] & buffers_of(realize)[0]:
                raise schedule_error(
                    "compute_inline",
                    subject,
                    f"block {r.block.name_hint!r} changes its inputs before "
                    f"{reader.block.name_hint!r} reads them",
                )

    def inline(load):
        return substitute(store.value, dict(zip(indices, load.indices)))

    mapping = {id(tree.removable_root(realize)): REMOVE}
    for reader in readers:
        new = _ReplaceLoads(buffer, inline).visit(reader)
        block = new.block
        # What is left is an opaque use (access_ptr, a match_buffer source, the
        # data pointer): it would dangle once the buffer is gone.
        parts = (new.predicate, block.body, block.init, *block.match_buffers)
        if any(p is not None and uses_var(p, buffer.data) for p in parts):
            raise schedule_error(
                "compute_inline",
                subject,
                f"block {reader.block.name_hint!r} accesses {buffer.name} opaquely "
                "(access_ptr, match_buffer or its data pointer), not only by loads",
                reader,
            )
        mapping[id(reader)] = attrs.evolve(new, block=_with_regions(block, data_buffers(func)))
    return drop_alloc(rewrite(func, mapping), buffer)


def reverse_compute_inline(func, name):
    """Inlines the consumer block ``name`` into the single block producing what it
    reads, and removes the consumer and the intermediate buffer.

    Before / after ``reverse_compute_inline(C)``::

        with T.block("B"):                       with T.block("B"):
            B[vi] = A[vi] * T.float32(2)             C[vi] = A[vi] * T.float32(2) + T.float32(1)
        with T.block("C"):
            C[vi] = B[vi] + T.float32(1)
    """
    tree = Tree(func)
    realize = find_block(tree, name, "reverse_compute_inline")
    subject = block_subject(realize)
    store = _single_store("reverse_compute_inline", subject, realize)
    others = siblings(tree, realize)
    reads, writes = buffers_of(realize)
    produced = [
        b
        for b in reads
        if allocated_in(tree, b) is not None and any(b in buffers_of(r)[1] for r in others)
    ]
    if len(produced) != 1:
        raise schedule_error(
            "reverse_compute_inline",
            subject,
            f"needs exactly one intermediate input, found {len(produced)}",
            realize,
        )
    (buffer,) = produced
    _check_scope_only("reverse_compute_inline", subject, tree, realize, buffer)
    producers = [r for r in others if buffer in buffers_of(r)[1]]
    if len(producers) != 1:
        raise schedule_error(
            "reverse_compute_inline",
            subject,
            f"{buffer.name} has {len(producers)} producers, not one",
        )
    producer = producers[0]
    p_subject = block_subject(producer)
    p_store = _single_store("reverse_compute_inline", p_subject, producer, producer=True)
    if p_store.buffer is not buffer:
        raise schedule_error("reverse_compute_inline", p_subject, f"does not store {buffer.name}")
    if any(buffer in buffers_of(r)[0] for r in others if r is not producer):
        raise schedule_error("reverse_compute_inline", subject, f"{buffer.name} has other readers")
    loads = []
    _ReplaceLoads(buffer, lambda op: loads.append(op) or op).visit(store.value)
    if not loads or any(_reads_buffer(i, buffer) for i in store.indices):
        raise schedule_error(
            "reverse_compute_inline", subject, f"must read {buffer.name} in its value", realize
        )
    if not all(
        all(structural_equal(a, b) for a, b in zip(ld.indices, loads[0].indices)) for ld in loads
    ):
        raise schedule_error(
            "reverse_compute_inline",
            subject,
            f"reads {buffer.name} at different indices",
            realize,
        )
    # The consumer's iterators, recovered from the element the producer stores:
    # the load indices must be a bijective iterator map (TVM's affine loads).
    block = realize.block
    iters = {iv.var: iv.dom for iv in block.iter_vars}
    vmap = inverse_map(list(loads[0].indices), iters, list(p_store.indices))
    if vmap is None:
        # an injective load over iterators whose extents the divisors do not divide
        # (``cvi // 16``, ``cvi % 16`` with cvi < 127): invert over the domains padded
        # to whole periods; the over-compute predicate keeps the real domains
        vmap = inverse_map(
            list(loads[0].indices), _padded(loads[0].indices, iters), list(p_store.indices)
        )
    if vmap is None:
        raise schedule_error(
            "reverse_compute_inline",
            subject,
            f"the indices of {buffer.name} are not a bijective map of its iterators",
            realize,
        )
    indices = [iv.var for iv in block.iter_vars]
    if not _covers(producer, p_store.indices, realize, loads[0].indices):
        raise schedule_error(
            "reverse_compute_inline",
            subject,
            f"its producer does not write every element of {buffer.name} it reads",
            realize,
        )
    start, end = tree.order.index(producer), tree.order.index(realize)
    if start > end:
        raise schedule_error("reverse_compute_inline", subject, "it runs before its producer")
    for r in others:
        if start < tree.order.index(r) < end and (
            buffers_of(r)[1] & (reads | writes) or buffers_of(r)[0] & writes
        ):
            raise schedule_error(
                "reverse_compute_inline",
                subject,
                f"block {r.block.name_hint!r} runs between it and its producer and "
                "touches its buffers",
            )
    new_indices = tuple(substitute(i, vmap) for i in store.indices)
    init = producer.block.init
    if init is not None:
        # an accumulation in place (an init, all iterators spatial): the consumer must
        # copy the element as is, then it accumulates into the consumer's element
        if not (isinstance(store.value, E.BufferLoad) and store.value.buffer is buffer):
            raise schedule_error(
                "reverse_compute_inline",
                subject,
                f"its producer accumulates into {buffer.name} (it has an init), so it must "
                f"copy {buffer.name} unchanged",
                realize,
            )
        moved = E.BufferLoad(store.buffer, new_indices)
        p_value = _ReplaceLoads(buffer, lambda op: moved).visit(p_store.value)
        init = S.BufferStore(store.buffer, init.value, new_indices)
    else:
        p_value = p_store.value
    value = _ReplaceLoads(buffer, lambda op: p_value).visit(substitute(store.value, vmap))
    new_store = S.BufferStore(store.buffer, value, new_indices)
    predicate = _overcompute_predicate(tree, producer, realize, indices, vmap)
    new_realize = attrs.evolve(
        producer,
        predicate=_merge_predicates(producer.predicate, predicate),
        block=_with_regions(
            attrs.evolve(producer.block, body=new_store, init=init), data_buffers(func)
        ),
    )
    mapping = {id(tree.removable_root(realize)): REMOVE, id(producer): new_realize}
    return drop_alloc(rewrite(func, mapping), buffer)


def _padded(indices, iters) -> dict:
    """``iters`` with each constant extent rounded up to a multiple of the constants
    that divide or reduce that iterator alone in ``indices`` (their lcm)."""
    periods: dict = {}

    def visit(node):
        if isinstance(node, (E.FloorDiv, E.FloorMod)) and isinstance(node.a, E.Var):
            c = const_value(node.b)
            if c is not None and c > 0:
                periods[node.a] = math.lcm(periods.get(node.a, 1), c)

    for index in indices:
        post_order_visit(index, visit)
    out = {}
    for var, rng in iters.items():
        extent, period = const_value(rng.extent), periods.get(var)
        if extent is None or period is None or extent % period == 0:
            out[var] = rng
        else:
            padded = -(-extent // period) * period
            out[var] = Range(rng.min, E.IntImm(rng.extent.dtype, padded))
    return out


def _overcompute_predicate(tree, producer, consumer, indices, vmap):
    """The producer may compute more of the buffer than the consumer reads; after
    inlining it must store only where a consumer iteration exists (TVM's
    ``T.where(i < 127 and j < 127)``), else it writes past the consumer's domain."""
    ana = Analyzer()
    for lp in tree.loops_above(producer):
        b, e = ana.const_bound(lp.min), ana.const_bound(lp.extent)
        hi = None if b.hi is None or e.hi is None else b.hi + e.hi - 1
        ana.var_bounds[lp.loop_var] = ConstBound(b.lo, hi)
    bindings = {iv.var: v for iv, v in zip(producer.block.iter_vars, producer.iter_values)}
    doms = {id(iv.var): iv.dom for iv in consumer.block.iter_vars}
    conds = []
    p_doms = {id(iv.var): iv.dom for iv in producer.block.iter_vars}
    for var in indices:
        dom = doms[id(var)]
        p_dom = p_doms.get(id(vmap[var]))
        if p_dom is not None and _within(p_dom, dom):
            continue  # the producer's own iterator already stays inside
        value = substitute(vmap[var], bindings)
        lower = E.LE(dom.min, value)
        upper = E.LT(value, simplify(dom.min + dom.extent))
        for cond in (lower, upper):
            if not ana.can_prove(cond):
                conds.append(ana.simplify(cond))
    # simplified as one condition, as TVM does: ``i < 16256 and i % 128 < 127`` is
    # ``i < 16255 and i % 128 < 127``
    joined = ana.simplify(_conjunction(conds)) if conds else _conjunction(conds)
    return _conjunction([_scale_order(c) for c in conjuncts(joined)])


def _scale_order(cond):
    """A comparison whose sides are sums written as TVM's canonical simplifier writes
    them: terms by decreasing coefficient (``i0 * 16 + i1``, not ``i1 + i0 * 16``)."""
    if not isinstance(cond, (E.LT, E.LE)):
        return cond
    return type(cond)(scale_ordered(cond.a), scale_ordered(cond.b))


def _covers(producer, p_indices, consumer, c_indices) -> bool:
    """Whether the elements the producer stores (over its iterators' domains) include
    every element the consumer loads (over its own): each consumer iteration must
    get its value from a producer iteration once inlined."""

    def box(realize, indices):
        dom = {iv.var: iv.dom for iv in realize.block.iter_vars}
        return [eval_interval(ix, dom) for ix in indices]

    for (plo, phi), (clo, chi) in zip(box(producer, p_indices), box(consumer, c_indices)):
        if any(x is None for x in (plo, phi, clo, chi)):
            return False
        low, high = const_value(simplify(clo - plo)), const_value(simplify(phi - chi))
        if low is None or high is None or low < 0 or high < 0:
            return False
    return True


def _within(inner, outer) -> bool:
    """Range ``inner`` provably inside range ``outer`` (symbolic extents included)."""
    lo = const_value(simplify(inner.min - outer.min))
    hi = const_value(simplify(outer.min + outer.extent - inner.min - inner.extent))
    return lo is not None and hi is not None and lo >= 0 and hi >= 0


def _merge_predicates(old, new):
    """The producer's own predicate and the one inlining adds, without repeating a
    condition both state (TVM's result for ``T.where(i < 127)`` twice is one)."""
    have = conjuncts(old)
    extra = [c for c in conjuncts(new) if not any(structural_equal(c, h) for h in have)]
    result = old
    for cond in extra:
        result = and_predicate(result, cond)
    return result


def _same_indices(a, b) -> bool:
    return len(a) == len(b) and all(structural_equal(x, y) for x, y in zip(a, b))


def _conjunction(conds):
    if not conds:
        return E.IntImm("bool", 1)
    result = conds[0]
    for cond in conds[1:]:
        result = E.And(result, cond)
    return result


def _reads_buffer(expr, buffer) -> bool:
    found = []
    _ReplaceLoads(buffer, lambda op: found.append(op) or op).visit(expr)
    return bool(found)

"""Moving blocks: compute_at and reverse_compute_at (inlining is in :mod:`.inline`)."""

from __future__ import annotations

from tilelang.arith import const_value, detect_iter_map, simplify
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.buffer import Range
from tilelang.ir.convert import match_types
from tilelang.ir.var_usage import uses_var
from tilelang.schedule.block_var_domain import NoSolution, ScopeAnalyzer, block_var_domains
from tilelang.schedule.common import block_subject, find_block, find_loop
from tilelang.schedule.errors import schedule_error
from tilelang.schedule.regions import (
    buffers_of,
    check_move,
    covered_region,
    provided_region,
    siblings,
)
from tilelang.schedule.state import REMOVE, Tree, rewrite, with_body


def compute_at(func, name, loop_var, preserve_unit_loops=False, index=-1):
    """Moves producer block ``name`` under ``loop``, computing per iteration exactly
    the region its consumers there read.

    Before / after ``compute_at(A_shared, i_1)`` (a shared buffer, so the threads
    of ``i_1`` share the region)::

        for ax0 in range(1027):                  for i_0 in T.thread_binding(8, ...):
            with T.block("A_shared"): ...            for i_1 in T.thread_binding(128, ...):
        for i_0 in T.thread_binding(8, ...):             for ax0 in range(130):
            for i_1 in T.thread_binding(128, ...):           with T.block("A_shared"):
                with T.block("C"): ...                           v0 = ... i_0 * 128 + ax0
                                                             with T.block("C"): ...
    """
    return _place("compute_at", func, name, loop_var, preserve_unit_loops, index, True)


def reverse_compute_at(func, name, loop_var, preserve_unit_loops=False, index=-1):
    """Moves consumer block ``name`` under ``loop``, covering per iteration exactly
    the region its producers there write.

    Before / after ``reverse_compute_at(C, j_0)`` (SEED §2)::

        for i, j_0, k, j_1 in T.grid(...):      for i, j_0 in T.grid(128, 32):
            with T.block("Y"): ...                  for k, j_1 in T.grid(128, 4):
        for i, j in T.grid(128, 128):                   with T.block("Y"): ...
            with T.block("C"): ...                  for ax0 in range(4):
                                                        with T.block("C"):
                                                            vi = T.axis.spatial(128, i)
                                                            vj = T.axis.spatial(128, j_0 * 4 + ax0)
    """
    return _place("reverse_compute_at", func, name, loop_var, preserve_unit_loops, index, False)


def _items(loop: S.For) -> list:
    return list(loop.body.seq) if isinstance(loop.body, S.SeqStmt) else [loop.body]


def _place(primitive, func, name, loop_var, preserve_unit_loops, index, forward):
    tree = Tree(func)
    realize = find_block(tree, name, primitive)
    loop = find_loop(tree, loop_var, primitive)
    subject = block_subject(realize)
    if tree.is_ancestor(loop, realize):
        raise schedule_error(
            primitive, subject, f"is already under loop {loop.loop_var.name}", loop
        )
    if tree.is_ancestor(realize, loop):
        raise schedule_error(primitive, subject, f"contains loop {loop.loop_var.name}", realize)
    if tree.scope_realize(loop) is not tree.scope_realize(realize):
        raise schedule_error(primitive, subject, "the loop is in another block's scope")
    if not isinstance(realize.predicate, E.IntImm) or not realize.predicate.value:
        raise schedule_error(
            primitive, subject, "blocks with a T.where predicate cannot move", realize
        )
    if not isinstance(index, int) or isinstance(index, bool) or index < -2:
        raise schedule_error(
            primitive, subject, f"index must be -1, -2 or a position, not {index!r}"
        )
    reads, writes = buffers_of(realize)
    others = siblings(tree, realize)
    under = [r for r in others if tree.is_ancestor(loop, r)]
    if forward:  # a producer: its consumers under the loop decide the region
        if len(writes) != 1:
            raise schedule_error(primitive, subject, "the block must write exactly one buffer")
        (buffer,) = writes
        partners = [r for r in others if buffer in buffers_of(r)[0]]
        for r in others:
            if buffer in buffers_of(r)[1]:
                raise schedule_error(
                    primitive,
                    subject,
                    f"block {r.block.name_hint!r} also writes {buffer.name}",
                    realize,
                )
        outside = [r for r in partners if not any(r is u for u in under)]
        if outside:
            raise schedule_error(
                primitive,
                subject,
                f"its consumer {outside[0].block.name_hint!r} is not under loop "
                f"{loop.loop_var.name}",
                loop,
            )
    else:  # a consumer: its producers under the loop decide the region
        candidates = [b for b in reads if any(b in buffers_of(r)[1] for r in under)]
        if not candidates:
            raise schedule_error(
                primitive,
                subject,
                f"reads no buffer produced under loop {loop.loop_var.name}",
                loop,
            )
        for r in others:  # as TVM: every producer of the block's inputs is under it
            before = tree.order.index(r) < tree.order.index(realize)
            if before and buffers_of(r)[1] & reads and not any(r is u for u in under):
                raise schedule_error(
                    primitive,
                    subject,
                    f"requires all the producer blocks to be under loop "
                    f"{loop.loop_var.name}; {r.block.name_hint!r} is not",
                    loop,
                )
        candidates.sort(key=lambda b: b.name)
        partners = [r for r in others if buffers_of(r)[1] & set(candidates)]
        outside = [r for r in partners if not any(r is u for u in under)]
        if outside:
            raise schedule_error(
                primitive,
                subject,
                f"its producer {outside[0].block.name_hint!r} is not under loop "
                f"{loop.loop_var.name}",
                loop,
            )
    if not partners:
        raise schedule_error(primitive, subject, f"nothing under loop {loop.loop_var.name} uses it")
    position = _insert_position(primitive, subject, tree, loop, realize, forward, index)
    _check_order(primitive, subject, tree, realize, loop, position, others)
    buffers = [buffer] if forward else candidates
    required = {
        b: covered_region(
            primitive, subject, tree, [r for r in partners if _touches(r, b, forward)], b,
            loop, not forward,
        )
        for b in buffers
    }  # fmt: skip
    provided = {b: provided_region(realize, b, forward) for b in buffers}
    outer = [*tree.loops_above(loop), loop]
    new_stmt = _new_nest(
        primitive, subject, realize, provided, required, preserve_unit_loops, outer
    )
    items = _items(loop)
    items.insert(position, new_stmt)
    mapping = {
        id(tree.removable_root(realize)): REMOVE,
        id(loop): with_body(loop, S.seq_stmt(*items)),
    }
    return rewrite(func, mapping)


def _insert_position(primitive, subject, tree, loop, realize, forward, index):
    """Where the block goes among the loop's body statements."""
    reads, writes = buffers_of(realize)
    items = _items(loop)

    def touches(item, wanted_reads, wanted_writes):
        for r in tree.blocks_under(item):
            if r is realize:
                continue
            r_reads, r_writes = buffers_of(r)
            if (wanted_reads and r_reads & wanted_reads) or (
                wanted_writes and r_writes & wanted_writes
            ):
                return True
        return False

    if forward:  # after whatever writes its inputs, before what reads its output
        hi = next((i for i, it in enumerate(items) if touches(it, writes, set())), len(items))
        lo = max((i + 1 for i, it in enumerate(items[:hi]) if touches(it, set(), reads)), default=0)
    else:  # after its producers, before whatever reads its output
        lo = max((i + 1 for i, it in enumerate(items) if touches(it, set(), reads)), default=0)
        hi = next(
            (i for i, it in enumerate(items) if i >= lo and touches(it, writes, set())), len(items)
        )
    if lo > hi:
        raise schedule_error(primitive, subject, "no position in the loop respects the dependences")
    if index == -1:
        return hi
    if index == -2:
        return lo
    if not lo <= index <= hi:
        raise schedule_error(primitive, subject, f"index {index} is outside {lo}..{hi}")
    return index


def _check_order(primitive, subject, tree, realize, loop, position, others):
    """Blocks that run between the old and the new place must not depend on it."""
    items = _items(loop)
    before_new = {id(r) for it in items[:position] for r in tree.blocks_under(it)}
    old = tree.order.index(realize)
    loop_start = next(
        (tree.order.index(r) for r in tree.order if tree.is_ancestor(loop, r)), len(tree.order)
    )
    between = []
    for r in others:
        pos = tree.order.index(r)
        inside = tree.is_ancestor(loop, r)
        if old < loop_start:  # moving later
            if pos > old and ((not inside and pos < loop_start) or id(r) in before_new):
                between.append(r)
        elif pos < old and (
            (not inside and pos > loop_start) or (inside and id(r) not in before_new)
        ):
            between.append(r)
    check_move(primitive, subject, tree, realize, between)


def _touches(realize, buffer, forward) -> bool:
    """Whether a partner block reads (forward) or writes (reverse) ``buffer``."""
    reads, writes = buffers_of(realize)
    return buffer in (reads if forward else writes)


def _new_nest(primitive, subject, realize, provided, required, preserve_unit_loops, outer):
    """The block under fresh loops ``ax0, ax1...`` sweeping the region (TVM's
    ``MakeNewLoop``).

    Where the swept range of an iterator may leave the iterator's domain or the
    buffer (a region over-computed at a tile edge), the block gets TVM's bound
    predicate (``T.where(j + ax0 < 16)``)."""
    block = realize.block
    ana = ScopeAnalyzer()
    for lp in outer:  # the target loop and those around it
        ana.bind(lp.loop_var, lp.min, lp.extent)
    try:
        infos = block_var_domains(block.iter_vars, provided, required, ana)
    except NoSolution as err:
        raise schedule_error(primitive, subject, str(err), realize) from None
    values, loops, conds = [], [], []
    for iv, info in zip(block.iter_vars, infos):
        dtype = iv.var.dtype
        low, extent = info.cover(iv.dom, ana)
        if iv.iter_type != S.IterVar.DataPar and not _whole(iv, low, extent, ana):
            if info.bound is not None or not _disjoint_chunks(low, extent, outer):
                raise schedule_error(
                    primitive,
                    subject,
                    f"its reduction iterator {iv.var.name} would be cut into chunks that "
                    "overlap or do not run in order",
                    realize,
                )
        if const_value(extent) == 1 and not preserve_unit_loops:
            value = low
        else:
            ax = E.Var(f"ax{len(loops)}", dtype)
            loops.append((ax, extent))
            value = E.Add(low, ax) if const_value(low) != 0 else ax  # TVM: min + ax
            ana.bind(ax, E.IntImm(dtype, 0), extent)
        values.append(value)
        if info.bound is not None:
            # TVM's spelling: ``16 <= i``, not ``0 <= i - 16``
            rest, c = _split_const(ana.simplify(value))
            lo, hi = info.bound
            if lo is not None and not ana.can_prove_bounded(E.LE(*_typed(lo, value))):
                conds.append(E.LE(ana.simplify(lo - c), rest))
            if hi is not None and not ana.can_prove_bounded(E.LT(*_typed(value, hi + 1))):
                conds.append(E.LT(rest, ana.simplify(hi + 1 - c)))
    predicate = conds[0] if conds else E.IntImm("bool", 1)
    for cond in conds[1:]:
        predicate = E.And(predicate, cond)
    body = S.BlockRealize(tuple(values), predicate, block)
    for ax, extent in reversed(loops):
        body = S.For(ax, E.IntImm(ax.dtype, 0), extent, S.ForKind.SERIAL, body)
    return body


def _typed(a, b) -> tuple:
    return match_types(a, b)


def _whole(iv, low, extent, ana) -> bool:
    """Whether ``[low, low + extent)`` is the iterator's whole domain."""
    return ana.equal(low, iv.dom.min) and ana.equal(extent, iv.dom.extent)


def _disjoint_chunks(low, extent, outer) -> bool:
    """Whether ``[low, low + extent)`` over the iterations of the ``outer`` loops are
    disjoint chunks visited in increasing order: then a reduction cut into them
    still runs its init first and accumulates every element once."""
    size = const_value(extent)
    if size is None:
        return False
    ax = E.Var("chunk", low.dtype)
    used = [lp for lp in outer if uses_var(low, lp.loop_var)]
    iters = {lp.loop_var: Range(lp.min, lp.extent) for lp in used}
    iters[ax] = Range(E.IntImm(low.dtype, 0), E.IntImm(low.dtype, size))
    result = detect_iter_map([low + ax], iters, bijective=True)
    return result.indices is not None and all(s.scale > 0 for s in result.indices[0].args)


def _split_const(value):
    """``value`` as ``rest + c`` with ``c`` a Python int (0 when there is none)."""
    value = simplify(value)
    if isinstance(value, (E.Add, E.Sub)):
        c = const_value(value.b)
        if c is not None:
            return value.a, c if isinstance(value, E.Add) else -c
    return value, 0

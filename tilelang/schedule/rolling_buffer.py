"""rolling_buffer: a tiled producer whose tiles overlap keeps only one tile of its
buffer along one axis, indexed modulo the tile's extent, and skips the elements the
previous tile already computed.

Before / after ``rolling_buffer(B, 0)`` (B computed at ``i_0``, 6 rows per tile of 4)::

    B = T.alloc_buffer((4, 10))                  B = T.alloc_buffer((4, 6))
    for c, i_0 in T.grid(4, 2):                  for c, i_0 in T.grid(4, 2):
        for ax0, ax1 in T.grid(6, 3):                for ax0, ax1 in T.grid(6, 3):
            with T.block("B"):                           with T.block("B"):
                                                             T.where(i_0 < 1 or 2 <= ax0)
                vi = T.axis.spatial(10, i_0*4+ax0)           vi = T.axis.opaque(10, i_0*4+ax0)
                B[cc, vi] = ...                              B[cc, vi % 6] = ...
        ... reads B[cc, vi + vk] ...                 ... reads B[cc, (vi + vk) % 6] ...

The region the block writes per iteration of the lowest loop holding it and all its
consumers is found; along each axis its start must be ``v * stride``,
``v * stride // d`` (v a loop variable), ``v`` or a constant, and its extent a
constant. The outermost loop among those ``v`` whose extent exceeds the stride (the
tiles overlap) chooses the rolling axis. The writer then skips, for ``v >= 1``, the
first ``extent - stride`` elements along every overlapping axis (computed by the
previous iteration), and the iterators bound to the rolling loop become opaque (one
iteration depends on the earlier ones).

Preconditions beyond TVM's (not an output buffer, only read-after-write dependences,
the lowest common loop is a loop, one matching axis): the loops whose iterations are
skipped run serially from 0, the producer's reduction finishes within a tile, and
every consumer reads, per iteration, within the window the producer writes, so
nothing it reads has been overwritten.
"""

from __future__ import annotations

import math

import attrs

from tilelang.analysis import get_block_read_write_region
from tilelang.arith import const_value, simplify
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.convert import binary
from tilelang.ir.functor import StmtExprMutator, post_order_visit, substitute
from tilelang.ir.var_usage import uses_any_var, uses_var
from tilelang.schedule.common import and_predicate, block_subject, find_block
from tilelang.schedule.errors import schedule_error
from tilelang.schedule.inline import allocated_in
from tilelang.schedule.regions import buffers_of, covered_region, siblings
from tilelang.schedule.state import Tree

P = "rolling_buffer"


@attrs.frozen
class _Axis:
    """How one axis of the written window moves with the loops: ``var`` (None when
    it does not roll), the window's ``extent`` and the ``overlap`` of two tiles."""

    var: E.Var | None
    extent: int
    overlap: int


def rolling_buffer(func, name, write_buffer_index):
    """Returns the new function; see the module docstring."""
    tree = Tree(func)
    realize = find_block(tree, name, P)
    subject = block_subject(realize)
    writes = realize.block.writes or tuple(get_block_read_write_region(realize.block)[1])
    if not isinstance(write_buffer_index, int) or not 0 <= write_buffer_index < len(writes):
        raise schedule_error(
            P, subject,
            f"write buffer index {write_buffer_index!r} is out of range; the block writes "
            f"{[r.buffer.name for r in writes]}",
        )  # fmt: skip
    buffer = writes[write_buffer_index].buffer
    if allocated_in(tree, buffer) is None:
        raise schedule_error(
            P, subject, f"{buffer.name} is an output of the function; only an allocated "
            "buffer can roll",
        )  # fmt: skip
    consumers = _check_dependences(tree, realize, buffer, subject)
    lca = _lowest_common_loop(tree, [realize, *consumers], buffer, subject)
    window = covered_region(P, subject, tree, [realize], buffer, lca, use_writes=True)
    loops = tree.loops_above(realize)
    # a loop of one iteration does not tile: its variable is its start
    unit = {lp.loop_var: lp.min for lp in loops if const_value(lp.extent) == 1}
    window = [(simplify(substitute(lo, unit)), simplify(substitute(hi, unit))) for lo, hi in window]
    loop_vars = [lp.loop_var for lp in loops]
    axes = [_match_axis(subject, buffer, lo, hi, loop_vars) for lo, hi in window]
    axis = _rolling_axis(subject, buffer, axes, loop_vars, window)
    _check_serial(tree, subject, axes)
    _check_reduction_inside(tree, subject, realize, lca)
    _check_consumers(tree, subject, consumers, buffer, lca, window, axis)
    extent = axes[axis].extent
    new_buffer = attrs.evolve(
        buffer, shape=tuple(E.IntImm(s.dtype, extent) if i == axis else s
                            for i, s in enumerate(buffer.shape))
    )  # fmt: skip
    body = _Roll(buffer, new_buffer, axis, axes, realize).visit(func.body)
    return func.with_body(body)


def _check_dependences(tree, realize, buffer, subject) -> list:
    """The consumers of ``buffer``; every other dependence of the block is refused."""
    reads, writes = buffers_of(realize)
    order = siblings(tree, realize)
    position = tree.order.index(realize)
    consumers = []
    for other in order:
        o_reads, o_writes = buffers_of(other)
        before = tree.order.index(other) < position
        clash = o_writes & writes or (o_reads & writes if before else o_writes & reads)
        if clash:
            names = ", ".join(sorted(b.name for b in clash))
            raise schedule_error(
                P, subject,
                f"it must have only read-after-write dependences, but block "
                f"{other.block.name_hint!r} also writes or reads {names} in the other order",
            )  # fmt: skip
        if not before and buffer in o_reads:
            consumers.append(other)
    return consumers


def _lowest_common_loop(tree, realizes, buffer, subject) -> S.For:
    # loops and blocks only (TVM's srefs): a sequence between them is no location
    kinds = (S.For, S.Block, S.BlockRealize)
    chains = [[a for a in tree.ancestors(r) if isinstance(a, kinds)] for r in realizes]
    common = None
    for nodes in zip(*chains):
        if any(n is not nodes[0] for n in nodes):
            break
        common = nodes[0]
    if len(realizes) == 1 or not isinstance(common, S.For):
        raise schedule_error(
            P, subject,
            f"the block and the consumers of {buffer.name} must share a loop (compute the "
            "block at a tile loop of its consumer first)",
        )  # fmt: skip
    return common


def _match_axis(subject, buffer, lo, hi, loop_vars) -> _Axis:
    extent = const_value(simplify(hi - lo + 1))
    if extent is None:
        raise schedule_error(
            P, subject, f"the window of {buffer.name} per tile has no constant extent: "
            f"[{lo}, {hi}]",
        )  # fmt: skip
    var, stride = _tile_start(lo)
    if var is None or not any(var is v for v in loop_vars):
        if const_value(lo) is not None:
            return _Axis(None, extent, 0)
        raise schedule_error(
            P, subject,
            f"the window of {buffer.name} starts at {lo}; a rolling axis must start at "
            "v * stride (or v * stride // d) of a loop variable v",
        )  # fmt: skip
    overlap = extent - stride
    return _Axis(var if overlap > 0 else None, extent, max(overlap, 0))


def _tile_start(lo):
    """``(v, stride)`` when ``lo`` is ``v``, ``v * s`` or ``v * s // d`` (stride
    ``ceil(s / d)``); ``(None, 0)`` otherwise."""
    divisor = 1
    if isinstance(lo, E.FloorDiv) and const_value(lo.b) is not None:
        lo, divisor = lo.a, const_value(lo.b)
    if isinstance(lo, E.Var):
        return (lo, 1) if divisor == 1 else (None, 0)
    if isinstance(lo, E.Mul):
        var, factor = (lo.a, lo.b) if isinstance(lo.a, E.Var) else (lo.b, lo.a)
        stride = const_value(factor)
        if isinstance(var, E.Var) and stride is not None and stride > 0 and divisor > 0:
            return var, math.ceil(stride / divisor)
    return None, 0


def _rolling_axis(subject, buffer, axes, loop_vars, window) -> int:
    for var in loop_vars:
        for i, ax in enumerate(axes):
            if ax.var is var:
                return i
    spans = ", ".join(f"[{lo}, {hi}]" for lo, hi in window)
    raise schedule_error(
        P, subject,
        f"no axis of {buffer.name} rolls: per tile it writes {spans}, and no axis starts "
        "at v * stride with tiles that overlap",
    )  # fmt: skip


def _check_serial(tree, subject, axes):
    for ax in axes:
        if ax.var is None:
            continue
        loop = tree.loops[id(ax.var)]
        serial = loop.kind in (S.ForKind.SERIAL, S.ForKind.UNROLLED)
        if not serial or const_value(loop.min) != 0:
            raise schedule_error(
                P, subject,
                f"loop {ax.var.name} must run serially from 0: each iteration reuses what "
                "the previous one computed",
            )  # fmt: skip


def _check_reduction_inside(tree, subject, realize, lca):
    """A reduction must finish within one tile: its elements are reused by the next."""
    outer = []
    for lp in tree.loops_above(realize):  # the loops down to the tile loop
        outer.append(lp.loop_var)
        if lp is lca:
            break
    bindings = zip(realize.block.iter_vars, realize.iter_values)
    for iv, value in bindings:
        if iv.iter_type == S.IterVar.CommReduce and uses_any_var(value, outer):
            raise schedule_error(
                P, subject,
                f"its reduction iterator {iv.var.name} runs across tiles (bound to {value}); "
                "a tile's elements must be final before the next tile reuses them",
            )  # fmt: skip


def _check_consumers(tree, subject, consumers, buffer, lca, window, axis):
    lo, hi = window[axis]
    for consumer in consumers:
        c_lo, c_hi = covered_region(P, subject, tree, [consumer], buffer, lca, False)[axis]
        inside = [const_value(simplify(a - b)) for a, b in ((c_lo, lo), (hi, c_hi))]
        if any(d is None or d < 0 for d in inside):
            raise schedule_error(
                P, subject,
                f"block {consumer.block.name_hint!r} reads {buffer.name} at [{c_lo}, {c_hi}] "
                f"along axis {axis}, outside the window [{lo}, {hi}] one tile writes",
            )  # fmt: skip


class _Roll(StmtExprMutator):
    """Every access to the buffer goes modulo the window along the rolling axis; the
    writer skips what the previous tile computed."""

    def __init__(self, old, new, axis, axes, writer):
        self.old, self.new, self.axis, self.axes = old, new, axis, axes
        self.writer = writer
        self.rolling_var = axes[axis].var

    def _indices(self, indices):
        extent = E.IntImm(indices[self.axis].dtype, self.axes[self.axis].extent)
        return tuple(
            binary("floormod", x, extent) if i == self.axis else x for i, x in enumerate(indices)
        )

    def visit_buffer_load(self, op):
        op = self.generic_visit(op)
        if op.buffer is not self.old:
            return op
        return attrs.evolve(op, buffer=self.new, indices=self._indices(op.indices))

    def visit_buffer_store(self, op):
        op = self.generic_visit(op)
        if op.buffer is not self.old:
            return op
        return attrs.evolve(op, buffer=self.new, indices=self._indices(op.indices))

    def visit_block(self, op):
        new = self.generic_visit(op)
        if new is op:
            return op
        allocs = tuple(self.new if b is self.old else b for b in new.alloc_buffers)
        return attrs.evolve(new, alloc_buffers=allocs)

    def visit_block_realize(self, op):
        new = self.generic_visit(op)
        if new.block is op.block:
            return new
        block = new.block
        if self.old in buffers_of(op)[0] | buffers_of(op)[1]:
            block = self._retyped(new, block)
        predicate = new.predicate
        if op is self.writer:
            for condition in self._skips(op):
                predicate = and_predicate(predicate, condition)
        return attrs.evolve(new, block=block, predicate=predicate)

    def _retyped(self, realize, block):
        """The block's regions of the rolled buffer inferred again, and its iterators
        bound to the rolling loop opaque."""
        iter_vars = tuple(
            attrs.evolve(iv, iter_type=S.IterVar.Opaque) if uses_var(v, self.rolling_var) else iv
            for iv, v in zip(block.iter_vars, realize.iter_values)
        )
        block = attrs.evolve(block, iter_vars=iter_vars)
        reads, writes = get_block_read_write_region(block)

        def fresh(regions, inferred):
            found = [r for r in inferred if r.buffer is self.new]
            return tuple(found[0] if r.buffer is self.old and found else r for r in regions)

        return attrs.evolve(
            block, reads=fresh(block.reads, reads), writes=fresh(block.writes, writes)
        )

    def _skips(self, realize):
        """``v < 1 or overlap <= offset`` for every overlapping axis, ``offset`` the
        written index within the tile."""
        store = _store_of(realize.block.body, self.old)
        bindings = {iv.var: v for iv, v in zip(realize.block.iter_vars, realize.iter_values)}
        conditions = []
        for index, ax in zip(store.indices, self.axes):
            if ax.var is None:
                continue
            zero = E.IntImm(ax.var.dtype, 0)
            offset = simplify(substitute(substitute(index, bindings), {ax.var: zero}))
            first = binary("lt", ax.var, E.IntImm(ax.var.dtype, 1))
            done = binary("le", E.IntImm(offset.dtype, ax.overlap), offset)
            conditions.append(E.Or(first, done))
        return conditions


def _store_of(stmt, buffer):
    found = []

    def visit(node):
        if isinstance(node, S.BufferStore) and node.buffer is buffer:
            found.append(node)

    post_order_visit(stmt, visit)
    return found[0]

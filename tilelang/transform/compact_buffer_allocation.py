"""CompactBufferAllocation: an intermediate buffer shrinks to the region it touches.

For each block allocation, every access under the block is relaxed over the loops
inside the block (their variables sweep their ranges; loops outside stay symbolic),
and the union per dimension becomes the new shape when its extent is a constant;
indices are rebased by the region's minimum. After
PlanAndUpdateBufferAllocationLocation has moved ``Y`` of the ``reverse_compute_at``
form of mm_relu under the ``j_0`` loop::

    Y = T.alloc_buffer((128, 128))          Y = T.alloc_buffer((1, 4))
    for k, j_1 in T.grid(128, 4):           for k, j_1 in T.grid(128, 4):
        Y[i, j_0 * 4 + j_1] = ...      ->       Y[0, j_1] = ...

A ``shared`` buffer allocated inside GPU thread loops (see
PlanAndUpdateBufferAllocationLocation) is shared by every thread of the block, so the
enclosing ``threadIdx``/``vthread`` loops are relaxed too.

A dimension keeps its full extent when a bound is unknown (an index the interval
evaluator cannot bound, or an opaque access through ``Y.data``). The regions come from
:func:`tilelang.arith.eval_interval`; predicates (``T.where``) are not used to
tighten them.
"""

from __future__ import annotations

import attrs

from tilelang.arith import Analyzer, eval_interval, fold_max, fold_min, range_extent
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.buffer import BufferRegion, Range
from tilelang.ir.convert import binary, const_int_value
from tilelang.ir.functor import StmtExprMutator, StmtExprVisitor
from tilelang.transform.pass_infra import prim_func_pass
from tilelang.transform.storage_align import aligned_strides, alignments

_OPAQUE = object()


class _RegionCollector(StmtExprVisitor):
    """Per buffer of ``targets``, ``[lo, hi]`` per dimension over the accesses, or
    ``_OPAQUE`` when the buffer escapes through its data pointer."""

    def __init__(self, targets):
        self.targets = {id(b): b for b in targets}
        self.by_data = {id(b.data): b for b in targets}
        self.ranges: dict = {}
        self.bindings: dict = {}
        self.bounds: dict = {}

    def record(self, buffer, indices):
        if id(buffer) not in self.targets or self.bounds.get(buffer) is _OPAQUE:
            return
        dims = [eval_interval(ix, self.ranges, self.bindings) for ix in indices]
        known = self.bounds.get(buffer)
        if known is None:
            self.bounds[buffer] = [list(d) for d in dims]
            return
        for slot, (lo, hi) in zip(known, dims):
            slot[0] = None if slot[0] is None or lo is None else fold_min(slot[0], lo)
            slot[1] = None if slot[1] is None or hi is None else fold_max(slot[1], hi)

    def record_region(self, buffer, region):
        """A region access: its first and last element in every dimension."""
        if id(buffer) not in self.targets:
            return
        for r in region:
            self.visit(r.min)
            self.visit(r.extent)
        last = [binary("add", r.min, binary("sub", r.extent, 1)) for r in region]
        self.record(buffer, [r.min for r in region])
        self.record(buffer, last)

    def visit_buffer_load(self, op):
        self.record(op.buffer, op.indices)
        self.generic_visit(op)

    def visit_buffer_store(self, op):
        self.record(op.buffer, op.indices)
        self.generic_visit(op)

    def visit_var(self, var):
        buffer = self.by_data.get(id(var))
        if buffer is not None:
            self.bounds[buffer] = _OPAQUE

    def visit_for(self, op):
        self.visit(op.min)
        self.visit(op.extent)
        self.ranges[op.loop_var] = Range(op.min, op.extent)
        self.visit(op.body)
        del self.ranges[op.loop_var]

    def visit_let_stmt(self, op):
        self.visit(op.value)
        self.bindings[op.var] = op.value
        self.visit(op.body)
        del self.bindings[op.var]

    def visit_block(self, op):
        # Regions restate the accesses of the body; the body alone is exact. A
        # match_buffer's source region is an access of its own: a tensorized block
        # touches its buffers only through such views (a fragment tile, say).
        for match in op.match_buffers:
            region = match.source.region
            self.record_region(match.source.buffer, region)
        if op.init is not None:
            self.visit(op.init)
        self.visit(op.body)


def _compact_shape(buffer, bounds):
    """``(new shape, offsets)`` or None when nothing shrinks."""
    if bounds is None or bounds is _OPAQUE or buffer.strides:
        return None
    shape, offsets, changed = [], [], False
    for extent, (lo, hi) in zip(buffer.shape, bounds):
        new_extent = None if lo is None or hi is None else range_extent(lo, hi)
        size, old = const_int_value(new_extent), const_int_value(extent)
        if size is not None and size > 0 and (old is None or size < old):
            shape.append(E.IntImm(extent.dtype, size))
            offsets.append(lo)
            changed = True
        else:
            shape.append(extent)
            offsets.append(None)
    return (tuple(shape), tuple(offsets)) if changed else None


def _is_thread_loop(op: S.For) -> bool:
    return op.kind == S.ForKind.THREAD_BINDING and (op.thread_binding or "").startswith(
        ("threadIdx", "vthread")
    )


class _Compact(StmtExprMutator):
    def __init__(self):
        self.remap: dict = {}  # old buffer -> (new buffer, offsets)
        self.analyzer = Analyzer()
        self.thread_loops: list = []  # enclosing thread-bound loops

    def visit_for(self, op: S.For):
        if not _is_thread_loop(op):
            return self.generic_visit(op)
        self.thread_loops.append(op)
        new = self.generic_visit(op)
        self.thread_loops.pop()
        return new

    def _bounds(self, op: S.Block) -> dict:
        bounds = {}
        shared = [b for b in op.alloc_buffers if b.scope.startswith(("shared", "warp"))]
        others = [b for b in op.alloc_buffers if not any(b is s for s in shared)]
        for group, relax_threads in ((others, False), (shared, True)):
            if not group:
                continue
            collector = _RegionCollector(group)
            if relax_threads:
                for loop in self.thread_loops:
                    collector.ranges[loop.loop_var] = Range(loop.min, loop.extent)
            collector.visit(op)
            bounds.update(collector.bounds)
        return bounds

    def visit_block(self, op: S.Block):
        if op.alloc_buffers:
            bounds = self._bounds(op)
            aligned = alignments(op.body)  # storage_align's padded strides
            for buffer in op.alloc_buffers:
                compact = _compact_shape(buffer, bounds.get(buffer))
                if compact is not None:
                    shape, offsets = compact
                    self.remap[buffer] = (attrs.evolve(buffer, shape=shape), offsets)
                if buffer in aligned and not buffer.strides:
                    new, offsets = self.remap.get(buffer, (buffer, (None,) * len(buffer.shape)))
                    strides = aligned_strides(new.shape, aligned[buffer])
                    self.remap[buffer] = (attrs.evolve(new, strides=strides), offsets)
        return self.generic_visit(op)

    def visit_buffer_def(self, buffer):
        entry = self.remap.get(buffer)
        return buffer if entry is None else entry[0]

    def visit_buffer_ref(self, buffer):
        entry = self.remap.get(buffer)
        return buffer if entry is None else entry[0]

    def _rebase(self, buffer, indices):
        offsets = self.remap[buffer][1]
        return tuple(
            ix if off is None else self.analyzer.simplify(binary("sub", ix, off))
            for ix, off in zip(indices, offsets)
        )

    def visit_buffer_load(self, op):
        new = self.generic_visit(op)
        if op.buffer not in self.remap:
            return new
        return attrs.evolve(new, indices=self._rebase(op.buffer, new.indices))

    def visit_buffer_store(self, op):
        new = self.generic_visit(op)
        if op.buffer not in self.remap:
            return new
        return attrs.evolve(new, indices=self._rebase(op.buffer, new.indices))

    def visit_buffer_region(self, op: BufferRegion):
        new = self.generic_visit(op)
        if op.buffer not in self.remap:
            return new
        mins = self._rebase(op.buffer, [r.min for r in new.region])
        region = tuple(Range(m, r.extent) for m, r in zip(mins, new.region))
        return attrs.evolve(new, region=region)


def compact_buffer_allocation(body: S.Stmt) -> S.Stmt:
    """``body`` with every block allocation shrunk to its touched region."""
    return _Compact().visit(body)


def CompactBufferAllocation():  # noqa: N802 - TVM's pass name
    """The pass; see the module docstring."""

    def transform(func, mod, ctx):
        return func.with_body(compact_buffer_allocation(func.body))

    return prim_func_pass(transform, opt_level=0, name="tir.CompactBufferAllocation")

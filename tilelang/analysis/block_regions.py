"""The buffer regions a block touches (TVM's ``GetBlockAccessRegion``).

This module sits above :mod:`tilelang.arith` (region bounds are symbolic intervals
from it), which sits above :mod:`tilelang.ir`; it used to live in ``tilelang.ir``,
which made ``ir -> arith -> ir`` an import circle.

Block access regions follow TVM's ``GetBlockAccessRegion``: one region per buffer per
direction, in order of first access, over the block's body and init. Loops *inside*
the block are relaxed (their variables sweep their ranges), while the block's own
iterators stay symbolic, so ``C[vi, vj]`` is the point region ``C[vi, vj]`` and a
loop ``for k in range(16): A[vi, k]`` reads ``A[vi, 0:16]``. Nested blocks contribute
their own regions with their iterators replaced by the bound values. Buffers
allocated inside the block (its ``alloc_buffers`` and those of nested blocks) are
not part of its footprint.
"""

from __future__ import annotations

import weakref

import attrs

from tilelang.arith import simplify
from tilelang.arith.int_set import const_difference, eval_interval, range_extent
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.buffer import Buffer, BufferRegion, Range
from tilelang.ir.convert import binary, const_int_value
from tilelang.ir.functor import StmtExprVisitor, substitute

__all__ = ["get_block_access_region", "get_block_read_write_region", "infer_block_regions"]


# ------------------------------------------------------------- block regions


class _Footprint:
    """Per buffer, the union of accessed intervals, one ``[lo, hi]`` per dimension."""

    def __init__(self):
        self.order: list[Buffer] = []
        self.bounds: dict[Buffer, list[list]] = {}

    def add(self, buffer: Buffer, dims: list) -> None:
        known = self.bounds.get(buffer)
        if known is None:
            self.order.append(buffer)
            self.bounds[buffer] = [list(d) for d in dims]
            return
        for slot, (lo, hi) in zip(known, dims):
            slot[0] = _union_bound(slot[0], lo, lower=True)
            slot[1] = _union_bound(slot[1], hi, lower=False)

    def regions(self, skip) -> list[BufferRegion]:
        out = []
        for buffer in self.order:
            if buffer in skip:
                continue
            ranges = []
            for axis, (lo, hi) in enumerate(self.bounds[buffer]):
                ranges.append(_to_range(buffer, axis, lo, hi))
            out.append(BufferRegion(buffer, tuple(ranges)))
        return out


def _union_bound(a, b, lower: bool):
    """The looser of two bounds when they differ by a known constant; otherwise
    unbounded (the whole dimension), which keeps regions readable and safe."""
    if a is None or b is None:
        return None
    diff = const_difference(a, b)
    if diff is None:
        return None
    return (a if diff <= 0 else b) if lower else (a if diff >= 0 else b)


def _to_range(buffer: Buffer, axis: int, lo, hi) -> Range:
    extent_of_axis = buffer.shape[axis] if axis < len(buffer.shape) else None
    if lo is None:
        lo = E.IntImm(_index_dtype(hi, extent_of_axis), 0)
    if hi is None:
        if extent_of_axis is None:
            return Range(lo, 1)
        hi = simplify(binary("sub", extent_of_axis, 1))
    if lo is hi:
        return Range(lo, E.IntImm(lo.dtype, 1))
    return Range(lo, range_extent(lo, hi))


def _index_dtype(*candidates) -> str:
    for c in candidates:
        if c is not None:
            return c.dtype
    return "int32"


def _unboundable(index: E.PrimExpr) -> bool:
    """True when an access index has a part TVM's interval evaluator (``EvalSet``)
    cannot bound even as a single point: a call (other than ``vscale``), a float or
    string immediate, a logical not, or a load of a non-integer buffer. TVM's region
    detector gives such an index (``T.Cast("int32", T.floor(v * 2 + 0.5))``) the
    buffer's whole extent, even with no loop to relax, and what schedules build on the
    region (compute_at's producer range, cache sizes) follows from it.

    An explicit stack, not recursion: the parser asks this of every access, and sums of
    thousands of terms must not reach Python's recursion limit."""
    stack = [index]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is E.Var or kind is E.IntImm or kind is E.SizeVar:
            continue
        if isinstance(node, E.BinaryOp):
            stack += (node.a, node.b)
        elif kind is E.Cast or kind is E.Broadcast:
            stack.append(node.value)
        elif kind is E.Select:
            stack += (node.condition, node.true_value, node.false_value)
        elif kind is E.Ramp:
            stack += (node.base, node.stride)
        elif kind is E.Let:
            stack += (node.value, node.body)
        elif kind is E.BufferLoad:
            if not node.dtype.is_integer():
                return True
            stack += node.indices
        elif kind is E.Call and node.op == "vscale":
            stack += node.args
        else:  # a call, float/string immediates, not, anything unknown
            return True
    return False


class _RegionDetector(StmtExprVisitor):
    """Collects the reads and writes under a block; see the module docstring."""

    def __init__(self, buffer_var_map: dict | None):
        self.ranges: dict[E.Var, Range] = {}
        self.bindings: dict[E.Var, E.PrimExpr] = {}
        self.reads = _Footprint()
        self.writes = _Footprint()
        self.allocated: set[Buffer] = set()
        # match_buffer views report their source region instead of themselves.
        self.match_source: dict[Buffer, BufferRegion] = {}
        self.buffer_var_map = dict(buffer_var_map or {})

    # -- entry
    def detect_block(self, block: S.Block) -> None:
        for alloc in block.alloc_buffers:
            self.allocated.add(alloc)
        for match in block.match_buffers:
            self.match_source[match.buffer] = match.source
            self.buffer_var_map.setdefault(match.buffer.data, match.buffer)
        for alloc in block.alloc_buffers:
            self.buffer_var_map.setdefault(alloc.data, alloc)
        if block.init is not None:
            self.visit(block.init)
        self.visit(block.body)

    # -- recording
    def relax(self, expr):
        if _unboundable(expr):
            return None, None
        return eval_interval(expr, self.ranges, self.bindings)

    def record(self, footprint: _Footprint, buffer: Buffer, indices) -> None:
        self.buffer_var_map.setdefault(buffer.data, buffer)
        source = self.match_source.get(buffer)
        if source is not None:
            self.record_region(footprint, source)
            return
        footprint.add(buffer, [self.relax(ix) for ix in indices])

    def record_region(self, footprint: _Footprint, region: BufferRegion, vmap=None) -> None:
        """Records ``region`` (with ``vmap`` substituted) relaxed over the open loops."""
        source = self.match_source.get(region.buffer)
        if source is not None:
            self.record_region(footprint, source)
            return
        dims = []
        for rng in region.region:
            lo, extent = rng.min, rng.extent
            if vmap:
                lo, extent = substitute(lo, vmap), substitute(extent, vmap)
            if const_int_value(extent) == 1:
                dims.append(self.relax(lo))
            else:
                hi = simplify(binary("sub", binary("add", lo, extent), 1))
                dims.append((self.relax(lo)[0], self.relax(hi)[1]))
        footprint.add(region.buffer, dims)

    # -- visitors
    def visit_buffer_load(self, op: E.BufferLoad):
        for ix in op.indices:
            self.visit(ix)
        self.record(self.reads, op.buffer, op.indices)

    def visit_buffer_store(self, op: S.BufferStore):
        self.visit(op.value)
        for ix in op.indices:
            self.visit(ix)
        self.record(self.writes, op.buffer, op.indices)

    def visit_for(self, op: S.For):
        self.visit(op.min)
        self.visit(op.extent)
        self.ranges[op.loop_var] = Range(op.min, op.extent)
        try:
            self.visit(op.body)
        finally:
            del self.ranges[op.loop_var]

    def visit_let_stmt(self, op: S.LetStmt):
        self.visit(op.value)
        self.bindings[op.var] = op.value
        try:
            self.visit(op.body)
        finally:
            del self.bindings[op.var]

    # an expression Let binds its variable over its body exactly as the statement does
    visit_let = visit_let_stmt

    def visit_decl_buffer(self, op: S.DeclBuffer):
        self.allocated.add(op.buffer)
        self.buffer_var_map.setdefault(op.buffer.data, op.buffer)
        self.visit(op.body)

    def visit_block_realize(self, op: S.BlockRealize):
        for value in op.iter_values:
            self.visit(value)
        self.visit(op.predicate)
        inner = op.block
        reads, writes = list(inner.reads), list(inner.writes)
        if not reads and not writes:
            reads, writes = get_block_access_region(inner, self.buffer_var_map)
        vmap = {iv.var: value for iv, value in zip(inner.iter_vars, op.iter_values)}
        for region in reads:
            self.record_region(self.reads, region, vmap)
        for region in writes:
            self.record_region(self.writes, region, vmap)
        self.allocated.update(_nested_allocations(inner))

    def visit_block(self, op: S.Block):
        # A bare Block (no realize) in a body: its iterators stay symbolic.
        self.visit_block_realize(S.BlockRealize((iv.var for iv in op.iter_vars), True, op))

    def visit_call(self, op: E.Call):
        for arg in op.args:
            self.visit(arg)
        if op.op == "tvm_access_ptr" and len(op.args) == 5:
            buffer = self.buffer_var_map.get(op.args[1])
            mask = const_int_value(op.args[4])
            if buffer is not None:
                region = BufferRegion.full(buffer)
                if mask is None or mask & 1:
                    self.record_region(self.reads, region)
                if mask is None or mask & 2:
                    self.record_region(self.writes, region)


# Block -> the buffers allocated in it and in the blocks nested in it. Memoised: the
# parser asks for every block of a nest, innermost first, and a walk into each nested
# block again would make parsing a nest of depth d take d**2 steps.
_NESTED_ALLOCATIONS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _nested_allocations(block: S.Block) -> list[Buffer]:
    cached = _NESTED_ALLOCATIONS.get(block)
    if cached is not None:
        return cached
    found = list(block.alloc_buffers)

    class _Allocs(StmtExprVisitor):
        def visit_block(self, op):
            found.extend(_nested_allocations(op))  # not walked again

    _Allocs().visit(block.body)
    if block.init is not None:
        _Allocs().visit(block.init)
    _NESTED_ALLOCATIONS[block] = found
    return found


def get_block_access_region(
    block: S.Block, buffer_var_map: dict | None = None
) -> tuple[list[BufferRegion], list[BufferRegion]]:
    """``(reads, writes)`` of ``block``, like TVM's ``GetBlockAccessRegion``.

    A buffer both read and written (a reduction ``C[vi] = C[vi] + ...``) appears in
    both lists. ``buffer_var_map`` maps data variables to buffers so that opaque
    accesses (``tvm_access_ptr`` in extern calls) can be attributed; buffers accessed
    in the block are known without it.

    Example: for ``B[vi] = A[vi] + A[vi + 1] + A[vi + 2]`` the reads are
    ``[A[vi:vi + 3]]`` and the writes ``[B[vi]]``.
    """
    detector = _RegionDetector(buffer_var_map)
    detector.detect_block(block)
    skip = set(detector.allocated)
    return detector.reads.regions(skip), detector.writes.regions(skip)


def get_block_read_write_region(
    block: S.Block, buffer_var_map: dict | None = None
) -> tuple[list[BufferRegion], list[BufferRegion]]:
    """The regions TVM's script parser stores for a block without ``T.reads``/``T.writes``.

    Like :func:`get_block_access_region`, except that a block with an ``init`` does
    not list the buffers it writes among its reads: the init defines them, so the
    reduction ``Y[vi, vj] = Y[vi, vj] + A[vi, vk] * B[vk, vj]`` reads only ``A`` and
    ``B`` (as TVM prints mm_relu).
    """
    reads, writes = get_block_access_region(block, buffer_var_map)
    if block.init is not None:
        written = {w.buffer for w in writes}
        reads = [r for r in reads if r.buffer not in written]
    return reads, writes


def infer_block_regions(block: S.Block, buffer_var_map: dict | None = None) -> S.Block:
    """``block`` with ``reads``/``writes`` filled by :func:`get_block_read_write_region`
    when both are empty; otherwise ``block`` itself."""
    if block.reads or block.writes:
        return block
    reads, writes = get_block_read_write_region(block, buffer_var_map)
    if not reads and not writes:
        return block
    return attrs.evolve(block, reads=tuple(reads), writes=tuple(writes))

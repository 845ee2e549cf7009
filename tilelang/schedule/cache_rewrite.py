"""The rewrites of the scope block that cache_read and cache_write make once
:mod:`.cache_stage` has placed the copy: which accesses move to the cache, the
declared regions and ``match_buffer`` sources that follow them, and the stage and
the allocation inserted. Accesses of a cache of the region's shape are shifted by
the region's start."""

from __future__ import annotations

import attrs

from tilelang.arith import const_value, simplify
from tilelang.ir.buffer import BufferRegion, Range
from tilelang.ir.functor import StmtExprMutator
from tilelang.schedule.cache_stage import insert_stages


class _CacheRewriter(StmtExprMutator):
    """What both rewrites share: moving ``old`` to ``new`` (shifted by ``lows`` when
    the cache is compact), and inserting the ``(pos, stage)`` of ``inserts`` into the
    body of ``loc``."""

    def __init__(self, old, new, lows, loc, inserts, scope_block):
        self.old, self.new, self.lows = old, new, lows
        self.loc, self.inserts, self.scope = loc, inserts, scope_block

    def shift(self, indices):
        if self.lows is None:
            return tuple(indices)
        return tuple(
            i if const_value(lo) == 0 else simplify(i - lo) for i, lo in zip(indices, self.lows)
        )

    def moved(self, region):
        """``region`` of ``old`` as the region of the cache; other regions as they are."""
        if region.buffer is not self.old:
            return region
        mins = self.shift([r.min for r in region.region])
        return BufferRegion(
            self.new, tuple(Range(m, r.extent) for m, r in zip(mins, region.region))
        )

    def move_regions(self, block, reads=True, writes=False):
        changes = {}
        if reads:
            changes["reads"] = tuple(self.moved(r) for r in block.reads)
        if writes:
            changes["writes"] = tuple(self.moved(r) for r in block.writes)
        changes["match_buffers"] = tuple(
            attrs.evolve(m, source=self.moved(m.source)) for m in block.match_buffers
        )
        return attrs.evolve(block, **changes)

    def finish_block(self, old_block, block):
        """Inserts the stage (when this block is where it goes) and the allocation
        (when it is the scope)."""
        if old_block is self.loc:
            block = attrs.evolve(block, body=insert_stages(block.body, self.inserts))
        if old_block is self.scope:
            block = attrs.evolve(block, alloc_buffers=(*block.alloc_buffers, self.new))
        return block

    def visit_for(self, op):
        new = self.generic_visit(op)
        if op is self.loc:
            new = attrs.evolve(new, body=insert_stages(new.body, self.inserts))
        return new

    def visit_var(self, var):
        return self.new.data if var is self.old.data else var


class CacheReadRewriter(_CacheRewriter):
    """Consumers (every block when ``consumers`` is empty) load the cache; the
    writer of ``old`` is left alone."""

    def __init__(self, *args, consumers=frozenset()):
        super().__init__(*args)
        self.consumers = consumers
        self.consuming = False

    def visit_block(self, op):
        is_consumer = not self.consumers or id(op) in self.consumers
        if op is not self.scope and any(r.buffer is self.old for r in op.writes):
            return op
        outer, self.consuming = self.consuming, is_consumer
        block = self.generic_visit(op)
        self.consuming = outer
        block = self.finish_block(op, block)
        if op is not self.scope and is_consumer:
            block = self.move_regions(block)
        return block

    def visit_buffer_load(self, op):
        if op.buffer is not self.old or not self.consuming:
            return self.generic_visit(op)
        indices = tuple(self.visit(i) for i in op.indices)
        return attrs.evolve(op, buffer=self.new, indices=self.shift(indices))


class CacheWriteRewriter(_CacheRewriter):
    """The writer (and what is nested in it) stores to and loads from the cache; so
    do the blocks in ``consumers``, which read the cache instead of the buffer."""

    def __init__(self, *args, writer, consumers=frozenset()):
        super().__init__(*args)
        self.writer, self.consumers = writer, consumers
        self.under_writer = False

    def visit_block(self, op):
        if id(op) in self.consumers:
            block = self.generic_visit(op)
            return self.move_regions(block, reads=True, writes=True)
        if op is not self.writer and op is not self.scope and not self.under_writer:
            return op
        outer = self.under_writer
        self.under_writer = outer or op is self.writer
        block = self.generic_visit(op)
        self.under_writer = outer
        block = self.finish_block(op, block)
        if op is not self.scope:
            block = self.move_regions(block, reads=True, writes=True)
        return block

    def visit_buffer_store(self, op):
        op = self.generic_visit(op)
        if op.buffer is not self.old:
            return op
        return attrs.evolve(op, buffer=self.new, indices=self.shift(op.indices))

    def visit_buffer_load(self, op):
        if op.buffer is not self.old:
            return self.generic_visit(op)
        indices = tuple(self.visit(i) for i in op.indices)
        return attrs.evolve(op, buffer=self.new, indices=self.shift(indices))

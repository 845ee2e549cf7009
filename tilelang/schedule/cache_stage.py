"""Where a cache stage goes and what it covers, as TVM decides it.

:func:`~tilelang.schedule.cache.cache_read` and
:func:`~tilelang.schedule.cache.cache_write` place their copy in the innermost
statement sequence that holds both the buffer's writer and the first block that
uses the result (its consumers for cache_read; for cache_write the blocks reading the
written buffer that are not asked to read the cache): right before that consumer,
possibly inside a loop the two share. The stage copies the writer's region relaxed
over the loops between the writer and that place (its own loop stays a variable:
``A[i * 16 + ax0]``); with no writer (an input) the whole buffer, or what the
block's nested ``T.where`` lets it read. A stage at a block (not in a loop) makes a
cache of the region's shape, accessed at indices shifted by the region's start.
"""

from __future__ import annotations

import attrs

from tilelang.arith import const_value, eval_interval, simplify
from tilelang.arith.int_set import const_difference, fold_max, fold_min
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.buffer import Range
from tilelang.ir.functor import StmtExprVisitor, substitute


def declared(block, buffer, writes) -> list:
    """The regions of ``buffer`` in the block's ``T.writes`` (or ``T.reads``)."""
    return [r for r in (block.writes if writes else block.reads) if r.buffer is buffer]


class _LocDetector(StmtExprVisitor):
    """The statement (a loop or the scope block) and position where the stage goes:
    in the innermost sequence holding the writer and, after it, a related block."""

    def __init__(self, scope_block, writer_block, related):
        self.scope, self.writer, self.related = scope_block, writer_block, related
        self.visited_block = self.visited_related = False
        self.loc, self.pos = None, -1

    def visit_seq_stmt(self, op):
        previous = self.visited_block
        self.visited_block = False
        for i, item in enumerate(op.seq):
            if self.pos != -1:
                break
            self.visit(item)
            if self.visited_block and self.visited_related and self.pos == -1:
                self.pos = i
                break
            if self.visited_related:
                break
        self.visited_block = self.visited_block or previous

    def visit_block(self, op):
        if op is self.scope:
            self.visit(op.body)
            if self.visited_related and self.loc is None:
                self.loc = op
                if not self.visited_block and self.pos == -1:
                    self.pos = 0  # an input: before the first consumer
            return
        if op is self.writer:
            self.visited_block = True
        elif id(op) in self.related:
            self.visited_related = True

    def visit_for(self, op):
        self.visit(op.body)
        if self.visited_block and self.visited_related and self.loc is None and self.pos != -1:
            self.loc = op


def detect_location(scope_block, writer_block, related) -> tuple:
    """``(statement, position)``: the stage is inserted into the body of ``statement``
    (the scope block or a loop) at ``position``. ``related`` holds the ids of the
    blocks the stage must precede; without any, the end of the scope's body."""
    if related:
        detector = _LocDetector(scope_block, writer_block, related)
        detector.visit(scope_block)
        if detector.loc is not None:
            return detector.loc, max(detector.pos, 0)
    body = _unwrapped(scope_block.body)
    return scope_block, len(body.seq) if isinstance(body, S.SeqStmt) else 1


#: statements that declare storage for their body: a stage goes inside them, into
#: the sequence they wrap, since it may use what they declare
_WRAPPERS = (S.AllocateConst, S.DeclBuffer)


def _unwrapped(body):
    """The sequence ``body`` holds inside its storage declarations."""
    while isinstance(body, _WRAPPERS):
        body = body.body
    return body


def body_items(body) -> list:
    """The statements of the sequence ``body`` holds (inside its declarations)."""
    body = _unwrapped(body)
    return list(body.seq) if isinstance(body, S.SeqStmt) else [body]


def insert_stages(body, inserts):
    """``body`` with each ``(pos, stage)`` of ``inserts`` inserted before statement
    ``pos`` of its sequence (positions of the original sequence), inside the
    ``T.allocate_const`` / ``T.decl_buffer`` that wrap it."""
    if isinstance(body, _WRAPPERS):
        return attrs.evolve(body, body=insert_stages(body.body, inserts))
    items = list(body.seq) if isinstance(body, S.SeqStmt) else [body]
    for pos, stage in sorted(inserts, key=lambda x: -x[0]):
        items.insert(min(pos, len(items)), stage)
    return S.seq_stmt(*items)


def relax_region(tree, realize, region, top, predicate=None):
    """Per dimension ``(min, extent)`` of ``region`` (of ``realize``'s block) while
    the loops from ``realize`` up to (not including) statement ``top`` run, cut by the
    block's predicate and ``predicate`` (both over its iterators) where they bound an
    index; a side that cannot be bounded is the buffer's edge."""
    bind = {iv.var: v for iv, v in zip(realize.block.iter_vars, realize.iter_values)}
    dom = {}
    for loop in reversed(tree.loops_above(realize)):
        if loop is top:
            break
        dom[loop.loop_var] = Range(loop.min, loop.extent)
    cond = realize.predicate
    if predicate is not None:
        cond = E.And(cond, predicate) if not _true(cond) else predicate
    cond = substitute(cond, bind)
    indices = [simplify(substitute(r.min, bind)) for r in region.region]
    lasts = [simplify(substitute(r.min + r.extent - 1, bind)) for r in region.region]
    boxes = []
    for conjuncts in _disjuncts(cond):
        box = [
            (eval_interval(lo, dom)[0], eval_interval(hi, dom)[1]) for lo, hi in zip(indices, lasts)
        ]
        for c in conjuncts:
            _clip(box, c, indices, lasts)
        boxes.append(box)
    out = []
    for d, extent in enumerate(region.buffer.shape):
        lo = _fold(fold_min, [b[d][0] for b in boxes])
        hi = _fold(fold_max, [b[d][1] for b in boxes])
        zero = E.IntImm(extent.dtype, 0)
        size = const_value(extent)
        if lo is None or hi is None:
            out.append((zero, extent))
            continue
        clo, chi = const_value(lo), const_value(hi)
        if clo is not None and clo < 0:
            lo = zero
        if size is not None and chi is not None and chi > size - 1:
            hi = E.IntImm(extent.dtype, size - 1)
        lo, ext = _cast(lo, extent.dtype), _cast(simplify(hi - lo + 1), extent.dtype)
        out.append((lo, ext))
    return out


def _cast(expr, dtype):
    value = const_value(expr)
    if value is not None:
        return E.IntImm(dtype, value)
    return expr if expr.dtype == dtype else E.Cast(dtype, expr)


def _fold(fn, items):
    if any(x is None for x in items):
        return None
    out = items[0]
    for x in items[1:]:
        out = fn(out, x)
    return out


def _true(cond) -> bool:
    return isinstance(cond, E.IntImm) and bool(cond.value)


def _disjuncts(cond) -> list:
    """``cond`` as alternatives, each a list of conjuncts (Or over And, no deeper)."""
    if isinstance(cond, E.Or):
        return _disjuncts(cond.a) + _disjuncts(cond.b)
    out, stack = [], [cond]
    while stack:
        c = stack.pop()
        if isinstance(c, E.And):
            stack += [c.a, c.b]
        elif not _true(c):
            out.append(c)
    return [out]


_FLIP = {E.LT: E.GT, E.LE: E.GE, E.GT: E.LT, E.GE: E.LE}


def _clip(box, cond, indices, lasts) -> None:
    """Narrows ``box`` by ``index + k < c`` (and the like) for a point dimension."""
    kind = type(cond)
    if kind not in _FLIP:
        return
    for lhs, rhs, how in ((cond.a, cond.b, kind), (cond.b, cond.a, _FLIP[kind])):
        c = const_value(rhs)
        if c is None:
            continue
        for d, index in enumerate(indices):
            if const_difference(index, lasts[d]) != 0:
                continue  # a range, not a point: a bound on its start says too little
            k = const_difference(lhs, index)
            if k is None:
                continue
            lo, hi = box[d]
            dtype = index.dtype
            if how in (E.LT, E.LE) and hi is not None:
                box[d] = (lo, fold_min(hi, E.IntImm(dtype, c - k - (how is E.LT))))
            elif how in (E.GT, E.GE) and lo is not None:
                box[d] = (fold_max(lo, E.IntImm(dtype, c - k + (how is E.GT))), hi)
            return


def nested_predicate(block, buffer, writes):
    """The OR of the predicates (over ``block``'s iterators) of the blocks nested in
    it that access ``buffer``: where the access really happens. None when none does
    or every such block runs unconditionally."""
    found = []

    class _Collect(StmtExprVisitor):
        def visit_block_realize(self, op):
            if declared(op.block, buffer, writes):
                bind = {iv.var: v for iv, v in zip(op.block.iter_vars, op.iter_values)}
                found.append(substitute(op.predicate, bind))
            self.generic_visit(op)

    _Collect().visit(block.body)
    if not found or any(_true(p) for p in found):
        return None
    out = found[0]
    for p in found[1:]:
        out = E.Or(out, p)
    return out

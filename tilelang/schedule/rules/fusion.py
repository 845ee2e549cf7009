"""Fusion rules: inlining cheap elementwise producers, and computing a row's producers
under the row loop of their consumer (softmax's max / exp / sum / normalise, layer
norm's mean / variance / scale), so a row's intermediates stay in cache.
"""

from __future__ import annotations

from tilelang.arith.analyzer import const_value
from tilelang.errors import ScheduleError
from tilelang.ir.functor import StmtExprVisitor
from tilelang.schedule.rules.analysis import BlockInfo


class _Calls(StmtExprVisitor):
    found = False

    def visit_call(self, node):
        self.found = True


def is_cheap(info: BlockInfo) -> bool:
    """No calls (exp, log, if_then_else...): recomputing it per use costs little and
    never reads outside what the stored value read."""
    visitor = _Calls()
    visitor.visit(info.block.body)
    return not visitor.found


class _Conditional(StmtExprVisitor):
    found = False

    def visit_call(self, node):
        if node.op in ("tir.if_then_else", "if_then_else"):
            self.found = True
        self.generic_visit(node)

    def visit_select(self, node):
        self.found = True

    def visit_if_then_else(self, node):
        self.found = True


def is_unconditional(info: BlockInfo) -> bool:
    """No if_then_else, Select or IfThenElse in the body."""
    visitor = _Conditional()
    visitor.visit(info.block.body)
    return not visitor.found


def consumers_of(infos, index: int) -> list[BlockInfo]:
    """The blocks after ``infos[index]`` that read what it writes."""
    written = infos[index].write.buffer if infos[index].write else None
    return [b for b in infos[index + 1 :] if any(a.buffer is written for a in b.reads)]


def inline_cheap_producers(sch, func_name, infos, outputs) -> None:
    """``compute_inline`` each elementwise block that writes an intermediate buffer and
    is cheap or read by one block only (so nothing is computed twice that costs)."""
    for index, info in enumerate(infos[:-1]):
        if info.is_reduction or info.write is None or info.write.buffer in outputs:
            continue
        readers = consumers_of(infos, index)
        if not readers or (len(readers) > 1 and not is_cheap(info)):
            continue
        if any(r.is_reduction and not is_cheap(info) for r in readers):
            continue  # a transcendental per reduction step would be recomputed per use
        try:
            sch.compute_inline(sch.get_block(info.name, func_name))
        except ScheduleError:
            pass


def plan_row_fusion(infos, index: int, done) -> tuple[int, list] | None:
    """``(loop position, producers)`` to compute under the anchor ``infos[index]``: the
    reductions (and the blocks between them) whose results the anchor reads per row.
    The loop position is the deepest loop the anchor's reads of their results move
    along, so everything below it stays whole in the producers."""
    anchor = infos[index]
    if anchor.is_reduction or anchor.write is None:
        return None
    chain, wanted = [], {id(a.buffer) for a in anchor.reads}
    for info in reversed(infos[:index]):
        if info.name in done or info.write is None:
            continue
        if id(info.write.buffer) in wanted:
            chain.append(info)
            wanted |= {id(a.buffer) for a in info.reads}
    chain.reverse()
    reductions = {id(p.write.buffer) for p in chain if p.is_reduction}
    if not reductions:
        return None
    depth = -1
    for access in anchor.reads:
        if id(access.buffer) in reductions:
            moving = [anchor.bound[k] for k, s in access.strides.items() if s != 0]
            depth = max([depth, *moving])
    if depth < 0 or depth >= len(anchor.loops) - 1:
        return None
    return depth, chain


def apply_row_fusion(sch, func_name, anchor: BlockInfo, depth: int, chain, lanes=0) -> list:
    """Compute each block of ``chain`` at the anchor's loop ``depth`` (last first, so
    each lands before its consumers). With ``lanes``, each reduction along a
    contiguous innermost loop is first split into ``lanes`` partial results
    (``rfactor``) so its inner loop is a vectorisable spatial loop. Returns
    ``(handle, info or None)`` per block, in program order, anchor last; the rfactor
    blocks have no info."""
    names = []
    for info in chain:
        rf = _vector_rfactor(sch, func_name, info, lanes) if lanes else None
        if rf is not None:
            names.append((rf, None))
        names.append((sch.get_block(info.name, func_name), info))
    block = sch.get_block(anchor.name, func_name)
    row = sch.get_loops(block)[depth]
    for handle, _ in reversed(names):
        sch.compute_at(handle, row)
    return names + [(block, anchor)]


def _vector_rfactor(sch, func_name, info: BlockInfo, lanes: int):
    """The rfactor block of ``info`` split ``lanes`` wide along its innermost loop, or
    None when that loop is not a reduction loop of contiguous reads (the schedule is
    then unchanged)."""
    if not info.is_reduction or not info.has_init:
        return None
    innermost = len(info.loops) - 1
    bound = [iv for iv in info.reduce if info.loop_of(iv) == innermost]
    extent = info.extents[innermost]
    if not bound or extent is None or extent % lanes or extent < 2 * lanes:
        return None
    if any(a.strides.get(id(bound[0].var)) not in (0, 1) for a in info.reads):
        return None
    block = sch.get_block(info.name, func_name)
    inner = sch.split(sch.get_loops(block)[-1], [None, lanes])[1]
    return sch.rfactor(inner, 0)


def prepare_rfactor(sch, rf):
    """Vector accumulators for an rfactor block under the row loop, first half: the
    partial-result loop innermost (compute_at rebuilds the loops in the block's iterator
    order, which puts it outside) and vectorised. Returns the reduction loop, where
    :func:`finish_rfactor` splits the init off -- after every loop kind is set, since
    parallel/vectorize need each block under the loop complete or a reduction with its
    init (TVM's compact data flow)."""
    loops = sch.get_loops(rf)
    sch.reorder(loops[-1], loops[-2])
    sch.vectorize(loops[-2])
    return loops[-1]


def finish_rfactor(sch, rf, reduction_loop) -> None:
    """Second half: the init moved out of the reduction loop and vectorised, the
    partial results local."""
    init = sch.decompose_reduction(rf, reduction_loop)
    sch.vectorize(sch.get_loops(init)[-1])
    sch.set_scope(rf, 0, "local")


def loop_extent(sch, loop) -> int | None:
    """The constant extent of a loop handle."""
    return const_value(sch.get(loop).extent)

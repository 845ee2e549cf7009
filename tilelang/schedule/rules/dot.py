"""Reductions along a contiguous axis (dot products: matrix-vector products, ``A @ B.T``,
row sums), which :mod:`.tiling` does not take because the output does not move along
the contiguous axis.

A plain loop over such a reduction is one chain of dependent additions: each step
waits for the previous one (the FMA latency), and no two steps share a vector. The
plan splits the contiguous reduction loop ``width`` wide and factors it (``rfactor``)
into ``width`` partial results, computed per output element right under the last
spatial loop::

    for <spatial loops>, jo:             # the first one with >= 2 iterations parallel
        acc_rf[0:rows, 0:width] = 0      # vectorised, a local buffer (registers)
        for ko, <other reduction loops>:
            for ji in unroll(rows):      # rows of the output sharing a vector operand
                for ki in vectorized(width):  # width/lanes independent vector chains
                    acc_rf[ji, ki] += X[.., ko * width + ki] * W[jo * rows + ji, ..]
        acc_rf2[0:rows, 0:lanes] = sum of acc_rf's width/lanes vectors per row
        Y[.., jo * rows + ji] = sum(acc_rf2[ji, 0:lanes])   # short horizontal sums

``rows`` (the "row" iterator ``j``: a spatial iterator that one contiguous operand,
``X``, does not move along, so each of its vector loads serves every row) and ``width``
(a whole number of vectors dividing the loop's extent) are chosen so that
``rows * width / lanes`` independent chains are in flight, within the registers. Reassociating the
sum is what TVM's ``rfactor`` does too (float results may differ in the last bits).
"""

from __future__ import annotations

import attrs

from tilelang.schedule.rules import fusion
from tilelang.schedule.rules.analysis import BlockInfo
from tilelang.schedule.rules.loops import largest_divisor, parallel_outer, unroll_all

#: independent vector accumulators wanted (FMA latency x FMA ports on x86 cores)
MAX_CHAINS = 8
#: at most this many output rows share a vector load
MAX_ROWS = 8


@attrs.frozen
class DotPlan:
    """The decisions, apart from issuing them so a test can read them."""

    width: int  # partial results per output element (a multiple of ``lanes``)
    lanes: int
    row_iter: object | None  # the spatial iterator tiled ``rows`` wide, or None
    rows: int


def plan_dot(info: BlockInfo, machine) -> DotPlan | None:
    """A plan for ``info``, or None when it does not fit: a reduction with its init,
    one store that does not move along the reduction, every spatial loop outside every
    reduction loop, an innermost reduction loop along which every read is contiguous
    or constant, at least two vectors long."""
    if not info.is_reduction or not info.has_init or info.write is None:
        return None
    if None in info.extents or not fusion.is_unconditional(info):
        return None
    if any(info.write.strides.get(id(iv.var)) != 0 for iv in info.reduce):
        return None
    first_reduce = min(info.loop_of(iv) for iv in info.reduce)
    if any(info.loop_of(iv) > first_reduce for iv in info.spatial):
        return None
    innermost = len(info.loops) - 1
    inner = [iv for iv in info.reduce if info.loop_of(iv) == innermost]
    if not inner:
        return None
    key = id(inner[0].var)
    if any(a.strides.get(key) not in (0, 1) for a in info.reads):
        return None
    vector_reads = [a for a in info.reads if a.strides.get(key) == 1]
    if not vector_reads:
        return None  # nothing to load as a vector
    lanes = machine.lanes(info.write.buffer.dtype)
    extent = info.extents[innermost]
    if lanes < 2 or extent % lanes or extent < 2 * lanes:
        return None
    row, rows = None, 1
    candidates = [
        iv
        for iv in info.spatial
        if info.extent_of(iv) > 1 and any(a.strides.get(id(iv.var)) == 0 for a in vector_reads)
    ]
    if candidates:
        row = max(candidates, key=info.loop_of)
        rows = largest_divisor(info.extent_of(row), MAX_ROWS)
        if rows == 1:
            row = None
    # half the registers hold accumulators; at least two steps along the reduction
    vectors = extent // lanes
    chains = min(MAX_CHAINS, vectors // 2, max(1, machine.registers // 2 // rows))
    return DotPlan(lanes * largest_divisor(vectors, chains), lanes, row, rows)


def apply_dot(sch, func_name: str, info: BlockInfo, plan: DotPlan) -> None:
    """Issue ``plan`` (see the module docstring); raises ScheduleError when a step is
    refused (the caller restores its copy)."""
    block = sch.get_block(info.name, func_name)
    loops = sch.get_loops(block)
    spatial = [loops[info.loop_of(iv)] for iv in info.spatial]
    spatial.sort(key=lambda lp: loops.index(lp))
    if plan.row_iter is not None:
        # the row tile becomes the innermost spatial loop, right above the reduction
        row_loop = loops[info.loop_of(plan.row_iter)]
        row_outer, row_inner = sch.split(row_loop, [None, plan.rows])
        innermost = info.loop_of(plan.row_iter) == max(map(info.loop_of, info.spatial))
        spatial = [row_outer if lp is row_loop else lp for lp in spatial] + [row_inner]
        if not innermost:
            sch.reorder(*spatial)
    inner = sch.split(sch.get_loops(block)[-1], [None, plan.width])[1]
    # The partial results go last in their buffer, so a row of them is contiguous.
    partials = [sch.rfactor(inner, -1)]
    # The write-back (the original block) now sums ``width`` partial results; wider
    # than a vector, it first folds them to one vector of sums the same way.
    if plan.width > plan.lanes:
        inner = sch.split(sch.get_loops(block)[-1], [None, plan.lanes])[1]
        partials.append(sch.rfactor(inner, -1))
    depth = len(spatial) - (plan.row_iter is not None)  # loops above the partials
    if depth:
        anchor = sch.get_loops(block)[depth - 1]
        for rf in reversed(partials):  # each lands before its consumer
            sch.compute_at(rf, anchor)
    reductions = []
    for rf in partials:
        # compute_at rebuilds the loops in the rf block's iterator order: the
        # partial-result loop first, then the row tile, then the reduction loops.
        # The partial results go innermost (vectorised) under the unrolled rows.
        rf_loops = sch.get_loops(rf)[depth:]
        tail = rf_loops[:2] if plan.row_iter is not None else rf_loops[:1]
        rest = rf_loops[len(tail) :]
        sch.reorder(*rest, *reversed(tail))
        sch.vectorize(tail[0])
        unroll_all(sch, tail[1:])
        reductions.append(rest[0])
    outer = sch.get_loops(block)[:depth]
    extents = [fusion.loop_extent(sch, lp) for lp in outer]
    parallel_outer(sch, outer, extents, work=info.work, lanes=plan.lanes)
    for rf, loop in zip(partials, reductions):  # inits split off once loop kinds are set
        fusion.finish_rfactor(sch, rf, loop)

"""Reductions along a contiguous axis (dot products: matrix-vector products, ``A @ B.T``,
row sums), which :mod:`.tiling` does not take because the output does not move along
the contiguous axis.

A plain loop over such a reduction is one chain of dependent additions: each step
waits for the previous one (the FMA latency), and no two steps share a vector. The
plan splits the contiguous reduction loop ``width`` wide and factors it (``rfactor``)
into ``width`` partial results, computed per output element right under the last
spatial loop::

    for <spatial loops>:                 # the first one with >= 2 iterations parallel
        acc_rf[0:width] = 0              # vectorised, a local buffer (registers)
        for ko, <other reduction loops>:
            for ki in vectorized(width):  # width/lanes independent vector chains
                acc_rf[ki] += A[.., ko * width + ki] * B[.., ko * width + ki]
        acc_rf2[0:lanes] = sum of acc_rf's width/lanes vectors  # vector adds
        Y[...] = sum(acc_rf2[0:lanes])   # one short horizontal reduction per element

``width`` is a whole number of vectors dividing the loop's extent, up to
``MAX_CHAINS`` of them, so several chains are in flight at once. Reassociating the
sum is what TVM's ``rfactor`` does too (float results may differ in the last bits).
"""

from __future__ import annotations

from tilelang.schedule.rules import fusion
from tilelang.schedule.rules.analysis import BlockInfo
from tilelang.schedule.rules.loops import largest_divisor, parallel_outer

#: independent vector accumulators (FMA latency x FMA ports on current x86 cores)
MAX_CHAINS = 8


def dot_width(info: BlockInfo, machine) -> int:
    """The number of partial results for ``info``, or 0 when the plan does not fit: a
    reduction with its init, one store that does not move along the reduction, every
    spatial loop outside every reduction loop, an innermost reduction loop along which
    every read is contiguous or constant, at least two vectors long."""
    if not info.is_reduction or not info.has_init or info.write is None:
        return 0
    if None in info.extents or not fusion.is_unconditional(info):
        return 0
    if any(info.write.strides.get(id(iv.var)) != 0 for iv in info.reduce):
        return 0
    first_reduce = min(info.loop_of(iv) for iv in info.reduce)
    if any(info.loop_of(iv) > first_reduce for iv in info.spatial):
        return 0
    innermost = len(info.loops) - 1
    inner = [iv for iv in info.reduce if info.loop_of(iv) == innermost]
    if not inner:
        return 0
    key = id(inner[0].var)
    if any(a.strides.get(key) not in (0, 1) for a in info.reads):
        return 0
    if all(a.strides.get(key) == 0 for a in info.reads):
        return 0  # nothing to load as a vector
    lanes = machine.lanes(info.write.buffer.dtype)
    extent = info.extents[innermost]
    if lanes < 2 or extent % lanes or extent < 2 * lanes:
        return 0
    # at least two steps along the reduction, or there is no chain to split
    vectors = extent // lanes
    return lanes * largest_divisor(vectors, min(MAX_CHAINS, vectors // 2))


def apply_dot(sch, func_name: str, info: BlockInfo, width: int, lanes: int) -> None:
    """Issue the plan (see the module docstring); raises ScheduleError when a step is
    refused (the caller restores its copy)."""
    block = sch.get_block(info.name, func_name)
    inner = sch.split(sch.get_loops(block)[-1], [None, width])[1]
    # The partial results go last in their buffer, so a row of them is contiguous.
    partials = [sch.rfactor(inner, -1)]
    # The write-back (the original block) now sums ``width`` partial results; wider
    # than a vector, it first folds them to one vector of sums the same way.
    if width > lanes:
        inner = sch.split(sch.get_loops(block)[-1], [None, lanes])[1]
        partials.append(sch.rfactor(inner, -1))
    spatial = len(info.spatial)
    if spatial:
        row = sch.get_loops(block)[spatial - 1]
        for rf in reversed(partials):  # each lands before its consumer
            sch.compute_at(rf, row)
    reductions = []
    for rf in partials:
        # compute_at rebuilds the loops in the rf block's iterator order, which puts
        # the partial-result loop (its first iterator) outermost: move it innermost.
        loops = sch.get_loops(rf)[spatial:]
        sch.reorder(*loops[1:], loops[0])
        sch.vectorize(loops[0])
        reductions.append(loops[1])
    outer = sch.get_loops(block)[:spatial]
    parallel_outer(sch, outer, [fusion.loop_extent(sch, lp) for lp in outer])
    for rf, loop in zip(partials, reductions):  # inits split off once loop kinds are set
        fusion.finish_rfactor(sch, rf, loop)

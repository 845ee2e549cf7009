"""Blocks scheduled on their own (no tiling, row fusion or dot plan fits them):
elementwise blocks, transposes, pooling and other reductions the plans leave.

The decisions are kept in an :class:`AlonePlan` apart from issuing them, as the tiling
plan's are (:mod:`.tiling`), so that the tuner's rules space can draw them
(:mod:`tilelang.tune.space_rules`): the tile of a transpose, the vector width of the
innermost loop, whether the outer loop runs in parallel, and whether the short
reduction loops of a pooling window are unrolled. :func:`plan_alone` gives the rules'
own choices.
"""

from __future__ import annotations

import attrs

from tilelang.schedule.rules import fusion
from tilelang.schedule.rules.analysis import BlockInfo, unit_or_invariant, vector_iter
from tilelang.schedule.rules.loops import (
    MIN_PARALLEL_WORK,
    largest_divisor,
    parallel_outer,
    unroll_all,
    vector_tile,
    vectorize_innermost,
)

#: the reduction loops unrolled by ``unroll_reduce`` together run at most this often
MAX_UNROLLED_WINDOW = 16

#: bytes of a transposed read's contiguous run per tile: a few cache lines in a row,
#: which the hardware prefetcher follows (one line per row, a 16x16 float tile, was
#: 1.7x slower on a 2048x2048 transpose than 64 rows by 16 columns)
TRANSPOSE_RUN_BYTES = 256


@attrs.frozen
class AlonePlan:
    """``transpose_tile``: the elements of a transposing read's contiguous run in one
    tile, whose other side is one vector of the output, vectorised (0: not tiled);
    ``vector_width``: the elements of the innermost loop run as one vector
    (the loop is split to that width first when longer; 0: not vectorised);
    ``parallel``: the outermost loop of two or more iterations runs in parallel;
    ``unroll_reduce``: a reduction's innermost reduction loops of at most
    MAX_UNROLLED_WINDOW iterations in all (a pooling window) are unrolled."""

    transpose_tile: int
    vector_width: int
    parallel: bool
    unroll_reduce: bool = False


def plan_alone(info: BlockInfo, machine) -> AlonePlan:
    """The rules' choices for ``info``: a transpose tiled to a run of
    TRANSPOSE_RUN_BYTES of its read by one vector of the output, else the innermost
    loop vectorised one vector at a time when it is longer than four vectors (whole
    when shorter; spatial blocks only), parallel when the block has MIN_PARALLEL_WORK
    vector iterations (iterations over the lanes it runs at)."""
    lanes = machine.lanes(info.write.buffer.dtype) if info.write is not None else 1
    extent = innermost_extent(info)
    width = 0  # a reduction's innermost loop is not vectorised (see vectorize_block)
    if extent is not None and not info.is_reduction:
        width = vector_tile(extent, lanes, 1) if extent > 4 * lanes else extent
    run = transpose_run(info, lanes)
    vectorised = fusion.is_unconditional(info) and (run > 1 or width > 1)
    step = (lanes if run > 1 else min(lanes, width)) if vectorised else 1
    work = info.work
    return AlonePlan(run, width, work is None or work // step >= MIN_PARALLEL_WORK)


def transpose_run(info: BlockInfo, lanes: int) -> int:
    """The rules' run of a transposing read per tile (see :func:`tile_transposed`):
    the largest divisor of its contiguous extent up to TRANSPOSE_RUN_BYTES (at least a
    vector's elements); 0 when no read transposes or the tile would not fit."""
    found = _transposing_read(info)
    if found is None:
        return 0
    read, (rows, cols), _ = found
    if cols % lanes or cols <= lanes:
        return 0
    run = largest_divisor(rows, max(lanes, TRANSPOSE_RUN_BYTES * 8 // read.buffer.dtype.bits))
    return run if run >= 2 else 0


def innermost_extent(info: BlockInfo) -> int | None:
    """The extent of the loop a spatial block has innermost once the rules reorder it
    (the contiguous output iterator's, else its last loop's)."""
    vec = vector_iter(info)
    if not info.is_reduction and vec is not None:
        return info.extent_of(vec)
    return info.extents[-1] if info.extents else None


def schedule_alone(sch, func_name, info, machine, plan: AlonePlan | None = None) -> None:
    """Loop order with the contiguous output iterator innermost (spatial blocks), a
    tiled transpose or a vectorised inner loop, a parallel outer loop (``plan``'s
    choices; default :func:`plan_alone`'s)."""
    plan = plan or plan_alone(info, machine)
    block = sch.get_block(info.name, func_name)
    loops = sch.get_loops(block)
    vec = vector_iter(info)
    lanes = machine.lanes(info.write.buffer.dtype) if info.write is not None else 1
    if not info.is_reduction and vec is not None:
        pos = info.loop_of(vec)
        if pos != len(loops) - 1:
            order = [lp for p, lp in enumerate(loops) if p != pos] + [loops[pos]]
            sch.reorder(*order)
        tiled = plan.transpose_tile > 1 and tile_transposed(
            sch, block, info, vec, plan.transpose_tile, lanes
        )
        if not tiled and plan.vector_width > 1:
            vectorize_block(sch, block, info, machine, innermost=pos, width=plan.vector_width)
    loops = sch.get_loops(block)
    if info.is_reduction:
        first_reduce = min(info.loop_of(iv) for iv in info.reduce)
        outer = loops[:first_reduce]
        if plan.unroll_reduce:
            _unroll_window(sch, loops, info)
    else:
        outer = loops[:-1] if len(loops) > 1 else loops
    if plan.parallel:  # the plan weighed the work (plan_alone): no second threshold
        extents = [fusion.loop_extent(sch, lp) for lp in outer]
        parallel_outer(sch, outer, extents)


def _unroll_window(sch, loops, info) -> None:
    """Unroll the innermost run of reduction loops (a pooling window) while their
    iterations multiply to at most MAX_UNROLLED_WINDOW."""
    reduce_pos = {info.loop_of(iv) for iv in info.reduce}
    window, product = [], 1
    for p in range(len(loops) - 1, -1, -1):
        extent = info.extents[p]
        if p not in reduce_pos or extent is None or product * extent > MAX_UNROLLED_WINDOW:
            break
        product *= extent
        window.append(loops[p])
    unroll_all(sch, window)


def vectorize_block(sch, block, info, machine, innermost=None, width=None) -> bool:
    """Vectorise the block's innermost loop when it is spatial, every access moves by
    0 or 1 element along it, and nothing in the body is conditional (a vector lane
    must never load what its condition guards against). ``width``: the vector's
    elements (default: :func:`.loops.vectorize_innermost`'s choice)."""
    if info.write is None or info.is_reduction or not fusion.is_unconditional(info):
        return False
    loops = sch.get_loops(block)
    innermost = len(info.loops) - 1 if innermost is None else innermost
    # The innermost loop still binds the iterator the block's last loop bound (the
    # rules only split it or move a contiguous iterator there first).
    bound = [iv for iv in info.iter_vars if info.loop_of(iv) == innermost]
    if bound and not unit_or_invariant(info, bound[0]):
        return False
    extent = fusion.loop_extent(sch, loops[-1])
    if extent is None:
        return False
    lanes = machine.lanes(info.write.buffer.dtype)
    return vectorize_innermost(sch, loops[-1], lanes, extent, width)


def tile_transposed(sch, block, info, vec, run: int, lanes: int) -> bool:
    """A read that strides along the output's contiguous iterator but is contiguous
    along another (a transpose): the other iterator's loop is tiled to ``run``
    elements of the read, the contiguous one to a vector (``lanes``), which is
    vectorised (a gather from the read, a vector store of the output). A tile's lines
    stay in cache while it is read across. True when it tiled and vectorised."""
    found = _transposing_read(info)
    if found is None:
        return False
    _, (rows, cols), other = found
    if cols % lanes or cols <= lanes or rows % run or run > rows:
        return False
    loops = sch.get_loops(block)
    # where the other iterator's loop is now that ``vec``'s loop is innermost
    position = info.loop_of(other)
    position -= position > info.loop_of(vec)
    if position != len(loops) - 2:
        return False
    col_o, col_i = sch.split(loops[-1], [None, lanes])
    if run < rows:
        row_o, row_i = sch.split(loops[-2], [None, run])
        sch.reorder(row_o, col_o, row_i, col_i)
    else:  # the whole extent is one run
        sch.reorder(col_o, loops[-2], col_i)
    if not fusion.is_unconditional(info):
        return False  # tiled, not vectorised (vectorize_block refuses it too)
    sch.vectorize(col_i)
    return True


def _transposing_read(info: BlockInfo):
    """``(read, (rows, cols), other)``: the first read that strides along the output's
    contiguous iterator but is contiguous along ``other``, with the extents of
    ``other`` (rows) and of the contiguous output iterator (cols); None when no read
    transposes or an extent is unknown."""
    vec = vector_iter(info)
    if vec is None or info.is_reduction:
        return None
    for read in info.reads:
        if read.strides.get(id(vec.var)) in (0, 1):
            continue
        other = [iv for iv in info.spatial if iv is not vec and read.strides.get(id(iv.var)) == 1]
        if other:
            extents = (info.extent_of(other[0]), info.extent_of(vec))
            return None if None in extents else (read, extents, other[0])
    return None


def transposed_extents(info: BlockInfo) -> tuple[int, int] | None:
    """The extents of the two loops :func:`tile_transposed` would tile (the read's
    contiguous iterator's and the output's contiguous one), or None when no read
    transposes."""
    found = _transposing_read(info)
    return None if found is None else found[1]


__all__ = [
    "AlonePlan",
    "plan_alone",
    "schedule_alone",
    "vectorize_block",
    "tile_transposed",
    "transposed_extents",
]

"""Multi-level tiling with a register-resident accumulator, for reductions whose output
is contiguous along a spatial iterator (matmul, batch matmul, convolutions).

The plan is the shape of the hand schedule in samples/matmul_1024_tuned.tir::

    for <outer spatial tiles>:            # the first one with >= 2 tiles is parallel
        Y_local = 0                       # rows x vec tile, vectorised (init block)
        for <reduction loops>:            # the innermost split by 4 and unrolled
            for ri in unroll(rows):       # "row" iterator: some operand ignores it
                for vi in vectorized(vec):  # contiguous output iterator
                    Y_local[ri, vi] += ...
        Y[...] = epilogue(Y_local[...])   # elementwise consumers inlined here

``rows x vec`` is sized so the accumulator stays in vector registers: ``vec`` is one or
two vectors of the target (with rows, never a width between whole registers: LLVM
splits such an accumulator into 4-lane pieces), ``rows`` as many as the remaining
registers allow (at most 8, or 16 for a tile one vector wide). Every step is a
schedule primitive, so the decisions show in the trace.
"""

from __future__ import annotations

import attrs

from tilelang.schedule.rules.analysis import BlockInfo, vector_iter
from tilelang.schedule.rules.loops import largest_divisor, parallel_outer, unroll_all, vector_tile

#: the part of the L1 data cache the vector operand's slice may take
L1_BYTES = 32 * 1024


@attrs.frozen
class TilePlan:
    """The decisions, kept apart from issuing them so a test can read them."""

    vec_iter: object
    vec_tile: int
    row_iter: object | None
    row_tile: int
    k_unroll: int
    k_block: int = 0  # > 0: the large-operand plan (see apply_tiling)
    unroll_rows: bool = True  # unroll the row loop ourselves (else LLVM may)
    lanes: int = 1  # elements per vector instruction along vec_iter
    # where the accumulator is written back: under the innermost outer spatial loop
    # (0), or that many outer loops further out (a larger local tile, written back
    # less often; see outer_spatial_extents)
    write_back_depth: int = 0
    # copy the operand that ignores the row iterator (a matmul's B) into a panel per
    # vector tile, as the hand schedule packs B: the vector tiles' loop moves above the
    # row tiles' and the copy is computed under it, so each panel is read contiguously
    # by every row tile (not for the blocked plan; the rules never do, the tuner's
    # rules space may: 1024^3 on one thread, 8.7 ms packed against 13.2)
    pack: bool = False


def plan_tiling(info: BlockInfo, machine) -> TilePlan | None:
    """A plan for ``info`` or None when the block does not fit the pattern: a reduction
    with a single store whose output is contiguous along a spatial iterator, along
    which every operand is either contiguous or constant."""
    if not info.is_reduction or not info.has_init or info.write is None or None in info.extents:
        return None
    vec = vector_iter(info)
    if vec is None:
        return None
    key = id(vec.var)
    if any(a.strides.get(key) not in (0, 1) for a in info.accesses):
        return None
    if any(info.write.strides.get(id(r.var)) != 0 for r in info.reduce):
        return None
    lanes = machine.lanes(info.write.buffer.dtype)
    vec_extent = info.extent_of(vec)
    vec_tile = vector_tile(vec_extent, lanes, 2) if vec_extent >= lanes else vec_extent
    # The row iterator: a spatial iterator that the contiguous ("vector") operands do
    # not move along, so one vector load serves every row of the tile. The innermost
    # such loop keeps the rows' other operands close together.
    vector_reads = [a for a in info.reads if a.strides.get(key) == 1]
    candidates = [
        iv
        for iv in info.spatial
        if iv is not vec
        and all(a.strides.get(id(iv.var)) == 0 for a in vector_reads)
        and info.extent_of(iv) > 1
    ]
    row, row_tile = None, 1
    if candidates and vec_tile > lanes and vec_tile % lanes:
        # An accumulator wider than a register but no whole number of them is split
        # by LLVM into 4-lane pieces (28 floats: 7 xmm registers a row), so a tile of
        # rows spills: a 3x3 convolution 28 wide by 8 rows ran 3x slower than 14
        # wide. With rows, one register's width; alone, the wider tile is kept (a
        # depthwise convolution, one row, 28 wide: 0.08 ms, 14 wide: 0.10).
        vec_tile = largest_divisor(vec_extent, lanes)
    vectors = -(-vec_tile // lanes)
    if candidates:
        row = max(candidates, key=info.loop_of)
        budget = max(1, (machine.registers - 4) // vectors)
        # up to 8 rows; a tile one vector wide takes up to 16, the accumulators of an
        # 8-row tile two vectors wide (a 3x3 convolution 14 wide: 1.6 ms against 1.8)
        row_tile = largest_divisor(info.extent_of(row), min(max(8, 16 // vectors), budget))
        if row_tile == 1:
            row = None
    inner_reduce = max(info.reduce, key=info.loop_of)
    k_extent = info.extent_of(inner_reduce)
    # Unrolling costs compile time in the Python pipeline: only where the work is large.
    work = 1
    for extent in info.extents:
        work *= extent
    large = work >= 1 << 24
    k_unroll = 4 if k_extent % 4 == 0 and k_extent > 4 and large else 1
    # When one reduction's slice of the vector operand (k x vec tile) outgrows L1, the
    # reduction is blocked so that slice stays in L1 while the row tiles sweep it.
    k_block = 0
    if row is not None and len(info.reduce) == 1 and k_extent * vec_tile * 4 > L1_BYTES:
        k_block = largest_divisor(k_extent, max(k_unroll, L1_BYTES // (vec_tile * 4)))
        if k_block in (1, k_extent):
            k_block = 0
    lanes = min(lanes, vec_tile)
    return TilePlan(vec, vec_tile, row, row_tile, k_unroll, k_block, large, lanes)


def apply_tiling(sch, func_name: str, info: BlockInfo, plan: TilePlan, consumers) -> None:
    """Issue ``plan`` on the block; ``consumers`` are the names of elementwise blocks
    reading its output, inlined into the write-back when they allow it. Raises
    ScheduleError when a required step is refused (the caller restores its copy)."""
    from tilelang.errors import ScheduleError

    block = sch.get_block(info.name, func_name)
    loops = sch.get_loops(block)
    position = {id(iv.var): info.loop_of(iv) for iv in info.iter_vars}
    vec_pos = position[id(plan.vec_iter.var)]
    row_pos = position[id(plan.row_iter.var)] if plan.row_iter is not None else None

    outer, inner = {}, {}
    if plan.vec_tile < info.extents[vec_pos]:
        outer[vec_pos], inner[vec_pos] = sch.split(loops[vec_pos], [None, plan.vec_tile])
    else:
        inner[vec_pos] = loops[vec_pos]
    if row_pos is not None:
        if plan.row_tile < info.extents[row_pos]:
            outer[row_pos], inner[row_pos] = sch.split(loops[row_pos], [None, plan.row_tile])
        else:
            inner[row_pos] = loops[row_pos]
    if plan.k_block:
        _apply_blocked(sch, block, loops, info, plan, outer, inner, vec_pos, row_pos)
        return
    if plan.pack and (packed_operand(info, plan) is None or not {vec_pos, row_pos} <= set(outer)):
        raise ScheduleError(f"tiling {info.name}: nothing to pack (see TilePlan.pack)")
    reduce_pos = sorted(position[id(iv.var)] for iv in info.reduce)
    k_inner = None
    reduce_loops = [loops[p] for p in reduce_pos]
    if plan.k_unroll > 1:
        k_outer, k_inner = sch.split(reduce_loops[-1], [None, plan.k_unroll])
        reduce_loops[-1] = k_outer
    spatial_outer, spatial_outer_extents = [], []
    for p, loop in enumerate(loops):
        if p in reduce_pos:
            continue
        if p in outer:
            spatial_outer.append(outer[p])
            tile = plan.vec_tile if p == vec_pos else plan.row_tile
            spatial_outer_extents.append(info.extents[p] // tile)
        elif p not in inner:
            spatial_outer.append(loop)
            spatial_outer_extents.append(info.extents[p])
    if plan.pack:  # the vector tiles' loop right above the row tiles'
        at = spatial_outer.index(outer[row_pos])
        moved = spatial_outer.index(outer[vec_pos])
        if moved > at:
            spatial_outer.insert(at, spatial_outer.pop(moved))
            spatial_outer_extents.insert(at, spatial_outer_extents.pop(moved))
    tile_loops = [inner[row_pos]] if row_pos is not None else []
    tile_loops.append(inner[vec_pos])
    order = spatial_outer + reduce_loops + ([k_inner] if k_inner is not None else []) + tile_loops
    sch.reorder(*order)

    write_back = sch.cache_write(block, 0, "local")
    if spatial_outer:
        sch.reverse_compute_at(write_back, spatial_outer[-1 - plan.write_back_depth])
    for name in consumers:
        try:
            sch.reverse_compute_inline(sch.get_block(name, func_name))
        except ScheduleError:
            break
    if plan.pack:
        _pack(sch, block, packed_operand(info, plan), outer[vec_pos])
    # Loop kinds first, then the init is split off: parallel/vectorize need every block
    # under the loop to be complete or a reduction with its init (TVM's compact data
    # flow), which the update block stops being once decomposed.
    sch.vectorize(inner[vec_pos])
    rows = [inner[row_pos]] if row_pos is not None and plan.unroll_rows else []
    unroll_all(sch, rows + ([k_inner] if k_inner else []))
    # Short reduction loops right above the tile (a convolution's 3x3 window) are
    # unrolled too: their bounds would otherwise cut the FMA stream every few steps.
    if k_inner is None:
        small, product = [], 1
        for p in reversed(reduce_pos):
            if info.extents[p] > 4 or product * info.extents[p] > 16:
                break
            product *= info.extents[p]
            small.append(loops[p])
        if len(small) < len(reduce_pos):  # keep one rolled loop around the tile
            unroll_all(sch, small)
    parallel_outer(sch, spatial_outer, spatial_outer_extents, work=info.work, lanes=plan.lanes)
    init = sch.decompose_reduction(block, reduce_loops[0])
    _vectorize_tile(sch, init, len(tile_loops) if plan.unroll_rows else 1)
    _vectorize_tile(sch, write_back, len(tile_loops) if plan.unroll_rows else 1)


def packed_operand(info: BlockInfo, plan: TilePlan):
    """The buffer :attr:`TilePlan.pack` copies: an operand read contiguously along the
    vector iterator and not moving along the row iterator; None when there is none."""
    if plan.row_iter is None:
        return None
    vec, row = id(plan.vec_iter.var), id(plan.row_iter.var)
    for access in info.reads:
        if access.strides.get(vec) == 1 and access.strides.get(row) == 0:
            return access.buffer
    return None


def _pack(sch, block, buffer, vector_outer) -> None:
    """``buffer``'s reads by ``block`` go through a copy computed under
    ``vector_outer`` (one panel per vector tile), its innermost loop vectorised."""
    from tilelang.errors import ScheduleError

    reads = [region.buffer for region in sch.get(block).reads]
    packed = sch.cache_read(block, reads.index(buffer), "global")
    sch.compute_at(packed, vector_outer)
    try:
        sch.vectorize(sch.get_loops(packed)[-1])
    except ScheduleError:
        pass  # a panel row too short or irregular to vectorise: copied element-wise


def outer_spatial_extents(info: BlockInfo, plan: TilePlan) -> list[int]:
    """The extents of the spatial loops :func:`apply_tiling` keeps outside the
    reduction (outermost first; not for the blocked plan): each spatial loop, the
    vector and row loops divided by their tiles, those a tile covers whole left out."""
    reduce = {info.loop_of(iv) for iv in info.reduce}
    tiles = {info.loop_of(plan.vec_iter): plan.vec_tile}
    if plan.row_iter is not None:
        tiles[info.loop_of(plan.row_iter)] = plan.row_tile
    out = []
    for p, extent in enumerate(info.extents):
        if p in reduce:
            continue
        if p in tiles:
            if tiles[p] < extent:
                out.append(extent // tiles[p])
        else:
            out.append(extent)
    return out


def _apply_blocked(sch, block, loops, info, plan, outer, inner, vec_pos, row_pos) -> None:
    """The large-operand plan: ``for <other spatial>, vec_o, k_o, row_o, k_i, row_i,
    vec_i`` accumulating in the output itself (the tile's address does not change along
    k_i, so the compiler keeps it in registers there); the vector operand's
    ``k_block x vec`` slice is reused from L1 by every row tile."""
    k_pos = info.loop_of(info.reduce[0])
    k_outer, k_inner = sch.split(loops[k_pos], [None, plan.k_block])
    k_unrolled = None
    if plan.k_unroll > 1:
        k_inner, k_unrolled = sch.split(k_inner, [None, plan.k_unroll])
    others = [(p, lp) for p, lp in enumerate(loops) if p not in (k_pos, vec_pos, row_pos)]
    head = [lp for _, lp in others] + ([outer[vec_pos]] if vec_pos in outer else [])
    head_extents = [info.extents[p] for p, _ in others]
    if vec_pos in outer:
        head_extents.append(info.extents[vec_pos] // plan.vec_tile)
    middle = [k_outer] + ([outer[row_pos]] if row_pos in outer else []) + [k_inner]
    tail = ([k_unrolled] if k_unrolled is not None else []) + [inner[row_pos], inner[vec_pos]]
    sch.reorder(*head, *middle, *tail)
    sch.vectorize(inner[vec_pos])  # loop kinds before the init is split off (see above)
    rows = [inner[row_pos]] if plan.unroll_rows else []
    unroll_all(sch, rows + ([k_unrolled] if k_unrolled is not None else []))
    parallel_outer(sch, head, head_extents, work=info.work, lanes=plan.lanes)
    init = sch.decompose_reduction(block, k_outer)
    _vectorize_tile(sch, init, 2 if plan.unroll_rows else 1)


def _vectorize_tile(sch, block, depth: int) -> None:
    """The init and write-back blocks have the tile's loops innermost: vectorise the
    last and unroll the one above it (when there is a row loop)."""
    from tilelang.errors import ScheduleError

    loops = sch.get_loops(block)
    try:
        sch.vectorize(loops[-1])
        if depth > 1 and len(loops) >= 2:
            sch.unroll(loops[-2])
    except ScheduleError:
        pass

"""Matmul-like blocks: SEED §6's shared-memory + register tiling.

A block ``C[.., i, j] += A[.., i, k] * B[.., k, j]`` (any leading batch iterators, the
operands in either layout) is tiled as ``samples/cuda_matmul.py``'s ``tiled_shared``
writes by hand: each thread block computes a ``tile x tile`` tile of C with
``threads x threads`` threads, each thread a ``micro x micro`` tile accumulated in
registers (a ``local`` buffer, its loops unrolled); per step of ``k_tile`` the block
fetches the A and B panels into ``shared`` memory, all threads cooperating (the fused
panel loop split over ``threadIdx.y``/``threadIdx.x``); ThreadSync adds the barriers.
Batch iterators join the ``blockIdx.y`` loop.
"""

from __future__ import annotations

import attrs

#: (tile, threads) candidates, largest first: 8x8 micro tiles while they fit
TILES = ((128, 16), (64, 8), (32, 8), (16, 8), (16, 4), (8, 4))
K_TILES = (8, 4, 2, 1)


@attrs.frozen
class MatmulPlan:
    """Where the ``i``, ``j`` and ``k`` loops are, and the tile sizes."""

    i: int
    j: int
    k: int
    tile: int
    threads: int
    k_tile: int


def _moves(access, iv) -> bool:
    return access.strides.get(id(iv.var)) != 0


def matmul_axes(info):
    """``(i, j, k, a, b)`` when ``info`` is a matmul-like block (see the module
    docstring): its row, column and reduction iterators and the accesses of the operand
    that moves with ``i`` and ``k`` (``a``) and with ``k`` and ``j`` (``b``); else None."""
    if not info.has_init or info.write is None or len(info.reduce) != 1:
        return None
    if len(info.spatial) < 2 or len(info.reads) != 2:
        return None
    k = info.reduce[0]
    positions = [info.loop_of(iv) for iv in info.iter_vars]
    if info.loop_of(k) != max(positions):
        return None  # the reduction loop must be innermost as written
    i, j = sorted(info.spatial, key=info.loop_of)[-2:]
    if any(a.strides.get(id(iv.var)) is None for a in info.accesses for iv in info.iter_vars):
        return None
    if _moves(info.write, k) or not (_moves(info.write, i) and _moves(info.write, j)):
        return None
    a, b = info.reads
    if _moves(a, j) and not _moves(a, i):
        a, b = b, a
    if not (_moves(a, i) and _moves(a, k) and not _moves(a, j)):
        return None
    if not (_moves(b, j) and _moves(b, k) and not _moves(b, i)):
        return None
    return i, j, k, a, b


def plan_matmul(info, limits) -> MatmulPlan | None:
    """A plan when ``info`` is a matmul-like block (see the module docstring) whose
    ``i``/``j`` extents a tile divides, within ``limits``; None otherwise."""
    axes = matmul_axes(info)
    if axes is None:
        return None
    i, j, k, a, _ = axes
    ei, ej, ek = info.extent_of(i), info.extent_of(j), info.extent_of(k)
    if None in (ei, ej, ek):
        return None
    bytes_per = max(1, a.buffer.dtype.bits // 8)
    for tile, threads in TILES:
        if ei % tile or ej % tile or threads * threads > limits.max_threads_per_block:
            continue
        for k_tile in K_TILES:
            shared = 2 * tile * k_tile * bytes_per
            if ek % k_tile == 0 and shared <= limits.max_shared_memory_per_block:
                return MatmulPlan(
                    info.loop_of(i), info.loop_of(j), info.loop_of(k), tile, threads, k_tile
                )
    return None


def apply_matmul(sch, block, info, plan: MatmulPlan) -> None:
    """The tiling of the module docstring."""
    micro = plan.tile // plan.threads
    loops = sch.get_loops(block)
    batch = [lp for p, lp in enumerate(loops) if p not in (plan.i, plan.j, plan.k)]
    local = sch.cache_write(block, 0, "local")
    i0, i1, i2 = sch.split(loops[plan.i], [None, plan.threads, micro])
    j0, j1, j2 = sch.split(loops[plan.j], [None, plan.threads, micro])
    k0, k1 = sch.split(loops[plan.k], [None, plan.k_tile])
    sch.reorder(*batch, i0, j0, i1, j1, k0, k1, i2, j2)
    sch.reverse_compute_at(local, j1)
    rows = sch.fuse(*batch, i0) if batch else i0
    sch.bind(rows, "blockIdx.y")
    sch.bind(j0, "blockIdx.x")
    sch.bind(i1, "threadIdx.y")
    sch.bind(j1, "threadIdx.x")
    for operand in info.reads:  # both operands, fetched by all threads of the block
        reads = [r.buffer for r in sch.get(block).reads]
        fetch = sch.cache_read(block, reads.index(operand.buffer), "shared")
        sch.compute_at(fetch, k0)
        fetch_loops = sch.get_loops(fetch)[-2:]
        fused = sch.fuse(*fetch_loops)
        _, ty, tx = sch.split(fused, [None, plan.threads, plan.threads])
        sch.bind(ty, "threadIdx.y")
        sch.bind(tx, "threadIdx.x")
    for loop in (k1, i2, j2):
        sch.unroll(loop)
    init = sch.decompose_reduction(block, k0)
    for loop in sch.get_loops(init)[-2:]:
        sch.unroll(loop)
    for loop in sch.get_loops(local)[-2:]:
        sch.unroll(loop)


__all__ = ["MatmulPlan", "matmul_axes", "plan_matmul", "apply_matmul"]

"""One thread per output element: the fused spatial loops split over blocks and
threads (``blockIdx.x`` x ``threadIdx.x``), with a short unit-stride vector of
elements per thread where every access moves by 0 or 1 element along the innermost
loop. A reduction keeps its reduction loops serial inside the thread and accumulates
in a ``local`` buffer (a register), written back once.

This is the schedule for elementwise/injective blocks and the fallback for every
reduction the other rules do not take, so any block of plain loops builds for CUDA.
"""

from __future__ import annotations

from tilelang.errors import ScheduleError
from tilelang.schedule.rules.analysis import unit_or_invariant
from tilelang.schedule.rules.fusion import is_unconditional

#: threads per block for one-element-per-thread kernels (a few warps: enough to hide
#: latency, small enough that small tensors still spread over several SMs)
THREADS = 256
#: elements one thread handles along a unit-stride innermost loop (16 bytes of fp32)
VECTOR_BYTES = 16


def spatial_first(sch, block, info):
    """Loops of ``block`` reordered so that every spatial loop is outside every
    reduction loop; returns (spatial loops, reduction loops)."""
    loops = sch.get_loops(block)
    spatial = sorted(info.loop_of(iv) for iv in info.spatial)
    reduce = sorted(info.loop_of(iv) for iv in info.reduce)
    if spatial and reduce and max(spatial) > min(reduce):
        sch.reorder(*[loops[p] for p in spatial + reduce])
        loops = sch.get_loops(block)
    return loops[: len(spatial)], loops[len(spatial) :]


def _product(values):
    total = 1
    for v in values:
        if v is None:
            return None
        total *= v
    return total


def bind_threads(sch, block, info, limits, vector=True, threads=THREADS) -> None:
    """The one-thread-per-output schedule (see the module docstring), ``threads`` per
    block at most."""
    outer, inner = spatial_first(sch, block, info)
    if not outer:
        raise ScheduleError(f"block {info.name!r} has no spatial loop to bind to threads")
    extents = [info.extent_of(iv) for iv in sorted(info.spatial, key=info.loop_of)]
    total = _product(extents)
    unit = [lp for lp, e in zip(outer, extents) if e == 1]
    if unit and len(unit) < len(outer):
        # unit loops move inside the thread instead of being fused: fusing needs one
        # index type, and T.grid(1, n) gives an int32 1 next to an int64 n
        outer = [lp for lp, e in zip(outer, extents) if e != 1]
        sch.reorder(*outer, *unit, *inner)
        extents = [e for e in extents if e != 1]
        vector = False
    fused = sch.fuse(*outer) if len(outer) > 1 else outer[0]
    threads = limits.threads(threads)
    if total is not None:
        threads = max(1, min(threads, total))
    lanes = _lanes(info, extents, total, threads) if vector else 1
    if lanes > 1:
        bx, tx, vec = sch.split(fused, [None, threads, lanes])
        sch.vectorize(vec)
    else:
        bx, tx = sch.split(fused, [None, threads])
    sch.bind(bx, "blockIdx.x")
    sch.bind(tx, "threadIdx.x")
    if info.is_reduction and total is not None and total % threads == 0:
        # only without a predicate: reverse_compute_at gives the write-back block no
        # guard of its own, so a partial last thread block would store out of bounds
        local_accumulator(sch, block, info, tx)


def _lanes(info, extents, total, threads) -> int:
    """Elements per thread along the innermost spatial loop: only when it is unit
    stride for every access, unconditional, and the work divides evenly (no lane
    may need a guard)."""
    if info.is_reduction or info.write is None or total is None or not is_unconditional(info):
        return 1
    inner = max(info.spatial, key=info.loop_of)
    if not unit_or_invariant(info, inner):
        return 1
    lanes = max(1, VECTOR_BYTES * 8 // max(8, info.write.buffer.dtype.bits))
    while lanes > 1 and (extents[-1] % lanes or total % (threads * lanes)):
        lanes //= 2
    return lanes


def local_accumulator(sch, block, info, loop) -> None:
    """The reduction accumulates in a ``local`` buffer placed under ``loop`` (the
    loop that owns one output element), written back once; skipped when the output
    moves along a reduction iterator or the block has no init (the prior output value
    must then be read)."""
    write = info.write
    if write is None or not info.has_init:
        return
    if any(write.strides.get(id(iv.var)) != 0 for iv in info.reduce):
        return
    write_back = sch.cache_write(block, 0, "local")
    sch.reverse_compute_at(write_back, loop)

"""Row kernels: a row-wise block and the row reductions it reads, in one thread block.

softmax (``B[i, k] = exp(A[i, k] - max_i) / sum_i``) and layernorm read, per row, the
results of reductions over that row. Instead of one kernel per reduction and one for
the elementwise block (each reading the row from global memory, the per-row results
going through global memory), a thread block computes one row::

    for i in T.thread_binding(rows, "blockIdx.x"):
        for r_0 in range(ceil(n / T)):             # each reduction, its inner loop
            for r_1 in T.thread_binding(T, "threadIdx.x"):   # over the threads
                mx[i] = max(mx[i], A[i, r])        # mx in shared memory
        for r_0 ...: for r_1 in T.thread_binding(T, "threadIdx.x"):
                sm[i] += exp(A[i, r] - mx[i])
        for k_0 in range(ceil(n / T)):
            for k_1 in T.thread_binding(T, "threadIdx.x"):
                B[i, k] = exp(A[i, k] - mx[i]) / sm[i]

The consumer's row loops are fused and bound to ``blockIdx.x``, the rest of its loops
fused, split by ``T`` and bound to ``threadIdx.x``; each producer reduction (last
first) gets its output in ``shared`` memory, is computed at the row loop, and its
reduction loops are fused, split by the same ``T`` and bound to ``threadIdx.x`` (a
cross-thread reduction, lowered to an allreduce by the CUDA build). ThreadSync puts a
barrier between a row result's store and its reads. A plan that a primitive refuses
is dropped (the driver then schedules the blocks one by one).
"""

from __future__ import annotations

from tilelang.errors import ScheduleError
from tilelang.schedule.rules.gpu.reduction import _check_reducer, _threads, wants_cross_thread


def row_producers(info, infos, limits) -> list:
    """The blocks of ``infos`` before ``info`` that are cross-thread reductions whose
    output ``info`` reads (directly or through another such reduction), in program
    order; empty when ``info`` is a reduction itself."""
    if info.is_reduction or info.write is None:
        return []
    before = infos[: infos.index(info)]
    wanted = {a.buffer for a in info.reads}
    found = []
    for producer in reversed(before):
        if producer.write is None or producer.write.buffer not in wanted:
            continue
        if not producer.is_reduction or not wants_cross_thread(producer, limits):
            return []  # another producer: not a row kernel
        found.append(producer)
        wanted |= {a.buffer for a in producer.reads}
    return found[::-1]


def fuse_rows(sch, block, info, producers, limits, func_name: str, threads=None) -> None:
    """The schedule of the module docstring for the consumer ``block`` (``threads``
    per block: the default's choice when None)."""
    rows = {len(p.spatial) for p in producers}
    if len(rows) != 1:
        raise ScheduleError(f"block {info.name!r}: its row reductions keep different rows")
    (row_count,) = rows
    loops = sch.get_loops(block)
    if not 0 < row_count < len(loops) or len(loops) != len(info.spatial):
        raise ScheduleError(f"block {info.name!r} is not a row-wise block")
    totals = []
    for producer in producers:
        total = 1
        for iv in producer.reduce:
            total *= producer.extent_of(iv)
        totals.append(total)
    threads = threads or _threads(min(totals), limits)
    if threads is None:
        raise ScheduleError(f"block {info.name!r}: the target allows no warp of threads")
    row = sch.fuse(*loops[:row_count]) if row_count > 1 else loops[0]
    rest = loops[row_count:]
    rest = sch.fuse(*rest) if len(rest) > 1 else rest[0]
    _, inner = sch.split(rest, [None, threads])
    sch.bind(row, "blockIdx.x")
    sch.bind(inner, "threadIdx.x")
    for producer in reversed(producers):
        target = sch.get_block(producer.name, func_name)
        _check_reducer(sch, target, producer)
        sch.set_scope(target, 0, "shared")
        sch.compute_at(target, row)
        below = sch.get_loops(target)[1:]
        if not below:
            raise ScheduleError(f"block {producer.name!r} kept no reduction loop")
        r = sch.fuse(*below) if len(below) > 1 else below[0]
        _, r_inner = sch.split(r, [None, threads])
        sch.bind(r_inner, "threadIdx.x")


__all__ = ["row_producers", "fuse_rows"]

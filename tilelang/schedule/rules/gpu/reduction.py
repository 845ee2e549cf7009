"""Cross-thread reductions: the threads of one block share one output element.

For a reduction block with few outputs and a long reduction (a row sum, a softmax's
row max), each output gets a thread block: the spatial loops are fused and bound to
``blockIdx.x``, the fused reduction loop is split by the thread count ``T`` and its
inner part bound to ``threadIdx.x`` (TVM's cross-thread reduction: a reduction loop
bound to threads). Building for CUDA lowers such a block
(:mod:`tilelang.transform.lower_cross_thread_reduction`): each thread combines its
``ceil(n / T)`` elements in a register, then the block combines the ``T`` partials by
warp shuffles and one exchange through shared memory (``tvm_thread_allreduce``), and
thread 0 stores the result. A reduction that ``T`` does not divide is predicated (the
threads past the end contribute the identity). On the CPU backends, which run thread
loops in turn, the same schedule computes the reduction as written.
"""

from __future__ import annotations

from tilelang.errors import ScheduleError
from tilelang.ir import stmt as S
from tilelang.ir.functor import post_order_visit
from tilelang.schedule.rules.gpu.limits import gpu_limits
from tilelang.schedule.rules.gpu.spatial import spatial_first

#: most threads that share one reduction (a 1024-long row: 4 elements per thread)
MAX_REDUCE_THREADS = 256
#: thread counts the tuning space draws from for a cross-thread reduction
REDUCE_THREAD_CHOICES = (32, 64, 128, 256, 512)
#: shortest reduction worth splitting over threads
MIN_REDUCE_EXTENT = 64
#: with at least this many outputs, one thread per output already fills the GPU
MANY_OUTPUTS = 1 << 16


def wants_cross_thread(info, limits=None) -> bool:
    """A reduction with an init, an output that stays put along the reduction, a
    known reduction extent of at least :data:`MIN_REDUCE_EXTENT`, and too few outputs
    to fill the GPU one thread each."""
    if not info.is_reduction or not info.has_init or info.write is None:
        return False
    if any(info.write.strides.get(id(iv.var)) != 0 for iv in info.reduce):
        return False
    extents = [info.extent_of(iv) for iv in info.reduce]
    if None in extents:
        return False
    reduce_total = 1
    for e in extents:
        reduce_total *= e
    outputs = 1
    for iv in info.spatial:
        e = info.extent_of(iv)
        outputs = outputs * e if e is not None and outputs is not None else None
    if reduce_total < MIN_REDUCE_EXTENT or (outputs is not None and outputs >= MANY_OUTPUTS):
        return False
    return _threads(reduce_total, limits or gpu_limits()) is not None


def _threads(reduce_total, limits) -> int | None:
    """The largest power-of-two number of threads, at least a warp and at most the
    limits allow, not past ``reduce_total``; None if the limits allow no warp."""
    cap = min(MAX_REDUCE_THREADS, limits.max_threads_per_block)
    if cap < limits.warp_size:
        return None
    threads = limits.warp_size
    while threads * 2 <= cap and threads * 2 <= reduce_total:
        threads *= 2
    return threads


def reduce_thread_choices(limits) -> list:
    """The thread counts a cross-thread reduction may take (the CUDA space samples
    one): the warp multiples of :data:`REDUCE_THREAD_CHOICES` the limits allow."""
    cap = limits.max_threads_per_block
    return [t for t in REDUCE_THREAD_CHOICES if t <= cap and t % limits.warp_size == 0]


def cross_thread_reduction(sch, block, info, limits, threads=None) -> None:
    """The schedule of the module docstring applied to ``block`` (``threads`` per
    block: the default's choice when None)."""
    _check_reducer(sch, block, info)
    outer, inner = spatial_first(sch, block, info)
    if not outer:
        raise ScheduleError(
            f"block {info.name!r}: a reduction to one value is not split over blocks"
        )
    reduce_total = 1
    for iv in info.reduce:
        reduce_total *= info.extent_of(iv)
    threads = threads or _threads(reduce_total, limits)
    if threads is None:
        raise ScheduleError(f"block {info.name!r}: the target allows no warp of threads")
    r = sch.fuse(*inner) if len(inner) > 1 else inner[0]
    _, r_inner = sch.split(r, [None, threads])
    row = sch.fuse(*outer) if len(outer) > 1 else outer[0]
    sch.bind(row, "blockIdx.x")
    sch.bind(r_inner, "threadIdx.x")


def _check_reducer(sch, block, info) -> None:
    """A ScheduleError unless the block's reducer is one the cross-thread lowering
    combines (``+``, ``*``, min, max of the stored element, init the identity)."""
    from tilelang.schedule.rfactor_reducer import COMBINERS, match_reduction

    target = sch.get(block)
    found = []

    def visit(node):
        if isinstance(node, S.BlockRealize) and node.block is target:
            found.append(node)

    for func in sch.mod.functions.values():
        if hasattr(func, "body"):
            post_order_visit(func.body, visit)
    if not found:
        raise ScheduleError(f"block {info.name!r} was not found")
    if match_reduction(info.name, found[0]).kind not in COMBINERS:
        raise ScheduleError(f"block {info.name!r}: an argmax/argmin is not reduced across threads")

"""Cross-thread reductions: the threads of one block share one output element.

For a reduction block with few outputs and a long reduction (a row sum, a softmax's
row max), each output gets a thread block: the fused reduction loop is split by the
thread count ``T`` and factored (``rfactor``) into ``T`` partial results, one per
thread, kept in ``shared`` memory; after the barrier the ThreadSync pass inserts,
every thread combines the ``T`` partials in its own register and writes the result
(all threads write the same value). Combining redundantly costs ``T`` shared-memory
reads per thread, which are broadcasts; it needs no warp shuffle, which the CUDA
backend does not express, and it computes the same on the C backend, where thread
loops run in turn.
"""

from __future__ import annotations

from tilelang.errors import ScheduleError
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.functor import post_order_visit
from tilelang.schedule.rules.analysis import SPATIAL
from tilelang.schedule.rules.fusion import loop_extent
from tilelang.schedule.rules.gpu.limits import gpu_limits
from tilelang.schedule.rules.gpu.spatial import spatial_first

#: most threads that share one reduction: each thread combines all T partials, T^2
#: shared-memory reads per block, so T stays small (64: a 1024-long row costs 16
#: global loads and 64 shared loads per thread)
MAX_REDUCE_THREADS = 64
#: shortest reduction worth splitting over threads
MIN_REDUCE_EXTENT = 64
#: with at least this many outputs, one thread per output already fills the GPU
MANY_OUTPUTS = 1 << 16


def wants_cross_thread(info, limits=None) -> bool:
    """A reduction with an init, an output that stays put along the reduction, a
    known reduction extent of at least :data:`MIN_REDUCE_EXTENT` that a whole number
    of warps divides (rfactor takes no predicated split), and too few outputs to fill
    the GPU one thread each."""
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
    limits allow, that divides ``reduce_total``; None if there is none."""
    cap = min(MAX_REDUCE_THREADS, limits.max_threads_per_block)
    threads = 1
    while threads * 2 <= cap and reduce_total % (threads * 2) == 0:
        threads *= 2
    return threads if threads >= min(limits.warp_size, cap) else None


def cross_thread_reduction(sch, block, info, limits) -> None:
    """The schedule of the module docstring applied to ``block``."""
    outer, inner = spatial_first(sch, block, info)
    if not outer:
        raise ScheduleError(
            f"block {info.name!r}: a reduction to one value is not split over blocks"
        )
    reduce_total = 1
    for iv in info.reduce:
        reduce_total *= info.extent_of(iv)
    threads = _threads(reduce_total, limits)
    if threads is None:
        raise ScheduleError(f"block {info.name!r}: no warp multiple divides the reduction")
    r = sch.fuse(*inner) if len(inner) > 1 else inner[0]
    _, r_inner = sch.split(r, [None, threads])
    partial = sch.rfactor(r_inner, 0)
    loops = sch.get_loops(block)
    row = sch.fuse(*loops[: len(outer)]) if len(outer) > 1 else loops[0]
    sch.bind(row, "blockIdx.x")
    write_back = sch.cache_write(block, 0, "local")
    sch.reverse_compute_at(write_back, row)
    # shared before compute_at: a global buffer is visible to every thread block, so
    # compute_at would relax the blockIdx loop and compute every row in each block
    sch.set_scope(partial, 0, "shared")
    sch.compute_at(partial, row)
    below = sch.get_loops(partial)[1:]
    var = _partial_loop_var(sch, partial)
    thread_loop = [lp for lp in below if sch.get(lp).loop_var is var]
    if not thread_loop or _extent(sch, thread_loop[0]) != threads:
        raise ScheduleError(f"block {info.name!r}: no loop of {threads} partial results")
    rest = [lp for lp in below if lp is not thread_loop[0]]
    if rest and below[0] is not thread_loop[0]:
        sch.reorder(thread_loop[0], *rest)
    sch.bind(thread_loop[0], "threadIdx.x")


def _partial_loop_var(sch, partial):
    """The loop variable bound to the rfactor block's spatial iterator that indexes
    the partial results (the factored one); never a reduction loop, whose iterations
    accumulate into the same partial and cannot run in parallel."""
    block = sch.get(partial)
    found = []

    def visit(node):
        if isinstance(node, S.BlockRealize) and node.block is block:
            found.append(node)

    for func in sch.mod.functions.values():
        if hasattr(func, "body"):
            post_order_visit(func.body, visit)
    if not found:
        return None
    write = block.writes[0]
    factor_index = write.region[0].min  # rfactor(factor_axis=0): the partial's first axis
    for iv, value in zip(block.iter_vars, found[0].iter_values):
        if iv.iter_type == SPATIAL and isinstance(value, E.Var) and factor_index is iv.var:
            return value
    return None


def _extent(sch, loop):
    return loop_extent(sch, loop)

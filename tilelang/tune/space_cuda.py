"""The generic search space for CUDA (``space="auto"`` with a cuda target), after
MetaSchedule's multi-level tiling for GPUs.

Per block of the function, last first:

- a reduction whose output stays put along its reduction iterators (matmul, conv,
  batch matmul) gets multi-level tiling ``SSSRRSRS``: every spatial loop split in
  four, ``S0`` (thread blocks), ``S1`` (threads), ``S2``, ``S3``; every reduction loop
  in three, ``R0 R1 R2``; ordered ``S0 S1 R0 R1 S2 R2 S3``. MetaSchedule's second
  spatial level binds ``vthread``, which the CUDA backend does not have: here it is
  fixed at one, so the shape is ``SSSRRSRS`` with that level of extent 1. ``S0``
  fused is ``blockIdx.x``, ``S1`` fused ``threadIdx.x``; the accumulator is a
  ``local`` buffer (``S2 x S3`` per thread) written back under ``S1``. Each operand
  is fetched cooperatively into ``shared`` memory at ``R0``: the panel's loops fused,
  split over the threads with a sampled vector length of 1, 2 or 4 (vectorised
  loads). ``R2`` and the ``S3`` loops are unrolled or not (a sampled decision).
  Draws whose threads per block exceed the target's limit, or whose shared panels
  exceed its shared memory, raise ScheduleError (the tuner draws again).
  A long reduction with fewer than :data:`MIN_TILED_OUTPUTS` outputs (a row sum) is
  left to the cross-thread plan, with a sampled number of threads (32 to 512: warp
  shuffles and one shared-memory exchange, :mod:`tilelang.schedule.rules.gpu.reduction`);
  a row-wise block that reads such reductions of its rows gets them in its own thread
  blocks (:mod:`tilelang.schedule.rules.gpu.rows`), with a sampled thread count.
- a half-precision matmul the WMMA intrinsics can compute gets the tensor-core
  schedule (:mod:`tilelang.schedule.rules.gpu.tensor_core`) with a sampled tiling:
  warps per block, fragments per warp and the reduction step;
- any other block gets one of the default GPU plans
  (:mod:`tilelang.schedule.rules.gpu`) with a sampled number of threads.

Elementwise intermediates are inlined first, as the default GPU rules do.
"""

from __future__ import annotations

from tilelang.errors import ScheduleError
from tilelang.ir.function import PrimFunc
from tilelang.schedule.rules.analysis import leaf_blocks
from tilelang.schedule.rules.fusion import loop_extent
from tilelang.schedule.rules.gpu.apply import inline_producers, under_threads
from tilelang.schedule.rules.gpu.limits import gpu_limits
from tilelang.schedule.rules.gpu.reduction import (
    cross_thread_reduction,
    reduce_thread_choices,
    wants_cross_thread,
)
from tilelang.schedule.rules.gpu.rows import fuse_rows, row_producers
from tilelang.schedule.rules.gpu.spatial import bind_threads, spatial_first
from tilelang.schedule.rules.gpu.tensor_core import apply_wmma, wmma_plans

#: largest accumulator tile per thread (S2 x S3 elements): registers
MAX_THREAD_TILE = 128
#: thread counts the non-tiled blocks draw from
THREAD_CHOICES = (64, 128, 256, 512, 1024)
VECTOR_CHOICES = (1, 2, 4)
#: reductions with at least this many outputs are tiled even when the cross-thread
#: plan would take them (a 32 x 32 tile of a matmul is already a block of work)
MIN_TILED_OUTPUTS = 1024


def cuda_space(target=None):
    """The space function for ``target`` (a cuda Target or its spelling): a function
    ``space(sch) -> sch`` sampling the choices of the module docstring."""
    limits = gpu_limits(target)

    def space(sch):
        func_name = _only_function(sch)
        func = sch.mod[func_name]
        infos = leaf_blocks(func)
        if infos is None:
            raise ScheduleError(f"the CUDA space needs plain loops around blocks in {func_name!r}")
        outputs = {func.buffer_map[p] for p in func.params if p in func.buffer_map}
        inline_producers(sch, func_name, infos, outputs)
        infos = leaf_blocks(sch.mod[func_name]) or []
        for info in reversed(infos):
            if under_threads(sch, info.name, func_name):
                continue  # a row reduction drawn with the row-wise block reading it
            block = sch.get_block(info.name, func_name)
            tensor_core = wmma_plans(info, limits)
            if tensor_core:
                pick = sch.sample_categorical(
                    list(range(len(tensor_core))), [1 / len(tensor_core)] * len(tensor_core)
                )
                apply_wmma(sch, block, tensor_core[int(sch.get(pick))])
            elif _tileable(info) and (
                _outputs(info) >= MIN_TILED_OUTPUTS or not wants_cross_thread(info, limits)
            ):
                multi_level_tiling(sch, block, info, limits)
            elif row_producers(info, infos, limits):
                choices = reduce_thread_choices(limits)
                pick = sch.sample_categorical(list(choices), [1.0 / len(choices)] * len(choices))
                fuse_rows(sch, block, info, row_producers(info, infos, limits), limits,
                          func_name, threads=int(sch.get(pick)))  # fmt: skip
            else:
                _default_plan(sch, block, info, limits)
        return sch

    space.__name__ = space.__qualname__ = "cuda_space"
    return space


def _only_function(sch) -> str:
    names = [n for n, f in sch.mod.functions.items() if isinstance(f, PrimFunc)]
    if len(names) != 1:
        raise ScheduleError(f"the CUDA space tunes one prim_func, the module has {names}")
    return names[0]


def _tileable(info) -> bool:
    """A reduction with an init whose output does not move along the reduction and
    with at least one spatial iterator (known extents)."""
    if not info.is_reduction or not info.has_init or info.write is None or not info.spatial:
        return False
    if any(info.write.strides.get(id(iv.var)) != 0 for iv in info.reduce):
        return False
    return None not in info.extents


def _outputs(info) -> int:
    total = 1
    for iv in info.spatial:
        total *= info.extent_of(iv)
    return total


def _default_plan(sch, block, info, limits) -> None:
    if wants_cross_thread(info, limits):
        choices = reduce_thread_choices(limits)
        pick = sch.sample_categorical(list(choices), [1.0 / len(choices)] * len(choices))
        cross_thread_reduction(sch, block, info, limits, threads=int(sch.get(pick)))
        return
    choices = [t for t in THREAD_CHOICES if t <= limits.max_threads_per_block] or [limits.warp_size]
    threads = sch.sample_categorical(list(choices), [1.0 / len(choices)] * len(choices))
    bind_threads(sch, block, info, limits, vector=True, threads=int(sch.get(threads)))


def multi_level_tiling(sch, block, info, limits) -> None:
    """``SSSRRSRS`` tiling with cooperative shared-memory fetching (module docstring)."""
    spatial, reduce = spatial_first(sch, block, info)
    local = sch.cache_write(block, 0, "local")
    levels = {key: [] for key in ("S0", "S1", "S2", "S3", "R0", "R1", "R2")}
    threads, thread_tile = 1, 1
    for loop in spatial:
        factors = sch.sample_perfect_tile(loop, n=4, max_innermost_factor=8)
        values = [int(sch.get(f)) for f in factors]
        threads *= values[1]
        thread_tile *= values[2] * values[3]
        for key, part in zip(("S0", "S1", "S2", "S3"), sch.split(loop, factors)):
            levels[key].append(part)
    for loop in reduce:
        factors = sch.sample_perfect_tile(loop, n=3, max_innermost_factor=8)
        for key, part in zip(("R0", "R1", "R2"), sch.split(loop, factors)):
            levels[key].append(part)
    if not limits.warp_size // 2 <= threads <= limits.max_threads_per_block:
        raise ScheduleError(f"CUDA space: {threads} threads per block is out of range; draw again")
    if thread_tile > MAX_THREAD_TILE:
        raise ScheduleError(f"CUDA space: {thread_tile} accumulators per thread; draw again")
    sch.reorder(
        *levels["S0"],
        *levels["S1"],
        *levels["R0"],
        *levels["R1"],
        *levels["S2"],
        *levels["R2"],
        *levels["S3"],
    )
    bx = sch.fuse(*levels["S0"]) if len(levels["S0"]) > 1 else levels["S0"][0]
    tx = sch.fuse(*levels["S1"]) if len(levels["S1"]) > 1 else levels["S1"][0]
    sch.bind(bx, "blockIdx.x")
    sch.bind(tx, "threadIdx.x")
    sch.reverse_compute_at(local, tx)
    anchor = levels["R0"][-1] if levels["R0"] else None
    if anchor is not None:
        _cooperative_fetch(sch, block, info, anchor, threads, limits)
    if int(sch.get(sch.sample_categorical([0, 1], [0.5, 0.5]))) == 1:
        for loop in (*levels["R2"], *levels["S3"]):
            sch.unroll(loop)
    if levels["R0"]:
        sch.decompose_reduction(block, levels["R0"][0])


def _cooperative_fetch(sch, block, info, anchor, threads, limits) -> None:
    """Each operand into ``shared`` at ``anchor``, copied by all ``threads`` with a
    sampled vector length; ScheduleError when the panels exceed shared memory."""
    shared_bytes = 0
    for operand in info.reads:
        reads = [r.buffer for r in sch.get(block).reads]
        if operand.buffer not in reads:
            continue
        fetch = sch.cache_read(block, reads.index(operand.buffer), "shared")
        sch.compute_at(fetch, anchor)
        depth = _depth(sch, fetch, anchor)
        panel = sch.get_loops(fetch)[depth:]
        elements = 1
        for loop in panel:
            elements *= loop_extent(sch, loop) or 1
        shared_bytes += elements * max(1, operand.buffer.dtype.bits // 8)
        if shared_bytes > limits.max_shared_memory_per_block:
            raise ScheduleError(f"CUDA space: {shared_bytes} bytes of shared memory; draw again")
        if not panel:
            continue
        fused = sch.fuse(*panel) if len(panel) > 1 else panel[0]
        lanes = int(sch.get(sch.sample_categorical(list(VECTOR_CHOICES), [1 / 3] * 3)))
        if lanes > 1 and elements % (threads * lanes) == 0:
            _, tx, vec = sch.split(fused, [None, threads, lanes])
            sch.vectorize(vec)
        else:
            _, tx = sch.split(fused, [None, threads])
        sch.bind(tx, "threadIdx.x")


def _depth(sch, fetch, anchor) -> int:
    """How many of ``fetch``'s loops enclose ``anchor`` (and ``anchor`` itself)."""
    target = sch.get(anchor)
    for index, loop in enumerate(sch.get_loops(fetch)):
        if sch.get(loop) is target:
            return index + 1
    raise ScheduleError("CUDA space: the fetch is not under its anchor loop")

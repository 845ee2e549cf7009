"""Search spaces seeded from the default schedule rules (:mod:`tilelang.schedule.rules`).

:class:`RulesSpace` runs the rules exactly as ``tilelang.build`` does, except that the
sizes of each register-tiling plan (:class:`~tilelang.schedule.rules.tiling.TilePlan`)
are drawn with ``sch.sample_categorical``: the vector tile (vector width x vectors),
the row tile of the register block (1 = no row tile), the unrolling of the innermost
reduction loop, the L1 blocking of the reduction (0 = none; it moves where the
accumulator lives: in the output inside the k block, or in a local buffer written
back under the outer tile), whether the row loop is unrolled, where the accumulator
is written back and, unblocked, whether the operand that ignores the rows is packed
per vector tile (``TilePlan.pack``, the hand schedule's packed B). A block scheduled
on its own (:mod:`tilelang.schedule.rules.alone`: elementwise, transpose, pooling)
draws its :class:`~tilelang.schedule.rules.alone.AlonePlan`; a row fusion (softmax,
layer norm) draws the anchor's loop its producers are computed at and whether their
reductions become vector partial results; a producer left at the
root (a convolution's padding) draws its compute location with
``sch.sample_compute_location`` once its consumers are scheduled. The rules' own
choice is always the *first* candidate of each categorical draw, and a
:class:`~tilelang.tune.space.DecisionSchedule` taking first candidates leaves a
producer at the root, so that candidate is the default build's schedule: the tuner
measures it first (:attr:`RulesSpace.first_choice_is_default`) and searches around it.

:class:`RulesOrGenericSpace` (``space="auto"`` on CPUs) draws first between this space
and the generic multi-level-tiling space (:mod:`tilelang.tune.space_cpu`), so the
search starts at the default build and can leave its shape when the generic space
does better.
"""

from __future__ import annotations

import attrs

from tilelang.errors import ScheduleError
from tilelang.ir.function import PrimFunc
from tilelang.schedule.rules.alone import (
    AlonePlan,
    innermost_extent,
    plan_alone,
    transposed_extents,
)
from tilelang.schedule.rules.apply import is_user_scheduled, schedule_function
from tilelang.schedule.rules.loops import MIN_PARALLEL_WORK, largest_divisor
from tilelang.schedule.rules.machine import host_machine
from tilelang.schedule.rules.planner import RulesPlanner
from tilelang.schedule.rules.tiling import (
    L1_BYTES,
    outer_spatial_extents,
    packed_operand,
    plan_tiling,
)

#: largest row tile offered (the rules use at most 8)
MAX_ROW_TILE = 16
#: vector tiles offered, in vectors of the target (the rules use 1 or 2)
VECTOR_COUNTS = (1, 2, 4)
#: unroll factors offered for the innermost reduction loop
UNROLL_FACTORS = (1, 2, 4, 8)
#: the largest local accumulator a write-back moved outwards may need (16 KiB of fp32)
MAX_LOCAL_ELEMENTS = 4096


class RulesSpace:
    """The default rules with their tiling sizes sampled (see the module docstring).

    ``machine`` sizes the rules' choices (default: the host)."""

    #: every draw's first candidate is the rules' own choice
    first_choice_is_default = True

    def __init__(self, machine=None):
        self.machine = machine or host_machine()

    def __call__(self, sch):
        planner = SampledPlanner()
        for name, func in list(sch.mod.functions.items()):
            if isinstance(func, PrimFunc) and not is_user_scheduled(func):
                sch = schedule_function(sch, name, self.machine, planner=planner)
        return sch

    def __repr__(self) -> str:
        return f"RulesSpace({self.machine!r})"


class SampledPlanner(RulesPlanner):
    """The rules' questions (:class:`~tilelang.schedule.rules.planner.RulesPlanner`)
    answered by sampling primitives on the schedule, the rules' answer first."""

    def tiling(self, sch, info, machine):
        return sampled_plan(sch, info, machine)

    def alone(self, sch, info, machine):
        return sampled_alone_plan(sch, info, machine)

    def row_fusion(self, sch, anchor, depth: int) -> tuple[int, tuple]:
        """The row loop drawn among the anchor's loops down to the rules' ``depth``
        (the rules' first; loops of one iteration are no choice), and whether the
        reductions are split into vector partial results (the rules: yes, else no)."""
        outer = [p for p in range(depth) if anchor.extents[p] not in (None, 1)]
        chosen = _draw(sch, depth, outer)
        vector = _draw(sch, 1, [0])
        return chosen, ((True, False) if vector else (False,))

    def location(self, sch, func_name: str, info):
        """TVM's ``sample_compute_location`` of the producer (a loop above its
        consumers, "root" or "inline"); a draw that a DecisionSchedule takes by default
        stays at the root, the rules' choice."""
        return sch.sample_compute_location(sch.get_block(info.name, func_name))


class RulesOrGenericSpace:
    """First draw: the rules space (candidate 0) or the generic space (candidate 1)."""

    first_choice_is_default = True

    def __init__(self, machine=None):
        self.rules = RulesSpace(machine)

    def __call__(self, sch):
        from tilelang.tune.space_cpu import generic_space

        branch = sch.get(sch.sample_categorical([0, 1], [0.5, 0.5]))
        return self.rules(sch) if branch == 0 else generic_space(sch)

    def __repr__(self) -> str:
        return "RulesOrGenericSpace()"


def sampled_plan(sch, info, machine):
    """The rules' plan for ``info`` with its sizes drawn on ``sch`` (the rules' value
    first in every draw); None where the rules do not tile the block."""
    plan = plan_tiling(info, machine)
    if plan is None:
        return None
    lanes = machine.lanes(info.write.buffer.dtype)
    vec_extent = info.extent_of(plan.vec_iter)
    vec_tile = _draw(
        sch, plan.vec_tile, [lanes * c for c in VECTOR_COUNTS if vec_extent % (lanes * c) == 0]
    )
    row_iter, row_tile = plan.row_iter, plan.row_tile
    if row_iter is not None:
        vectors = -(-vec_tile // lanes)
        cap = min(MAX_ROW_TILE, max(1, (machine.registers - 4) // vectors))
        extent = info.extent_of(row_iter)
        options = [d for d in range(1, cap + 1) if extent % d == 0]
        row_tile = _draw(sch, plan.row_tile, options)
        if row_tile == 1:
            row_iter = None
    inner_reduce = max(info.reduce, key=info.loop_of)
    k_extent = info.extent_of(inner_reduce)
    k_unroll = _draw(
        sch, plan.k_unroll, [u for u in UNROLL_FACTORS if k_extent % u == 0 and k_extent > u]
    )
    k_block = 0
    if row_iter is not None and len(info.reduce) == 1:
        options = [0]
        for share in (2, 1, 0.5):
            size = largest_divisor(k_extent, max(k_unroll, int(L1_BYTES * share) // (vec_tile * 4)))
            if size not in (1, k_extent) and size % k_unroll == 0:
                options.append(size)
        default = plan.k_block if plan.k_block in options else 0
        k_block = _draw(sch, default, options)
    unroll_rows = bool(_draw(sch, int(plan.unroll_rows), [1 - int(plan.unroll_rows)]))
    sampled = attrs.evolve(
        plan, vec_tile=vec_tile, row_iter=row_iter, row_tile=row_tile, k_unroll=k_unroll,
        k_block=k_block, unroll_rows=unroll_rows,
    )  # fmt: skip
    if k_block:
        return sampled
    if (
        packed_operand(info, sampled) is not None
        and vec_tile < vec_extent
        and row_tile < info.extent_of(row_iter)
        and _draw(sch, 0, [1])
    ):
        # packing moves the vector tiles' loop above the row tiles': the write-back
        # stays under the innermost loop (the depths below assume the rules' order)
        return attrs.evolve(sampled, pack=True)
    depths = write_back_depths(info, sampled, machine)
    return attrs.evolve(sampled, write_back_depth=_draw(sch, 0, depths))


def write_back_depths(info, plan, machine) -> list[int]:
    """The reverse_compute_at choices of the accumulator's write-back: how many outer
    spatial loops above the innermost one (0, the rules' choice) it may be moved out,
    while the local tile stays within MAX_LOCAL_ELEMENTS and the write-back stays
    inside the loop the rules run in parallel (each thread then has its own tile)."""
    extents = outer_spatial_extents(info, plan)
    tile = plan.vec_tile * (plan.row_tile if plan.row_iter is not None else 1)
    first_parallel = 0  # no loop runs in parallel: nothing bounds the move
    if info.work is None or info.work >= MIN_PARALLEL_WORK:
        first_parallel = next((i for i, e in enumerate(extents) if e >= 2), 0)
    depths, elements = [0], tile
    for depth in range(1, len(extents)):
        index = len(extents) - 1 - depth
        elements *= extents[index + 1]
        if elements > MAX_LOCAL_ELEMENTS or index < first_parallel:
            break
        depths.append(depth)
    return depths


def sampled_alone_plan(sch, info, machine) -> AlonePlan:
    """The rules' :class:`~tilelang.schedule.rules.alone.AlonePlan` for a block
    scheduled on its own with its choices drawn on ``sch`` (the rules' value first):
    the transpose tile (a run of one, two, four or eight vectors or the whole
    extent of the read by one vector of the output, or none), the vector
    width (one, two or four vectors that divide the innermost extent, the whole loop
    when short, or none), parallel or not, and for a reduction whether its window is
    unrolled."""
    plan = plan_alone(info, machine)
    lanes = machine.lanes(info.write.buffer.dtype) if info.write is not None else 1
    transpose_tile = plan.transpose_tile
    extents = transposed_extents(info)
    if extents is not None and extents[1] % lanes == 0 and extents[1] > lanes:
        rows = extents[0]
        runs = [t for t in (lanes, 2 * lanes, 4 * lanes, 8 * lanes, rows) if t > 1]
        transpose_tile = _draw(sch, transpose_tile, [0] + [t for t in runs if rows % t == 0])
    vector_width = plan.vector_width
    extent = innermost_extent(info)
    if not info.is_reduction and info.write is not None and extent is not None:
        widths = [lanes * c for c in VECTOR_COUNTS if extent % (lanes * c) == 0]
        if extent <= 4 * lanes:
            widths.append(extent)
        vector_width = _draw(sch, vector_width, [0] + widths)
    parallel = bool(_draw(sch, int(plan.parallel), [1 - int(plan.parallel)]))
    unroll_reduce = False
    if info.is_reduction:
        unroll_reduce = bool(_draw(sch, 0, [1]))
    return AlonePlan(transpose_tile, vector_width, parallel, unroll_reduce)


def _draw(sch, default: int, others) -> int:
    """``default`` or one of ``others``, drawn uniformly with ``default`` as candidate 0;
    no draw (and no trace entry) when there is nothing else to choose."""
    candidates = [default] + sorted({o for o in others if o != default})
    if len(candidates) == 1:
        return default
    chosen = sch.get(sch.sample_categorical(candidates, [1.0] * len(candidates)))
    if not isinstance(chosen, int):
        raise ScheduleError(f"rules space: a categorical draw gave {chosen!r}, not an int")
    return chosen


__all__ = [
    "RulesSpace",
    "RulesOrGenericSpace",
    "SampledPlanner",
    "sampled_plan",
    "sampled_alone_plan",
]

"""The driver: which functions the rules touch, and the order the rules run in.

Per function: (0) merge init blocks written apart back into their updates
(:func:`merge_init_blocks`); (1) inline cheap elementwise intermediates; (2) tile every reduction
that fits :mod:`.tiling`, inlining its elementwise consumers into the write-back;
(3) from the last block back, fuse rows of reductions under their consumer
(:mod:`.fusion`), split reductions along a contiguous axis into vector partial results
(:mod:`.dot`), and give every remaining block loop order, vectorisation and a
parallel outer loop. Each plan runs on a copy of the schedule; when a primitive
refuses (ScheduleError), the copy is dropped and the next, simpler plan is tried, so
the result always computes what the input computes.
"""

from __future__ import annotations

from tilelang.errors import ScheduleError
from tilelang.ir import stmt as S
from tilelang.ir.function import PrimFunc
from tilelang.ir.functor import StmtExprVisitor
from tilelang.schedule.api_state import ROOT_MARK
from tilelang.schedule.rules import dot, fusion, tiling
from tilelang.schedule.rules.alone import schedule_alone, vectorize_block
from tilelang.schedule.rules.analysis import leaf_blocks
from tilelang.schedule.rules.loops import parallel_outer
from tilelang.schedule.rules.machine import host_machine
from tilelang.schedule.rules.planner import RulesPlanner
from tilelang.schedule.schedule import Schedule
from tilelang.schedule.state import Tree


class _ScheduleMarks(StmtExprVisitor):
    """Finds what only a schedule (or a person scheduling by hand) writes."""

    found = False

    def visit_for(self, node):
        if node.kind is not S.ForKind.SERIAL or node.annotations or node.thread_binding:
            self.found = True
        self.generic_visit(node)

    def visit_block(self, node):
        if node.annotations or any(b.scope != "global" for b in node.alloc_buffers):
            self.found = True
        self.generic_visit(node)


def is_user_scheduled(func: PrimFunc) -> bool:
    """True when ``func`` carries any sign of a schedule: a non-serial or annotated
    loop, an annotated block, a non-global buffer, a split or fused loop (a binding that
    is not one loop variable), nested blocks, or loops in another order than the block
    iterators they bind. Such functions are left exactly as written."""
    if func.attrs.get("tl.lowered"):
        return True
    marks = _ScheduleMarks()
    marks.visit(func.body)
    if marks.found:
        return True
    infos = leaf_blocks(func)
    if infos is None:
        return True
    for info in infos:
        positions = [info.loop_of(iv) for iv in info.iter_vars]
        if positions != sorted(positions):
            return True  # reordered
    return False


def _attempt(sch: Schedule, plan, *args) -> tuple[Schedule, bool]:
    """Run ``plan(copy, *args)``; the copy if it succeeded, else ``sch`` untouched.

    A primitive that refuses raises ScheduleError. Any other exception from a primitive
    is a bug there, but the schedule before the plan is still correct, so a build
    goes on without the plan rather than failing for want of an optimisation."""
    trial = sch.copy()
    try:
        plan(trial, *args)
    except ScheduleError:
        return sch, False
    except Exception:  # noqa: BLE001 - see the docstring
        return sch, False
    return trial, True


def merge_init_blocks(sch, func_name: str) -> Schedule:
    """Every init block written apart from its update (SEED §8's two blocks) folded back
    into the update as its ``T.init()`` (:meth:`Schedule.merge_reduction`): the update
    alone is neither complete nor a reduction, and no loop over it could be bound. A
    pair the primitive refuses stays as written. Returns the schedule to go on with."""
    order = Tree(sch.mod[func_name]).order
    for previous, realize in zip(order, order[1:]):
        block = realize.block
        reduces = any(iv.iter_type == S.IterVar.CommReduce for iv in block.iter_vars)
        if block.init is None and reduces:
            sch, _ = _attempt(sch, _merge, previous.block.name_hint, block.name_hint, func_name)
    return sch


def _merge(sch, init: str, update: str, func_name: str) -> None:
    sch.merge_reduction(sch.get_block(init, func_name), sch.get_block(update, func_name))


def schedule_function(sch: Schedule, func_name: str, machine, planner=None) -> Schedule:
    """The rules applied to one function of ``sch``; returns the schedule to go on with.

    ``planner`` (default :class:`~.planner.RulesPlanner`, the rules' own choices)
    decides the tiling plans, the plans of blocks scheduled alone and where producers
    are computed (the tuner's rules space draws them with sampling primitives on
    ``sch``)."""
    planner = planner or RulesPlanner()
    # an init block written apart from its update (SEED §8) becomes the update's
    # T.init(): left apart, the update is no reduction the tiling plans know (a matmul
    # whose init runs in a nest of its own took 167 ms at 512³ against NumPy's 2.3)
    sch = merge_init_blocks(sch, func_name)
    func = sch.mod[func_name]
    outputs = {func.buffer_map[p] for p in func.params if p in func.buffer_map}
    infos = leaf_blocks(func)
    if infos is None:
        return sch
    sch, _ = _attempt(sch, fusion.inline_cheap_producers, func_name, infos, outputs)
    infos = leaf_blocks(sch.mod[func_name]) or []
    done: set[str] = set()

    for index, info in enumerate(infos):
        plan = planner.tiling(sch, info, machine)
        if plan is None:
            continue
        readers = fusion.consumers_of(infos, index)
        epilogue = []
        if (
            info.write.buffer not in outputs
            and len(readers) == 1
            and not readers[0].is_reduction
            and not plan.k_block
        ):
            epilogue = [readers[0].name]
        sch, ok = _attempt(sch, tiling.apply_tiling, func_name, info, plan, epilogue)
        if not ok:
            sch, ok = _attempt(sch, tiling.apply_tiling, func_name, info, plan, [])
            epilogue = []
        if ok:
            done.add(info.name)
            done.update(epilogue)

    for index in range(len(infos) - 1, -1, -1):
        info = infos[index]
        if info.name in done:
            continue
        row = fusion.plan_row_fusion(infos, index, done)
        if row is not None:
            depth, chain = row
            depth, attempts = planner.row_fusion(sch, info, depth)
            for vector_reductions in attempts:
                sch, ok = _attempt(
                    sch, _fuse_rows, func_name, info, depth, chain, machine, vector_reductions
                )
                if ok:
                    break
            if ok:
                done.add(info.name)
                done.update(p.name for p in chain)
                continue
        dot_plan = dot.plan_dot(info, machine)
        if dot_plan is not None:
            sch, ok = _attempt(sch, dot.apply_dot, func_name, info, dot_plan)
            if not ok and dot_plan.row_iter is not None:  # without the row tile
                plain = dot.DotPlan(dot_plan.width, dot_plan.lanes, None, 1)
                sch, ok = _attempt(sch, dot.apply_dot, func_name, info, plain)
            if ok:
                done.add(info.name)
                continue
        if info.write is not None and info.write.buffer not in outputs:
            location = planner.location(sch, func_name, info)
            # consumers (later blocks) are scheduled already: their loops are the
            # candidates, as in TVM's RandomComputeLocation; at the root nothing moves
            if location is not None and sch.get(location) is not ROOT_MARK:
                sch, ok = _attempt(sch, _compute_at, func_name, info.name, location)
                if ok:
                    done.add(info.name)
                    continue
        if info.is_reduction:
            sch, _ = _attempt(sch, _local_accumulator, func_name, info)
        plan = planner.alone(sch, info, machine)
        sch, _ = _attempt(sch, schedule_alone, func_name, info, machine, plan)
        done.add(info.name)
    return sch


def _compute_at(sch, func_name, name, location) -> None:
    sch.compute_at(sch.get_block(name, func_name), location)


def _fuse_rows(sch, func_name, anchor, depth, chain, machine, vector_reductions) -> None:
    lanes = machine.lanes(anchor.write.buffer.dtype) if vector_reductions else 0
    blocks = fusion.apply_row_fusion(sch, func_name, anchor, depth, chain, lanes)
    rfactors = []
    for block, info in blocks:
        if info is None:
            rfactors.append((block, fusion.prepare_rfactor(sch, block)))
        else:
            vectorize_block(sch, block, info, machine)
    loops = sch.get_loops(blocks[-1][0])[: depth + 1]
    lanes = machine.lanes(anchor.write.buffer.dtype)  # the elementwise blocks' width
    parallel_outer(sch, loops, anchor.extents[: depth + 1], work=anchor.work, lanes=lanes)
    for block, reduction_loop in rfactors:  # inits split off once every loop kind is set
        fusion.finish_rfactor(sch, block, reduction_loop)


def _local_accumulator(sch, func_name, info) -> None:
    """A reduction whose output element stays put along its reduction loops
    accumulates in a local buffer (a register) written back once per element, instead
    of a load and a store of memory per step."""
    first_reduce = min(info.loop_of(iv) for iv in info.reduce)
    if first_reduce == 0 or info.write is None or not info.has_init:
        return
    if any(info.write.strides.get(id(iv.var)) != 0 for iv in info.reduce):
        return
    block = sch.get_block(info.name, func_name)
    write_back = sch.cache_write(block, 0, "local")
    sch.reverse_compute_at(write_back, sch.get_loops(block)[first_reduce - 1])


def default_schedule(mod, machine=None) -> Schedule:
    """A :class:`Schedule` of ``mod`` with the default CPU rules applied to every
    PrimFunc that carries no schedule of its own; ``sch.mod`` is the result and
    ``sch.trace`` the primitives issued (replayable). ``machine`` sizes the tiles
    (default: the host, see :mod:`.machine`)."""
    machine = machine or host_machine()
    sch = Schedule(mod)
    for name, func in list(mod.functions.items()):
        if isinstance(func, PrimFunc) and not is_user_scheduled(func):
            sch = schedule_function(sch, name, machine)
    return sch

"""The GPU driver: which rule schedules each block, and the fallbacks.

Per unscheduled function: init blocks written apart from their updates are merged
back (:func:`merge_init_blocks`), elementwise intermediates are inlined
(:func:`inline_producers`); then every block, from the last back, gets the first plan
that applies: tensor cores for half-precision matmuls (:mod:`.tensor_core`), the §6
matmul tiling (:mod:`.matmul`; an elementwise consumer of an intermediate matmul, such
as mm_relu's relu, is inlined into its write-back, :func:`epilogues`), a cross-thread
reduction (:mod:`.reduction`), one thread per output (:mod:`.spatial`, vectorised,
then without vectors). Each plan runs on a copy of the schedule and is dropped when a
primitive refuses, so the result computes what the input computes. Every block ends
up under ``blockIdx``/``threadIdx`` loops, as the CUDA backend requires; a function
with a block no plan can bind is left as written (the backend's error then names the
unbound loop).
"""

from __future__ import annotations

from tilelang.errors import ScheduleError
from tilelang.ir import stmt as S
from tilelang.ir.function import PrimFunc
from tilelang.ir.functor import StmtExprVisitor
from tilelang.schedule.rules.analysis import leaf_blocks
from tilelang.schedule.rules.apply import _attempt, merge_init_blocks
from tilelang.schedule.rules.fusion import consumers_of
from tilelang.schedule.rules.gpu.limits import gpu_limits
from tilelang.schedule.rules.gpu.matmul import apply_matmul, plan_matmul
from tilelang.schedule.rules.gpu.reduction import cross_thread_reduction, wants_cross_thread
from tilelang.schedule.rules.gpu.rows import fuse_rows, row_producers
from tilelang.schedule.rules.gpu.spatial import bind_threads
from tilelang.schedule.rules.gpu.tensor_core import apply_wmma, plan_wmma
from tilelang.schedule.schedule import Schedule
from tilelang.schedule.state import Tree


class _ThreadBound(StmtExprVisitor):
    found = False

    def visit_for(self, node):
        if node.thread_binding is not None or node.kind is S.ForKind.THREAD_BINDING:
            self.found = True
        self.generic_visit(node)


def is_gpu_scheduled(func: PrimFunc) -> bool:
    """True when ``func`` binds some loop to a GPU thread axis (or is lowered): its
    author scheduled it for the GPU and the rules leave it exactly as written. A
    function without thread bindings cannot run as a kernel, so the rules schedule it
    even when it carries a CPU schedule (as TVM's DefaultGPUSchedule does)."""
    if func.attrs.get("tl.lowered"):
        return True
    visitor = _ThreadBound()
    visitor.visit(func.body)
    return visitor.found


def _plans(info, limits, epilogue=None, rows=None):
    """The plans for one block, best first; ``(name, func_name)`` of an ``epilogue``
    block to fuse into a matmul's write-back when the matmul plans apply; ``(row
    reductions, func_name)`` of the cross-thread reductions a row-wise block reads, to
    compute in its thread blocks (:mod:`.rows`)."""
    if rows is not None and rows[0]:
        yield lambda s, b: fuse_rows(s, b, info, rows[0], limits, rows[1])
    wmma = plan_wmma(info, limits)
    if wmma is not None:
        yield lambda s, b: apply_wmma(s, b, wmma)
    plan = plan_matmul(info, limits)
    if plan is not None and epilogue is not None:
        yield lambda s, b: _fused_matmul(s, b, info, plan, *epilogue)
    if plan is not None:
        yield lambda s, b: apply_matmul(s, b, info, plan)
    if wants_cross_thread(info, limits):
        yield lambda s, b: cross_thread_reduction(s, b, info, limits)
    yield lambda s, b: bind_threads(s, b, info, limits, vector=True)
    yield lambda s, b: bind_threads(s, b, info, limits, vector=False)


def _fused_matmul(sch, block, info, plan, epilogue: str, func_name: str) -> None:
    """The §6 tiling with the elementwise ``epilogue`` (mm_relu's relu) inlined into
    the register tile's write-back: one kernel, no intermediate in global memory."""
    apply_matmul(sch, block, info, plan)
    sch.reverse_compute_inline(sch.get_block(epilogue, func_name))


def epilogues(infos, outputs, limits) -> dict:
    """``{matmul-like block: its elementwise consumer}`` for intermediates read by
    exactly one elementwise block (the relu of mm_relu), to fuse after tiling. Other
    blocks keep their order (last first)."""
    found = {}
    for index, info in enumerate(infos):
        if info.write is None or info.write.buffer in outputs or not info.is_reduction:
            continue
        if plan_matmul(info, limits) is None:
            continue
        readers = consumers_of(infos, index)
        if len(readers) == 1 and not readers[0].is_reduction and readers[0].write is not None:
            found[info.name] = readers[0].name
    return found


def inline_producers(sch, func_name, infos, outputs) -> None:
    """``compute_inline`` every elementwise block that writes an intermediate buffer.
    Unlike the CPU rules, transcendental producers are inlined into several readers
    too: the kernels are bound by memory, and recomputing an ``exp`` costs less than
    writing its result to global memory and reading it back (softmax's ``e``). A
    refused inline leaves ``sch`` unchanged (ScheduleError's contract)."""
    for info in infos[:-1]:
        if info.is_reduction or info.write is None or info.write.buffer in outputs:
            continue
        try:
            sch.compute_inline(sch.get_block(info.name, func_name))
        except ScheduleError:
            continue


def _on_block(sch, plan, name: str, func_name: str) -> None:
    plan(sch, sch.get_block(name, func_name))


def schedule_function_gpu(sch: Schedule, func_name: str, limits) -> Schedule:
    """The GPU rules applied to one function of ``sch``; returns the schedule to go
    on with. A function the rules cannot bind completely (loops without blocks, a
    block with no spatial loop) is left exactly as written: the CUDA backend then
    names the loop that would run on the host."""
    before = sch
    sch = merge_init_blocks(sch, func_name)
    func = sch.mod[func_name]
    outputs = {func.buffer_map[p] for p in func.params if p in func.buffer_map}
    infos = leaf_blocks(func)
    if infos is None:
        return before
    sch, _ = _attempt(sch, inline_producers, func_name, infos, outputs)
    infos = leaf_blocks(sch.mod[func_name]) or []
    fused = epilogues(infos, outputs, limits)
    deferred = set(fused.values())  # scheduled with their producer, or after it
    for info in [i for i in reversed(infos) if i.name not in deferred] + [
        i for i in reversed(infos) if i.name in deferred
    ]:
        if info.name not in Tree(sch.mod[func_name]).realizes:
            continue  # an epilogue fused into its producer's kernel
        if under_threads(sch, info.name, func_name):
            continue  # a row reduction scheduled with the row-wise block reading it
        epilogue = (fused[info.name], func_name) if info.name in fused else None
        rows = (row_producers(info, infos, limits), func_name)
        for plan in _plans(info, limits, epilogue, rows):
            sch, ok = _attempt(sch, _on_block, plan, info.name, func_name)
            if ok:
                break
        else:
            return before
    return sch


class _BoundBlocks(StmtExprVisitor):
    """Names of the blocks under a loop bound to a thread axis."""

    def __init__(self):
        self.depth, self.names = 0, set()

    def visit_for(self, node):
        bound = node.kind is S.ForKind.THREAD_BINDING
        self.depth += bound
        self.generic_visit(node)
        self.depth -= bound

    def visit_block(self, node):
        if self.depth:
            self.names.add(node.name_hint)
        self.generic_visit(node)


def under_threads(sch, name: str, func_name: str) -> bool:
    """Whether block ``name`` already sits under a loop bound to a thread axis (read
    from the IR: no traced lookup)."""
    visitor = _BoundBlocks()
    visitor.visit(sch.mod[func_name].body)
    return name in visitor.names


def default_gpu_schedule(mod, target=None) -> Schedule:
    """A :class:`Schedule` of ``mod`` with the default GPU rules applied to every
    PrimFunc without thread bindings (:func:`is_gpu_scheduled`), sized by ``target``'s limits (see
    :func:`~tilelang.schedule.rules.gpu.limits.gpu_limits`); ``sch.mod`` is the
    result and ``sch.trace`` the primitives issued (replayable)."""
    limits = gpu_limits(target)
    sch = Schedule(mod)
    for name, func in list(mod.functions.items()):
        if isinstance(func, PrimFunc) and not is_gpu_scheduled(func):
            sch = schedule_function_gpu(sch, name, limits)
    return sch

"""``T.parallel`` loops on OpenMP threads.

The loop is *outlined*: its body becomes an internal function ``void body(void *ctx)``
that unpacks the values it uses from a struct, asks OpenMP for its thread number and
the team size, and runs its contiguous share of the iterations (a static schedule).
The parent fills the struct and calls ``GOMP_parallel(body, &ctx, num_threads, 0)``
from libgomp, the runtime GCC's ``#pragma omp parallel`` uses, so the C and LLVM
backends share one thread pool. A parallel loop nested inside another runs serially
in each thread, so threads are never oversubscribed.
"""

from __future__ import annotations

from llvmlite import ir

from tilelang.ir import expr as E
from tilelang.ir.dtype import INT32
from tilelang.ir.functor import StmtExprVisitor

from .types import I32, PTR, VOID, constant, llvm_type


class _Uses(StmtExprVisitor):
    """The variables (and buffer data pointers) a loop uses, in first-use order."""

    def __init__(self):
        self.seen: dict = {}

    def visit_var(self, op):
        self.seen.setdefault(op, None)

    visit_size_var = visit_var

    def visit_buffer_ref(self, buffer):
        self.seen.setdefault(buffer.data, None)


class _HasAssert(StmtExprVisitor):
    found = False

    def visit_assert_stmt(self, op):
        self.found = True


def captured_values(cg, loop) -> list:
    """``(var, value)`` for each variable of the enclosing function the loop uses."""
    uses = _Uses()
    uses.visit(loop)
    return [(var, cg.env[var]) for var in uses.seen if var in cg.env]


def emit_parallel_for(cg, loop) -> None:
    """Emit ``loop`` (kind PARALLEL) as an OpenMP parallel region."""
    cg.uses_openmp = True
    b = cg.builder
    dtype = loop.loop_var.dtype
    cg.index_nsw += 1
    try:
        start = cg.visit(loop.min)
        extent = cg.visit(loop.extent)
        step = cg.visit(loop.step) if loop.step is not None else constant(dtype, 1)
    finally:
        cg.index_nsw -= 1
    captured = captured_values(cg, loop)
    fields = [value for _, value in captured] + [start, extent, step]
    context_type = ir.LiteralStructType([v.type for v in fields])
    context = cg.alloca(context_type, "parallel.ctx")
    for i, value in enumerate(fields):
        b.store(
            value,
            b.gep(context, [constant("int32", 0), constant("int32", i)], source_etype=context_type),
        )

    cg.num_outlined += 1
    body_fn = ir.Function(
        cg.module, ir.FunctionType(VOID, [PTR]), f"{cg.function.name}.parallel.{cg.num_outlined}"
    )
    body_fn.linkage = "internal"
    body_fn.type = PTR  # passed as an opaque pointer; llvmlite would print ``void (ptr)*``
    saved = cg.save_context()
    saved_inbounds = set(cg.no_inbounds)
    _emit_body(cg, body_fn, loop, captured, context_type)
    cg.restore_context(saved)
    cg.no_inbounds = saved_inbounds

    b = cg.builder
    gomp_parallel = _declare(cg, "GOMP_parallel", VOID, [PTR, PTR, I32, I32])
    b.call(
        gomp_parallel,
        [body_fn, context, constant("int32", cg.options.num_threads), constant("int32", 0)],
    )
    checker = _HasAssert()
    checker.visit(loop.body)
    if checker.found:
        _propagate_failure(cg)


def _emit_body(cg, body_fn, loop, captured, context_type):
    """The outlined function: it unpacks the context, works out this thread's share of
    the iterations and calls :func:`_emit_share` 's function with them."""
    dtype = loop.loop_var.dtype
    index_type = llvm_type(dtype)
    share_fn = ir.Function(
        cg.module,
        ir.FunctionType(VOID, [v.type for _, v in captured] + [index_type] * 4),
        body_fn.name + ".share",
    )
    share_fn.linkage = "internal"
    cg.begin_function(body_fn, in_parallel=True)
    b = cg.builder
    context = body_fn.args[0]
    context.add_attribute("noalias")

    def field(i):
        slot = b.gep(
            context, [constant("int32", 0), constant("int32", i)], source_etype=context_type
        )
        return b.load(slot, typ=context_type.elements[i])

    values = [field(i) for i in range(len(captured))]
    n = len(captured)
    start, extent, step = field(n), field(n + 1), field(n + 2)
    thread = cg.cast(b.call(_declare(cg, "omp_get_thread_num", I32, []), []), INT32, dtype)
    threads = cg.cast(b.call(_declare(cg, "omp_get_num_threads", I32, []), []), INT32, dtype)
    one = constant(dtype, 1)
    # iterations = ceil(extent / step); chunk = ceil(iterations / threads)
    iterations = b.sdiv(b.sub(b.add(extent, step), one), step)
    chunk = b.sdiv(b.sub(b.add(iterations, threads), one), threads)
    first = b.mul(thread, chunk, flags=("nsw",))
    last = b.add(first, chunk, flags=("nsw",))
    last = b.select(b.icmp_signed("<", last, iterations), last, iterations)
    b.call(share_fn, [*values, start, step, first, last])
    cg.finish_function()
    _emit_share(cg, share_fn, loop, captured)


def _emit_share(cg, share_fn, loop, captured):
    """The loop over one thread's iterations, in a function of its own whose pointer
    parameters keep the ``noalias`` promise of the values they carry. Loaded from the
    context struct, the pointers would lose it, and LLVM could then keep no
    accumulator in registers across a loop that also stores through another pointer
    (a tiled matmul's output tile is loaded and stored at every step)."""
    cg.begin_function(share_fn, in_parallel=True)
    b = cg.builder
    args = list(share_fn.args)
    for arg, (var, value) in zip(args, captured):
        cg.env[var] = arg
        if _distinct_object(value):
            arg.add_attribute("noalias")
    start, step, first, last = args[len(captured) :]
    dtype = loop.loop_var.dtype
    counter = E.Var(loop.loop_var.name + ".iter", dtype)

    def body():
        value = b.add(start, b.mul(cg.env[counter], step, flags=("nsw",)), flags=("nsw",))
        cg.env[loop.loop_var] = value
        cg.visit(loop.body)

    cg.emit_loop(counter, None, None, None, body, start_value=first, end_value=last)
    cg.finish_function()


def _distinct_object(value) -> bool:
    """A pointer that no other pointer of the function reaches: a ``noalias``
    parameter, or storage the function allocated itself."""
    if isinstance(value, ir.Argument):
        return "noalias" in value.attributes
    if isinstance(value, ir.AllocaInstr):
        return True
    return isinstance(value, ir.CallInstr) and getattr(value.callee, "name", "") == "malloc"


def _propagate_failure(cg):
    """After the region: return if a thread recorded a failed assertion."""
    b = cg.builder
    error = cg.atomic_load(cg.error_slot, PTR)
    failed = b.icmp_unsigned("!=", error, ir.Constant(PTR, None))
    fail = b.append_basic_block("parallel.failed")
    ok = b.append_basic_block("parallel.ok")
    b.cbranch(failed, fail, ok)
    b.position_at_end(fail)
    b.ret_void()
    b.position_at_end(ok)


def _declare(cg, name, ret, args):
    fn = cg.module.globals.get(name)
    if fn is None:
        fn = ir.Function(cg.module, ir.FunctionType(ret, args), name)
    return fn

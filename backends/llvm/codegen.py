"""Lowered IR (docs/lowered_ir.md) to an ``llvmlite.ir.Module``.

One native function per PrimFunc, with the runtime's calling convention
(:mod:`tilelang.runtime.ctypes_call`): ``void f(T* buf..., scalar..., size_var...)``.
Buffer pointers carry ``noalias`` when the function says ``tir.noalias``, the element
alignment, and ``dereferenceable(bytes)`` when the buffer's extent is a constant.

- Loops are plain counted loops (the phi form LLVM's loop passes expect); index
  arithmetic carries ``nsw`` so that 32-bit indices widen and vectorise.
- ``T.vectorized`` loops of constant extent become vector IR (see :mod:`.vectorize`);
  others carry ``llvm.loop.vectorize.enable``. ``T.unroll`` loops that lowering left
  as loops carry ``llvm.loop.unroll.enable``; innermost unit-stride serial loops are
  kept from being unrolled before the loop vectoriser (see :mod:`.loop_hints`).
- ``T.parallel`` loops are outlined and run by OpenMP (see :mod:`.parallel`).
- Allocations of constant size up to :data:`STACK_LIMIT_BYTES` are ``alloca``\\ s in
  the entry block, so that SROA/mem2reg promote small ``"local"`` tiles to registers;
  bigger or symbolic ones use ``malloc``/``free``.
- A failed ``assert`` records its message in ``__tilelang_last_error`` and returns;
  the caller raises it (see :mod:`.module`).
"""

from __future__ import annotations

from llvmlite import ir

from tilelang.bounds.report import BOUNDS_ERROR
from tilelang.errors import BuildError
from tilelang.ir import expr as E
from tilelang.ir.dtype import INT64
from tilelang.ir.stmt import ForKind

from . import parallel
from .exprs import ExprEmitter
from .loop_hints import serial_loop_hints
from .types import I8, I32, PTR, VOID, constant, element_bytes, llvm_type, storage_type
from .vectorize import vectorize_body

#: constant-size allocations up to this many bytes live on the stack
STACK_LIMIT_BYTES = 256 * 1024
ERROR_SLOT = "__tilelang_last_error"
#: the values a failed bounds check records (indices, then extents)
ERROR_VALUES = "__tilelang_last_error_values"
MAX_ERROR_VALUES = 16


class _LoopID(ir.values.MDValue):
    """A ``distinct !{self, hints...}`` loop-ID node, as ``!llvm.loop`` requires."""

    def __init__(self, module, hints):
        super().__init__(module, [], name=str(len(module.metadata)))
        self.operands = (self, *hints)

    def descr(self, buf):
        buf.append("distinct ")
        super().descr(buf)

    __hash__ = object.__hash__

    def __eq__(self, other):
        return self is other


class CodeGenLLVM(ExprEmitter):
    """Builds one LLVM module from the PrimFuncs given to :meth:`add_function`."""

    def __init__(self, options, name="tilelang"):
        self.module = ir.Module(name=name)
        self.options = options
        self.fast_math = options.fast_math
        self.strings: dict[str, ir.GlobalVariable] = {}
        self.error_slot = ir.GlobalVariable(self.module, PTR, ERROR_SLOT)
        self.error_slot.initializer = ir.Constant(PTR, None)
        self.error_values_type = ir.ArrayType(ir.IntType(64), MAX_ERROR_VALUES)
        self.error_values = ir.GlobalVariable(self.module, self.error_values_type, ERROR_VALUES)
        self.error_values.initializer = ir.Constant(self.error_values_type, None)
        self.uses_openmp = False
        self.num_outlined = 0
        self.in_parallel = False
        self.loop_exits: list = []  # (continue, break) blocks of the enclosing loops
        self.subroutines: dict = {}  # the module's function names -> (symbol, PrimFunc)
        self.env: dict = {}
        self.no_inbounds: set = set()

    # ---------------------------------------------------------- functions
    def add_function(self, symbol: str, func, noalias=None, linkage=None) -> ir.Function:
        """Emit ``func`` (a lowered PrimFunc) as the function ``symbol``; its buffer
        pointers are ``noalias`` when ``noalias`` says so (default: ``tir.noalias``)."""
        params = list(func.params) + list(func.attrs.get("tl.size_vars", ()))
        arg_types = [PTR if p in func.buffer_map else _scalar_arg_type(p.dtype) for p in params]
        fn = self.declare_function(symbol, ir.FunctionType(VOID, arg_types))
        if linkage:
            fn.linkage = linkage
        self.begin_function(fn, in_parallel=False)
        if noalias is None:
            noalias = bool(func.attrs.get("tir.noalias", False))
        for param, arg in zip(params, fn.args):
            arg.name = param.name
            buffer = func.buffer_map.get(param)
            if buffer is None:
                value = arg
                if param.dtype.is_bool():
                    value = self.builder.trunc(arg, llvm_type(param.dtype))
                self.env[param] = value
                continue
            self.env[param] = self.env[buffer.data] = arg
            _describe_pointer(arg, buffer, noalias)
            if not _offset_is_zero(buffer):
                self.no_inbounds.add(buffer.data)
        self.visit(func.body)
        self.finish_function()
        return fn

    def declare_function(self, symbol: str, fnty) -> ir.Function:
        """The function ``symbol``: the declaration a call made before it was defined,
        or a new one."""
        fn = self.module.globals.get(symbol)
        if isinstance(fn, ir.Function) and fn.is_declaration and fn.function_type == fnty:
            return fn
        return ir.Function(self.module, fnty, symbol)

    def call_subroutine(self, op):
        """A call of another function of the module (``call_tir``; checked by
        verify_lowered), with its arguments as that function takes them."""
        symbol, callee = self.subroutines[op.args[0].value]
        types = [
            PTR if p in callee.buffer_map else _scalar_arg_type(p.dtype) for p in callee.params
        ]
        fn = self.declare_function(symbol, ir.FunctionType(VOID, types))
        args = []
        for arg, arg_type in zip(op.args[1:], types):
            value = self.visit(arg)
            args.append(value if value.type == arg_type else self.builder.zext(value, arg_type))
        return self.builder.call(fn, args)

    def begin_function(self, fn, in_parallel):
        """Start emitting into ``fn`` with an empty environment. The entry block holds
        only allocas (see :meth:`alloca`) and is closed by :meth:`finish_function`."""
        self.function = fn
        self.entry = fn.append_basic_block("entry")
        self.builder = ir.IRBuilder(fn.append_basic_block("body"))
        self.env = {}
        self.in_parallel = in_parallel

    def finish_function(self):
        """Return from the current block and close the entry block."""
        self.builder.ret_void()
        ir.IRBuilder(self.entry).branch(self.function.blocks[1])

    def save_context(self):
        return (self.function, self.entry, self.builder, self.env, self.in_parallel)

    def restore_context(self, saved):
        self.function, self.entry, self.builder, self.env, self.in_parallel = saved

    def alloca(self, ty, name="", align=None):
        """Stack storage in the entry block (where SROA and mem2reg look for it)."""
        builder = ir.IRBuilder(self.entry)
        slot = builder.alloca(ty, name=name)
        if align:
            slot.align = align
        # llvmlite types the slot ``ty*`` and then mis-types GEPs through it; the module
        # uses opaque pointers throughout (the printed alloca does not change)
        slot.type = PTR
        return slot

    def buffer_ptr(self, buffer):
        try:
            return self.env[buffer.data]
        except KeyError:
            raise BuildError(f"llvm codegen: buffer {buffer.name!r} has no storage here") from None

    def element_ptr(self, buffer, base_ptr, index):
        ptr = super().element_ptr(buffer, base_ptr, index)
        if buffer.data in self.no_inbounds:
            ptr.inbounds = False
        return ptr

    # ---------------------------------------------------------- statements
    def visit_seq_stmt(self, op):
        for stmt in op.seq:
            self.visit(stmt)

    def visit_buffer_store(self, op):
        (index,) = op.indices
        self.store_value(op.buffer, index, op.value)

    def visit_evaluate(self, op):
        if isinstance(op.value, E.Call) and op.value.op in ("break_loop", "continue_loop"):
            self.jump(op.value.op)
        elif not isinstance(op.value, E.IntImm):
            self.visit(op.value)

    def jump(self, kind: str):
        """``break``/``continue``: a branch to the innermost loop's exit or latch; the
        code after it (unreachable) goes to a block of its own."""
        if not self.loop_exits:
            raise BuildError(f"T.{kind}() outside a loop")
        latch, done = self.loop_exits[-1]
        self.builder.branch(done if kind == "break_loop" else latch)
        self.builder.position_at_end(self.builder.append_basic_block("after.jump"))

    def visit_let_stmt(self, op):
        self.env[op.var] = self.visit(op.value)
        self.visit(op.body)

    def visit_attr_stmt(self, op):
        self.visit(op.body)

    def visit_decl_buffer(self, op):
        self.visit(op.body)

    def visit_assert_stmt(self, op):
        ok = self.builder.append_basic_block("assert.ok")
        fail = self.builder.append_basic_block("assert.fail")
        self.builder.cbranch(self.visit(op.condition), ok, fail)
        self.builder.position_at_end(fail)
        if isinstance(op.message, E.Call) and op.message.op == BOUNDS_ERROR:
            self.emit_bounds_failure(op.message)
        else:
            message = op.message.value if isinstance(op.message, E.StringImm) else str(op.message)
            self.emit_failure(message)
        self.builder.position_at_end(ok)
        self.visit(op.body)

    def emit_bounds_failure(self, call):
        """Record a failed bounds check -- its site and values -- and return. Only the
        thread whose compare-and-swap claims the empty slot writes the values."""
        site, *values = call.args
        b = self.builder
        values = [b.sext(v, ir.IntType(64)) if v.type.width < 64 else v
                  for v in (self.visit(x) for x in values[:MAX_ERROR_VALUES])]  # fmt: skip
        instr = ir.instructions.CmpXchg(
            b.block, self.error_slot, ir.Constant(PTR, None),
            self.string_constant(site.value), "monotonic", "monotonic", "claim",
        )  # fmt: skip
        b._insert(instr)
        with b.if_then(b.extract_value(instr, 1)):
            for i, value in enumerate(values):
                slot = b.gep(self.error_values, [constant("int64", i)], source_etype=value.type)
                # llvmlite checks stores against typed pointers; the IR is opaque.
                store = ir.instructions.StoreInstr(b.block, value, slot)
                store.align = 8
                b._insert(store)
        b.ret_void()

    def emit_failure(self, message: str):
        """Record ``message`` as the error of this call and return."""
        self.atomic_store(self.string_constant(message), self.error_slot)
        self.builder.ret_void()

    # llvmlite's store_atomic/load_atomic insist on typed pointers; these build the
    # same instructions for opaque ones. Monotonic: threads of a parallel loop may fail
    # together, and any one message will do.
    def atomic_store(self, value, ptr):
        instr = ir.instructions.StoreAtomicInstr(self.builder.block, value, ptr, "monotonic", 8)
        self.builder._insert(instr)

    def atomic_load(self, ptr, typ):
        instr = ir.instructions.LoadAtomicInstr(self.builder.block, ptr, "monotonic", 8, typ=typ)
        self.builder._insert(instr)
        return instr

    def visit_if_then_else(self, op):
        cond = self.visit(op.condition)
        then_block = self.builder.append_basic_block("if.then")
        done = self.builder.append_basic_block("if.end")
        else_block = self.builder.append_basic_block("if.else") if op.else_case else done
        self.builder.cbranch(cond, then_block, else_block)
        for block, body in ((then_block, op.then_case), (else_block, op.else_case)):
            if body is None:
                continue
            self.builder.position_at_end(block)
            self.visit(body)
            self.builder.branch(done)
        self.builder.position_at_end(done)

    def visit_while(self, op):
        header = self.builder.append_basic_block("while.cond")
        body = self.builder.append_basic_block("while.body")
        done = self.builder.append_basic_block("while.end")
        self.builder.branch(header)
        self.builder.position_at_end(header)
        self.builder.cbranch(self.visit(op.condition), body, done)
        self.builder.position_at_end(body)
        self.loop_exits.append((header, done))
        self.visit(op.body)
        self.loop_exits.pop()
        self.builder.branch(header)
        self.builder.position_at_end(done)

    def visit_allocate_const(self, op):
        raise BuildError("the llvm backend does not support T.allocate_const")

    def visit_allocate(self, op):
        elem = storage_type(op.dtype)
        count = 1
        for extent in op.extents:
            count = count * extent.value if isinstance(extent, E.IntImm) and count else None
        if count is not None and count * element_bytes(op.dtype) <= STACK_LIMIT_BYTES:
            self.env[op.buffer_var] = self.alloca(
                ir.ArrayType(elem, max(count, 1)), op.buffer_var.name, 64
            )
            self.visit(op.body)
            return
        nbytes = constant("int64", element_bytes(op.dtype))
        for extent in op.extents:
            nbytes = self.builder.mul(nbytes, self.cast(self.visit(extent), extent.dtype, INT64))
        storage = self.call_function("malloc", PTR, [nbytes])
        self.env[op.buffer_var] = storage
        self.visit(op.body)
        self.call_function("free", VOID, [storage])

    def visit_for(self, op):
        if op.kind is ForKind.PARALLEL and not self.in_parallel and self.options.num_threads > 1:
            parallel.emit_parallel_for(self, op)
            return
        hints = []
        if op.kind is ForKind.VECTORIZED:
            body = vectorize_body(op)
            if body is not None:
                self.visit(body)
                return
            hints.append(("llvm.loop.vectorize.enable", True))
            if isinstance(op.extent, E.IntImm) and op.extent.value & (op.extent.value - 1) == 0:
                hints.append(("llvm.loop.vectorize.width", op.extent.value))
        elif op.kind is ForKind.UNROLLED:
            hints.append(("llvm.loop.unroll.enable", None))
        elif op.kind is ForKind.SERIAL:
            hints.extend(serial_loop_hints(op))
        self.emit_loop(op.loop_var, op.min, op.extent, op.step, lambda: self.visit(op.body), hints)

    def emit_loop(
        self, loop_var, start, extent, step, emit_body, hints=(), start_value=None, end_value=None
    ):
        """A counted loop ``for loop_var in range(start, start + extent, step)``; the
        bounds may be given as expressions or as already-computed values."""
        dtype = loop_var.dtype
        self.index_nsw += 1
        try:
            lo = start_value if start_value is not None else self.visit(start)
            hi = (
                end_value
                if end_value is not None
                else self.builder.add(lo, self.visit(extent), flags=self._int_flags(dtype))
            )
            stride = self.visit(step) if step is not None else constant(dtype, 1)
        finally:
            self.index_nsw -= 1
        before = self.builder.block
        header = self.builder.append_basic_block("for.cond")
        body = self.builder.append_basic_block("for.body")
        done = self.builder.append_basic_block("for.end")
        self.builder.branch(header)
        self.builder.position_at_end(header)
        index = self.builder.phi(llvm_type(dtype), name=loop_var.name)
        compare = self.builder.icmp_unsigned if dtype.is_uint() else self.builder.icmp_signed
        self.builder.cbranch(compare("<", index, hi), body, done)
        self.builder.position_at_end(body)
        self.env[loop_var] = index
        # the increment has a block of its own: `continue` branches to it
        latch_block = self.builder.append_basic_block("for.latch")
        self.loop_exits.append((latch_block, done))
        emit_body()
        self.loop_exits.pop()
        self.builder.branch(latch_block)
        self.builder.position_at_end(latch_block)
        flags = ("nuw",) if dtype.is_uint() else ("nsw",)
        following = self.builder.add(index, stride, flags=flags)
        latch = self.builder.branch(header)
        if hints:
            latch.set_metadata("llvm.loop", self._loop_id(hints))
        index.add_incoming(lo, before)
        index.add_incoming(following, latch_block)
        self.builder.position_at_end(done)

    def _loop_id(self, hints):
        nodes = []
        for name, value in hints:
            if value is None:
                nodes.append(self.module.add_metadata([name]))
            elif isinstance(value, bool):
                nodes.append(self.module.add_metadata([name, ir.Constant(ir.IntType(1), value)]))
            else:
                nodes.append(self.module.add_metadata([name, ir.Constant(I32, value)]))
        return _LoopID(self.module, nodes)


def _scalar_arg_type(dtype):
    return I8 if dtype.is_bool() else llvm_type(dtype)


def _offset_is_zero(buffer) -> bool:
    return isinstance(buffer.elem_offset, E.IntImm) and buffer.elem_offset.value == 0


def _describe_pointer(arg, buffer, noalias: bool):
    """Attributes the optimiser may rely on: no aliasing (when the function promises
    it), element alignment, and the bytes known to be readable."""
    if noalias:
        arg.add_attribute("noalias")
    arg.attributes.align = element_bytes(buffer.dtype)
    if not _offset_is_zero(buffer):
        return
    extent = constant_extent(buffer)
    if extent:
        arg.attributes.dereferenceable = extent * element_bytes(buffer.dtype)


def constant_extent(buffer) -> int | None:
    """Elements from the buffer's start to one past its last element, if constant."""
    values = [s.value if isinstance(s, E.IntImm) else None for s in buffer.shape]
    if None in values:
        return None
    if not buffer.strides:
        total = 1
        for v in values:
            total *= v
        return total
    strides = [s.value if isinstance(s, E.IntImm) else None for s in buffer.strides]
    if None in strides or any(s < 0 for s in strides) or any(v == 0 for v in values):
        return None
    return sum((v - 1) * abs(s) for v, s in zip(values, strides)) + 1

"""Expressions to LLVM instructions.

:class:`ExprEmitter` is the expression half of the code generator; the statement half
(:mod:`.codegen`) derives from it and provides the builder, the variable environment
and the buffer pointers. Every method returns an ``llvmlite.ir`` value.

Semantics follow C, like the C backend: ``Div``/``Mod`` truncate, ``FloorDiv``/
``FloorMod`` round towards minus infinity (fixed up from ``sdiv``/``srem``), float to
int casts truncate (``fptosi``), ``!=`` on floats is true for NaN. ``and``/``or`` whose
right side loads memory or calls a function are evaluated lazily, as C's ``&&`` is, so
that ``i < n and A[i] > 0`` never reads out of bounds.
"""

from __future__ import annotations

from llvmlite import ir

from tilelang.errors import BuildError
from tilelang.ir import expr as E
from tilelang.ir.dtype import DataType
from tilelang.ir.functor import NodeFunctor, StmtExprVisitor

from . import intrinsics
from .types import I8, I32, I64, constant, element_bytes, llvm_type
from .types import storage_type as _storage_type

_INT_CMP = {"EQ": "==", "NE": "!=", "LT": "<", "LE": "<=", "GT": ">", "GE": ">="}


class _HasEffects(StmtExprVisitor):
    """Finds loads and calls: what lazy ``and``/``or`` must not evaluate eagerly."""

    found = False

    def visit_buffer_load(self, op):
        self.found = True

    def visit_call(self, op):
        self.found = True


def has_effects(expr) -> bool:
    """True when ``expr`` loads memory or calls a function."""
    finder = _HasEffects()
    finder.visit(expr)
    return finder.found


class ExprEmitter(NodeFunctor):
    """Emits expressions with ``self.builder`` in the environment ``self.env``."""

    builder: ir.IRBuilder
    env: dict
    fast_math: bool = False
    index_nsw: int = 0  # > 0 while emitting an index: overflow there is UB anyway

    # ----------------------------------------------------------- leaves
    def visit_var(self, op):
        try:
            return self.env[op]
        except KeyError:
            raise BuildError(
                f"llvm codegen: variable {op.name!r} is used but not defined"
            ) from None

    def visit_int_imm(self, op):
        return constant(op.dtype, op.value)

    def visit_float_imm(self, op):
        return constant(op.dtype, op.value)

    def visit_string_imm(self, op):
        return self.string_constant(op.value)

    # ----------------------------------------------------------- casts
    def visit_cast(self, op):
        return self.cast(self.visit(op.value), op.value.dtype, op.dtype)

    def cast(self, value, src, dst):
        """``value`` of dtype ``src`` converted to ``dst`` with C's rules."""
        b, target = self.builder, llvm_type(dst)
        if src == dst:
            return value
        s, d = src.element_of(), dst.element_of()
        if d.is_bool():
            zero = constant(src, 0)
            if s.is_float():
                return b.fcmp_unordered("!=", value, zero)
            return b.icmp_unsigned("!=", value, zero)
        if s.is_float() and d.is_float():
            if d.bits > s.bits:
                return b.fpext(value, target)
            if d.bits == 16 and s.bits == 64:
                return _double_to_half(b, value, dst.lanes)
            return b.fptrunc(value, target) if d.bits < s.bits else value
        if s.is_float():
            return b.fptosi(value, target) if d.is_int() else b.fptoui(value, target)
        signed = s.is_int()
        if d.is_float() and d.bits == 16:
            # through double (exact up to 2**53, far past float16's range): no libcall
            wide = self.cast(value, src, DataType("float64").with_lanes(dst.lanes))
            return _double_to_half(b, wide, dst.lanes)
        if d.is_float():
            return b.sitofp(value, target) if signed else b.uitofp(value, target)
        if d.bits > s.bits:
            return b.sext(value, target) if signed else b.zext(value, target)
        return b.trunc(value, target) if d.bits < s.bits else value

    # ----------------------------------------------------------- arithmetic
    def _int_flags(self, dtype):
        return ("nsw",) if self.index_nsw and dtype.element_of().is_int() else ()

    def _float_flags(self):
        # ``contract`` lets a*b + c become one fused multiply-add, as GCC's default
        # -ffp-contract=fast and TVM's LLVM codegen allow; -fast-math allows more.
        return ("fast",) if self.fast_math else ("contract",)

    def _arith(self, op, float_name, int_name):
        a, b = self.visit(op.a), self.visit(op.b)
        if op.dtype.element_of().is_float():
            return getattr(self.builder, float_name)(a, b, flags=self._float_flags())
        return getattr(self.builder, int_name)(a, b, flags=self._int_flags(op.dtype))

    def visit_add(self, op):
        return self._arith(op, "fadd", "add")

    def visit_sub(self, op):
        return self._arith(op, "fsub", "sub")

    def visit_mul(self, op):
        return self._arith(op, "fmul", "mul")

    def visit_div(self, op):
        a, b = self.visit(op.a), self.visit(op.b)
        t = op.dtype.element_of()
        if t.is_float():
            return self.builder.fdiv(a, b, flags=self._float_flags())
        return self.builder.sdiv(a, b) if t.is_int() else self.builder.udiv(a, b)

    def visit_mod(self, op):
        a, b = self.visit(op.a), self.visit(op.b)
        t = op.dtype.element_of()
        if t.is_float():
            return self.builder.frem(a, b)
        return self.builder.srem(a, b) if t.is_int() else self.builder.urem(a, b)

    def visit_floor_div(self, op):
        a, b = self.visit(op.a), self.visit(op.b)
        t, bld = op.dtype.element_of(), self.builder
        if t.is_float():
            return self.call_intrinsic("llvm.floor", op.dtype, [bld.fdiv(a, b)])
        if not t.is_int():
            return bld.udiv(a, b)
        quotient, remainder = bld.sdiv(a, b), bld.srem(a, b)
        return bld.sub(
            quotient, bld.zext(self._needs_floor_fix(remainder, b, op.dtype), quotient.type)
        )

    def visit_floor_mod(self, op):
        a, b = self.visit(op.a), self.visit(op.b)
        t, bld = op.dtype.element_of(), self.builder
        if t.is_float():
            floor = self.call_intrinsic("llvm.floor", op.dtype, [bld.fdiv(a, b)])
            return bld.fsub(a, bld.fmul(floor, b))
        if not t.is_int():
            return bld.urem(a, b)
        remainder = bld.srem(a, b)
        fix = self._needs_floor_fix(remainder, b, op.dtype)
        return bld.select(fix, bld.add(remainder, b), remainder)

    def _needs_floor_fix(self, remainder, divisor, dtype):
        """True where truncation rounded up: a non-zero remainder whose sign differs
        from the divisor's."""
        bld, zero = self.builder, constant(dtype, 0)
        nonzero = bld.icmp_signed("!=", remainder, zero)
        signs_differ = bld.icmp_signed("<", bld.xor(remainder, divisor), zero)
        return bld.and_(nonzero, signs_differ)

    def _min_max(self, op, cmp):
        a, b = self.visit(op.a), self.visit(op.b)
        t = op.dtype.element_of()
        if t.is_float():
            cond = self.builder.fcmp_ordered(cmp, a, b)
        elif t.is_int():
            cond = self.builder.icmp_signed(cmp, a, b)
        else:
            cond = self.builder.icmp_unsigned(cmp, a, b)
        return self.builder.select(cond, a, b)

    def visit_min(self, op):
        return self._min_max(op, "<")

    def visit_max(self, op):
        return self._min_max(op, ">")

    # ----------------------------------------------------------- logic
    def visit_cmp_op(self, op):
        symbol = _INT_CMP[type(op).__name__]
        a, b = self.visit(op.a), self.visit(op.b)
        t = op.a.dtype.element_of()
        if t.is_float():
            if symbol == "!=":
                return self.builder.fcmp_unordered(symbol, a, b)
            return self.builder.fcmp_ordered(symbol, a, b)
        if t.is_int():
            return self.builder.icmp_signed(symbol, a, b)
        return self.builder.icmp_unsigned(symbol, a, b)

    def visit_and(self, op):
        return self._logical(op, is_and=True)

    def visit_or(self, op):
        return self._logical(op, is_and=False)

    def _logical(self, op, is_and):
        a = self.visit(op.a)
        combine = self.builder.and_ if is_and else self.builder.or_
        if op.dtype.lanes > 1 or not has_effects(op.b):
            return combine(a, self.visit(op.b))
        # lazy: evaluate b only when a does not decide the result already
        start = self.builder.block
        rhs_block = self.builder.append_basic_block("logic.rhs")
        done = self.builder.append_basic_block("logic.end")
        if is_and:
            self.builder.cbranch(a, rhs_block, done)
        else:
            self.builder.cbranch(a, done, rhs_block)
        self.builder.position_at_end(rhs_block)
        b = self.visit(op.b)
        rhs_end = self.builder.block
        self.builder.branch(done)
        self.builder.position_at_end(done)
        phi = self.builder.phi(a.type)
        phi.add_incoming(ir.Constant(a.type, 0 if is_and else 1), start)
        phi.add_incoming(b, rhs_end)
        return phi

    def visit_not(self, op):
        return self.builder.xor(self.visit(op.a), constant(op.dtype, 1))

    def visit_select(self, op):
        cond = self.visit(op.condition)
        return self.builder.select(cond, self.visit(op.true_value), self.visit(op.false_value))

    # ----------------------------------------------------------- vectors
    def visit_ramp(self, op):
        base, lanes = self.visit(op.base), op.lanes
        if isinstance(op.stride, E.IntImm):
            steps = constant(op.dtype, 0)
            steps = ir.Constant(
                steps.type, [ir.Constant(base.type, k * op.stride.value) for k in range(lanes)]
            )
            return self.builder.add(self.splat(base, lanes), steps)
        iota = ir.Constant(llvm_type(op.dtype), [ir.Constant(base.type, k) for k in range(lanes)])
        stride = self.splat(self.visit(op.stride), lanes)
        return self.builder.add(self.splat(base, lanes), self.builder.mul(stride, iota))

    def visit_broadcast(self, op):
        return self.splat(self.visit(op.value), op.lanes)

    def splat(self, value, lanes):
        """``value`` repeated over ``lanes`` lanes."""
        vector = ir.VectorType(value.type, lanes)
        one = self.builder.insert_element(
            ir.Constant(vector, ir.Undefined), value, ir.Constant(I32, 0)
        )
        mask = ir.Constant(ir.VectorType(I32, lanes), [ir.Constant(I32, 0)] * lanes)
        return self.builder.shuffle_vector(one, ir.Constant(vector, ir.Undefined), mask)

    # ----------------------------------------------------------- memory
    def visit_buffer_load(self, op):
        (index,) = op.indices
        buffer = op.buffer
        elem = _storage_type(buffer.dtype)
        align = element_bytes(buffer.dtype)
        base_ptr = self.buffer_ptr(buffer)
        lanes = index.dtype.lanes
        if lanes == 1:
            value = self.builder.load(
                self.element_ptr(buffer, base_ptr, index), typ=elem, align=align
            )
        elif self._is_contiguous(index):
            ptr = self.element_ptr(buffer, base_ptr, index.base)
            value = self.builder.load(ptr, typ=ir.VectorType(elem, lanes), align=align)
        else:
            value = ir.Constant(ir.VectorType(elem, lanes), ir.Undefined)
            for lane, ptr in enumerate(self._lane_ptrs(buffer, base_ptr, index)):
                scalar = self.builder.load(ptr, typ=elem, align=align)
                value = self.builder.insert_element(value, scalar, ir.Constant(I32, lane))
        if buffer.dtype.is_bool():
            value = self.builder.trunc(value, llvm_type(op.dtype))
        return value

    @staticmethod
    def _is_contiguous(index):
        return (
            isinstance(index, E.Ramp)
            and isinstance(index.stride, E.IntImm)
            and index.stride.value == 1
        )

    def element_ptr(self, buffer, base_ptr, index):
        """The address of element ``index`` (a scalar expression) of ``buffer``."""
        self.index_nsw += 1
        try:
            offset = self.visit(index)
        finally:
            self.index_nsw -= 1
        if index.dtype.is_uint():
            offset = self.builder.zext(offset, I64)
        return self.builder.gep(
            base_ptr, [offset], inbounds=True, source_etype=_storage_type(buffer.dtype)
        )

    def _lane_ptrs(self, buffer, base_ptr, index):
        if isinstance(index, E.Ramp):
            for lane in range(index.lanes):
                yield self.element_ptr(buffer, base_ptr, index.base + index.stride * lane)
            return
        self.index_nsw += 1
        try:
            offsets = self.visit(index)
        finally:
            self.index_nsw -= 1
        etype = _storage_type(buffer.dtype)
        for lane in range(index.dtype.lanes):
            offset = self.builder.extract_element(offsets, ir.Constant(I32, lane))
            if index.dtype.element_of().is_uint():
                offset = self.builder.zext(offset, I64)
            yield self.builder.gep(base_ptr, [offset], inbounds=True, source_etype=etype)

    def store_value(self, buffer, index, value_expr):
        """``buffer[index] = value`` for scalar or vector indices."""
        value = self.visit(value_expr)
        if buffer.dtype.is_bool():
            value = self.builder.zext(
                value,
                _storage_type(buffer.dtype)
                if index.dtype.lanes == 1
                else ir.VectorType(I8, index.dtype.lanes),
            )
        align = element_bytes(buffer.dtype)
        base_ptr = self.buffer_ptr(buffer)
        if index.dtype.lanes == 1:
            self.builder.store(value, self.element_ptr(buffer, base_ptr, index), align=align)
        elif self._is_contiguous(index):
            self.builder.store(value, self.element_ptr(buffer, base_ptr, index.base), align=align)
        else:
            for lane, ptr in enumerate(self._lane_ptrs(buffer, base_ptr, index)):
                scalar = self.builder.extract_element(value, ir.Constant(I32, lane))
                self.builder.store(scalar, ptr, align=align)

    # ----------------------------------------------------------- the rest
    def visit_let(self, op):
        self.env[op.var] = self.visit(op.value)
        try:
            return self.visit(op.body)
        finally:
            del self.env[op.var]

    def visit_call(self, op):
        return intrinsics.emit_call(self, op)

    def call_intrinsic(self, name, dtype, args):
        """A call of the overloaded LLVM intrinsic ``name`` at ``dtype``."""
        ty = llvm_type(dtype)
        full_name = f"{name}.{_intrinsic_suffix(ty)}"
        fn = self.module.globals.get(full_name)
        if fn is None:
            fn = ir.Function(self.module, ir.FunctionType(ty, [ty] * len(args)), full_name)
        return self.builder.call(fn, args, fastmath=self._float_flags())

    def call_function(self, name, ret_type, args, var_arg=False):
        """A call of the C function ``name``, declared on first use."""
        fn = self.module.globals.get(name)
        if fn is None:
            fnty = ir.FunctionType(ret_type, [a.type for a in args], var_arg=var_arg)
            fn = ir.Function(self.module, fnty, name)
        return self.builder.call(fn, args)

    def string_constant(self, text: str):
        """A pointer to a NUL-terminated global copy of ``text``."""
        data = bytearray(text.encode() + b"\0")
        name = f".str.{len(self.strings)}"
        existing = self.strings.get(text)
        if existing is not None:
            return existing
        var = ir.GlobalVariable(self.module, ir.ArrayType(I8, len(data)), name)
        var.global_constant = True
        var.linkage = "private"
        var.initializer = ir.Constant(ir.ArrayType(I8, len(data)), data)
        self.strings[text] = var
        return var

    def generic_visit(self, node):
        raise BuildError(f"the llvm backend cannot compile a {type(node).__name__} here: {node!r}")


def _intrinsic_suffix(ty) -> str:
    """LLVM's overload suffix: ``f32``, ``v16f32``, ``i64``..."""
    if isinstance(ty, ir.VectorType):
        return f"v{ty.count}{_intrinsic_suffix(ty.element)}"
    if isinstance(ty, ir.IntType):
        return f"i{ty.width}"
    return {ir.HalfType: "f16", ir.FloatType: "f32", ir.DoubleType: "f64"}[type(ty)]


def _double_to_half(b, value, lanes: int):
    """float64 -> float16, correctly rounded, without the ``__truncdfhf2`` libcall a JIT
    cannot resolve: round to float32 *to odd* (set the last bit when inexact), then to
    float16. Float32 keeps 13 more bits than float16, so the second rounding sees every
    tie and every sticky bit the direct one would."""

    def vec(ty):
        return ir.VectorType(ty, lanes) if lanes > 1 else ty

    def splat(ty, number):
        return ir.Constant(vec(ty), [number] * lanes if lanes > 1 else number)

    single = b.fptrunc(value, vec(ir.FloatType()))
    inexact = b.fcmp_unordered("!=", b.fpext(single, vec(ir.DoubleType())), value)
    bits = b.bitcast(single, vec(I32))
    # infinities and NaNs keep their bits (an odd infinity would be a NaN)
    magnitude = b.and_(bits, splat(I32, 0x7FFFFFFF))
    finite = b.icmp_unsigned("<", magnitude, splat(I32, 0x7F800000))
    odd = b.or_(bits, splat(I32, 1))
    rounded = b.select(b.and_(inexact, finite), odd, bits)
    return b.fptrunc(b.bitcast(rounded, vec(ir.FloatType())), vec(ir.HalfType()))

"""Calls: tilelang intrinsics to LLVM intrinsics, libm functions and extern calls.

float16/float32 ``exp``, ``exp2``, ``log``, ``log2``, ``log10``, ``tanh``, ``sigmoid``,
``erf`` and ``pow`` are inline IR kernels (:mod:`.vector_math`), so they vectorise.
Other float math uses LLVM's intrinsics where LLVM has one (``llvm.sqrt``,
``llvm.floor``...), so vector arguments stay vectors and constant arguments fold; the
rest call libm (``erff``, ``log1pf``...), lane by lane for vectors. ``round`` rounds
half to even (``llvm.nearbyint``), like TVM and NumPy. ``call_extern`` declares the C
function from its arguments' types; the symbol is resolved when the module is loaded,
against the process and the libraries loaded with ``load_library_permanently``.
"""

from __future__ import annotations

from llvmlite import ir

from tilelang.errors import BuildError
from tilelang.ir import expr as E
from tilelang.ir.dtype import FLOAT32
from tilelang.ir.op import reinterpret_problem

from . import vector_math
from .types import I32, constant, llvm_type, storage_type

#: tilelang name -> overloaded LLVM intrinsic (one float argument or two)
_LLVM_MATH = {
    "exp": "llvm.exp", "exp2": "llvm.exp2", "exp10": "llvm.exp10", "log": "llvm.log",
    "log2": "llvm.log2", "log10": "llvm.log10", "sqrt": "llvm.sqrt", "sin": "llvm.sin",
    "cos": "llvm.cos", "tan": "llvm.tan", "asin": "llvm.asin", "acos": "llvm.acos",
    "atan": "llvm.atan", "sinh": "llvm.sinh", "cosh": "llvm.cosh", "tanh": "llvm.tanh",
    "floor": "llvm.floor", "ceil": "llvm.ceil", "trunc": "llvm.trunc", "round": "llvm.nearbyint",
    "nearbyint": "llvm.nearbyint", "pow": "llvm.pow", "copysign": "llvm.copysign",
}  # fmt: skip

#: tilelang name -> libm function (double precision name; ``f`` is appended for float32)
_LIBM = {
    "log1p": "log1p", "erf": "erf", "atan2": "atan2", "asinh": "asinh", "acosh": "acosh",
    "atanh": "atanh", "hypot": "hypot", "nextafter": "nextafter",
}  # fmt: skip


def emit_call(emitter, op: E.Call):
    """The value of the call ``op``."""
    name = op.op
    if vector_math.has_kernel(name, op.dtype):
        return vector_math.emit(emitter, name, op.dtype, [emitter.visit(a) for a in op.args])
    if name in _LLVM_MATH:
        args = [emitter.visit(a) for a in op.args]
        return emitter.call_intrinsic(_LLVM_MATH[name], op.dtype, args)
    if name in _LIBM:
        return _libm(emitter, _LIBM[name], op)
    handler = _HANDLERS.get(name)
    if handler is None:
        raise BuildError(f"the llvm backend does not know the intrinsic {name!r}")
    return handler(emitter, op)


def _libm(emitter, base_name, op):
    """A libm call, lane by lane for vectors; float16 computes in float32."""
    dtype = op.dtype.element_of()
    compute = dtype if dtype.bits >= 32 else FLOAT32
    fname = base_name + ("f" if compute.bits == 32 else "")
    args = [emitter.visit(a) for a in op.args]
    b = emitter.builder

    def scalar_call(values):
        values = [emitter.cast(v, dtype, compute) for v in values]
        result = emitter.call_function(fname, llvm_type(compute), values)
        return emitter.cast(result, compute, dtype)

    if op.dtype.lanes == 1:
        return scalar_call(args)
    result = ir.Constant(llvm_type(op.dtype), ir.Undefined)
    for lane in range(op.dtype.lanes):
        index = ir.Constant(I32, lane)
        lane_value = scalar_call([b.extract_element(a, index) for a in args])
        result = b.insert_element(result, lane_value, index)
    return result


def _rsqrt(emitter, op):
    root = emitter.call_intrinsic("llvm.sqrt", op.dtype, [emitter.visit(op.args[0])])
    return emitter.builder.fdiv(constant(op.dtype, 1.0), root, flags=emitter._float_flags())


def _sigmoid(emitter, op):
    b, x = emitter.builder, emitter.visit(op.args[0])
    e = emitter.call_intrinsic("llvm.exp", op.dtype, [b.fneg(x)])
    one = constant(op.dtype, 1.0)
    return b.fdiv(one, b.fadd(one, e))


def _fmod(emitter, op):
    return emitter.builder.frem(emitter.visit(op.args[0]), emitter.visit(op.args[1]))


def _abs(emitter, op):
    x, t = emitter.visit(op.args[0]), op.dtype.element_of()
    if t.is_float():
        return emitter.call_intrinsic("llvm.fabs", op.dtype, [x])
    if t.is_uint() or t.is_bool():
        return x
    b = emitter.builder
    negative = b.icmp_signed("<", x, constant(op.dtype, 0))
    return b.select(negative, b.neg(x), x)


def _isnan(emitter, op):
    x = emitter.visit(op.args[0])
    if not op.args[0].dtype.element_of().is_float():
        return constant(op.dtype, 0)
    return emitter.builder.fcmp_unordered("uno", x, x)


def _splat(value, ty):
    """The integer constant ``value`` of ``ty`` (splatted over the lanes of a vector)."""
    if isinstance(ty, ir.VectorType):
        return ir.Constant(ty, [ir.Constant(ty.element, value)] * ty.count)
    return ir.Constant(ty, value)


def _lanes_of(ty, element):
    return ir.VectorType(element, ty.count) if isinstance(ty, ir.VectorType) else element


def _bf16_to_float(emitter, op):
    """bfloat16 bits -> float32: the bits become the top half of a float32."""
    b, bits = emitter.builder, emitter.visit(op.args[0])
    wide = b.zext(bits, _lanes_of(bits.type, ir.IntType(32)))
    return b.bitcast(b.shl(wide, _splat(16, wide.type)), _lanes_of(bits.type, ir.FloatType()))


def _float_to_bf16(emitter, op):
    """float32 -> bfloat16 bits, to nearest even; a NaN keeps its top bits, made quiet."""
    b, value = emitter.builder, emitter.visit(op.args[0])
    i32 = _lanes_of(value.type, ir.IntType(32))
    bits = b.bitcast(value, i32)
    top = b.lshr(bits, _splat(16, i32))
    bias = b.add(b.and_(top, _splat(1, i32)), _splat(0x7FFF, i32))
    rounded = b.lshr(b.add(bits, bias), _splat(16, i32))
    magnitude = b.and_(bits, _splat(0x7FFFFFFF, i32))
    is_nan = b.icmp_unsigned(">", magnitude, _splat(0x7F800000, i32))
    result = b.select(is_nan, b.or_(top, _splat(0x40, i32)), rounded)
    return b.trunc(result, _lanes_of(value.type, ir.IntType(16)))


def _reinterpret(emitter, op):
    problem = reinterpret_problem(op)
    if problem is not None:
        raise BuildError(f"the llvm backend cannot compute {problem}")
    return emitter.builder.bitcast(emitter.visit(op.args[0]), llvm_type(op.dtype))


def _bitwise(name):
    def emit(emitter, op):
        a, b = (emitter.visit(x) for x in op.args)
        return getattr(emitter.builder, name)(a, b)

    return emit


def _bitwise_not(emitter, op):
    return emitter.builder.not_(emitter.visit(op.args[0]))


def _shift_right(emitter, op):
    a, b = (emitter.visit(x) for x in op.args)
    if op.dtype.element_of().is_uint():
        return emitter.builder.lshr(a, b)
    return emitter.builder.ashr(a, b)


def _popcount(emitter, op):
    """``llvm.ctpop``: an integer intrinsic, called without float flags."""
    x = emitter.visit(op.args[0])
    ty = x.type
    lanes = f"v{ty.count}" if isinstance(ty, ir.VectorType) else ""
    width = (ty.element if isinstance(ty, ir.VectorType) else ty).width
    name = f"llvm.ctpop.{lanes}i{width}"
    fn = emitter.module.globals.get(name)
    if fn is None:
        fn = ir.Function(emitter.module, ir.FunctionType(x.type, [x.type]), name)
    return emitter.builder.call(fn, [x])


def _likely(emitter, op):
    return emitter.visit(op.args[0])


def _if_then_else(emitter, op):
    """Only the branch taken is evaluated (unlike Select)."""
    b = emitter.builder
    cond = emitter.visit(op.args[0])
    then_block = b.append_basic_block("ite.then")
    else_block = b.append_basic_block("ite.else")
    done = b.append_basic_block("ite.end")
    b.cbranch(cond, then_block, else_block)
    incoming = []
    for block, arg in ((then_block, op.args[1]), (else_block, op.args[2])):
        b.position_at_end(block)
        incoming.append((emitter.visit(arg), b.block))
        b.branch(done)
    b.position_at_end(done)
    phi = b.phi(llvm_type(op.dtype))
    for value, block in incoming:
        phi.add_incoming(value, block)
    return phi


def _access_ptr(emitter, op):
    annotation, data, offset = op.args[0], op.args[1], op.args[2]
    base = emitter.visit(data)
    emitter.index_nsw += 1
    try:
        index = emitter.visit(offset)
    finally:
        emitter.index_nsw -= 1
    return emitter.builder.gep(
        base, [index], inbounds=True, source_etype=storage_type(annotation.dtype)
    )


def _call_extern(emitter, op):
    if not op.args or not isinstance(op.args[0], E.StringImm):
        raise BuildError("call_extern needs the function name as its first (string) argument")
    name = op.args[0].value
    args = []
    for arg in op.args[1:]:
        value = emitter.visit(arg)
        if arg.dtype.is_bool():  # C passes bool as a byte
            value = emitter.builder.zext(value, storage_type(arg.dtype))
        args.append(value)
    ret = storage_type(op.dtype) if op.dtype.is_bool() else llvm_type(op.dtype)
    existing = emitter.module.globals.get(name)
    if existing is not None and [a.type for a in args] != list(existing.function_type.args):
        raise BuildError(f"call_extern {name!r} is called with different argument types")
    result = emitter.call_function(name, ret, args)
    if op.dtype.is_bool():
        result = emitter.builder.icmp_unsigned("!=", result, ir.Constant(ret, 0))
    return result


_HANDLERS = {
    "call_tir": lambda emitter, op: emitter.call_subroutine(op),
    "rsqrt": _rsqrt,
    "sigmoid": _sigmoid,
    "fmod": _fmod,
    "abs": _abs,
    "isnan": _isnan,
    "bitwise_and": _bitwise("and_"),
    "bitwise_or": _bitwise("or_"),
    "bitwise_xor": _bitwise("xor"),
    "bitwise_not": _bitwise_not,
    "shift_left": _bitwise("shl"),
    "shift_right": _shift_right,
    "likely": _likely,
    "popcount": _popcount,
    "bf16_to_float": _bf16_to_float,
    "float_to_bf16": _float_to_bf16,
    "reinterpret": _reinterpret,
    "if_then_else": _if_then_else,
    "tvm_access_ptr": _access_ptr,
    "call_extern": _call_extern,
}

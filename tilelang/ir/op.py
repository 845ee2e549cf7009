"""Intrinsics: the table of ``Call`` operators and the functions that build them.

A ``Call``'s ``op`` is a name from :data:`INTRINSICS`. Each entry says how many
arguments the intrinsic takes and how its result type follows from them, so the
parser, the printer and every backend agree on one list.
"""

from __future__ import annotations

import attrs

from tilelang.ir import expr as E
from tilelang.ir.convert import as_bool, binary, const_int_value, convert, match_types
from tilelang.ir.dtype import BOOL, HANDLE, INT32, DataType

UINT32 = DataType("uint32")


@attrs.frozen
class OpInfo:
    """How an intrinsic is called and typed.

    ``result`` is ``"float"`` (same as the argument; only floats can be built),
    ``"same"`` (same as the first argument), ``"int"`` (same as the argument, which
    must be an integer), ``"bool"``, ``"handle"``, ``"uint32"``, ``"int32"`` (with the
    first argument's lanes), ``"arg1"`` (the type of the second argument) or ``"given"``
    (the caller states the dtype, as ``call_extern`` does).
    """

    name: str
    num_args: int | None
    result: str


_FLOAT_MATH = (
    "exp", "exp2", "exp10", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sin",
    "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "sigmoid", "erf",
    "asinh", "acosh", "atanh",
    "floor", "ceil", "round", "trunc", "nearbyint",
)  # fmt: skip

INTRINSICS: dict[str, OpInfo] = {
    **{name: OpInfo(name, 1, "float") for name in _FLOAT_MATH},
    "pow": OpInfo("pow", 2, "float"),
    "atan2": OpInfo("atan2", 2, "float"),
    "fmod": OpInfo("fmod", 2, "float"),
    "hypot": OpInfo("hypot", 2, "float"),
    "copysign": OpInfo("copysign", 2, "float"),
    "nextafter": OpInfo("nextafter", 2, "float"),
    "popcount": OpInfo("popcount", 1, "int"),
    "abs": OpInfo("abs", 1, "same"),
    "isnan": OpInfo("isnan", 1, "bool"),
    "bitwise_and": OpInfo("bitwise_and", 2, "same"),
    "bitwise_or": OpInfo("bitwise_or", 2, "same"),
    "bitwise_xor": OpInfo("bitwise_xor", 2, "same"),
    "bitwise_not": OpInfo("bitwise_not", 1, "same"),
    "shift_left": OpInfo("shift_left", 2, "same"),
    "shift_right": OpInfo("shift_right", 2, "same"),
    "if_then_else": OpInfo("if_then_else", 3, "given"),
    "likely": OpInfo("likely", 1, "bool"),
    "call_extern": OpInfo("call_extern", None, "given"),
    "tvm_access_ptr": OpInfo("tvm_access_ptr", 5, "handle"),
    "type_annotation": OpInfo("type_annotation", 0, "given"),
    "ret": OpInfo("ret", 1, "same"),
    # tensor-core fragment operations (as TVM's CUDA intrinsics; no CPU backend has them)
    "tvm_fill_fragment": OpInfo("tvm_fill_fragment", 6, "handle"),
    "tvm_load_matrix_sync": OpInfo("tvm_load_matrix_sync", 8, "handle"),
    "tvm_store_matrix_sync": OpInfo("tvm_store_matrix_sync", 8, "handle"),
    "tvm_mma_sync": OpInfo("tvm_mma_sync", 8, "handle"),
    "assume": OpInfo("assume", 1, "bool"),
    # the packed-call ABI of lowered host code (TVM's builtins); no backend runs them
    "tvm_struct_get": OpInfo("tvm_struct_get", 3, "given"),
    "tvm_struct_set": OpInfo("tvm_struct_set", 4, "given"),
    "tvm_stack_alloca": OpInfo("tvm_stack_alloca", 2, "handle"),
    "tvm_stack_make_shape": OpInfo("tvm_stack_make_shape", None, "given"),
    "tvm_stack_make_array": OpInfo("tvm_stack_make_array", 6, "given"),
    "tvm_call_packed": OpInfo("tvm_call_packed", None, "given"),
    "tvm_call_cpacked": OpInfo("tvm_call_cpacked", None, "given"),
    "tvm_call_packed_lowered": OpInfo("tvm_call_packed_lowered", None, "given"),
    "tvm_call_cpacked_lowered": OpInfo("tvm_call_cpacked_lowered", None, "given"),
    "isnullptr": OpInfo("isnullptr", 1, "bool"),  # a handle is NULL
    "tvm_tuple": OpInfo("tvm_tuple", None, "handle"),  # values of a buffer_bind_scope
    "tvm_throw_last_error": OpInfo("tvm_throw_last_error", 0, "given"),
    "TVMBackendAllocWorkspace": OpInfo("TVMBackendAllocWorkspace", 5, "given"),
    "TVMBackendFreeWorkspace": OpInfo("TVMBackendFreeWorkspace", 3, "given"),
    # TVM's fixed-point multiply (x * y * 2**s / 2**q, rounded), and its per-channel
    # form (x, y, left shift, right shift, q, left shift needed, right shift needed);
    # int32 results, computed through tilelang.transform.lower_intrinsics
    "q_multiply_shift": OpInfo("q_multiply_shift", 4, "int32"),
    "q_multiply_shift_per_axis": OpInfo("q_multiply_shift_per_axis", 7, "int32"),
    "call_llvm_pure_intrin": OpInfo("call_llvm_pure_intrin", None, "given"),
    "call_llvm_intrin": OpInfo(
        "call_llvm_intrin", None, "given"
    ),  # a fact for the simplifier; no runtime effect
    "address_of": OpInfo("address_of", 1, "handle"),  # the address of a buffer element
    "tvm_storage_sync": OpInfo("tvm_storage_sync", 1, "handle"),  # GPU barrier (ThreadSync)
    # an LLVM intrinsic's id, by name (kept by name: ids differ between LLVM versions)
    # CUDA warp shuffles (of the value, argument 1) and the active-lane mask; GPU only
    "tvm_warp_activemask": OpInfo("tvm_warp_activemask", 0, "uint32"),
    "tvm_warp_shuffle": OpInfo("tvm_warp_shuffle", 5, "arg1"),
    "tvm_warp_shuffle_up": OpInfo("tvm_warp_shuffle_up", 5, "arg1"),
    "tvm_warp_shuffle_down": OpInfo("tvm_warp_shuffle_down", 5, "arg1"),
    # a cross-thread reduction under T.attr(T.comm_reducer(...), "reduce_scope", ...)
    "tvm_thread_allreduce": OpInfo("tvm_thread_allreduce", None, "given"),
    "reinterpret": OpInfo("reinterpret", 1, "given"),  # the same bits as another type
    # bfloat16 on CPUs (tilelang.transform.legalize_bf16): uint16 bits -> float32, and
    # float32 -> the bits of the nearest bfloat16 (ties to even, NaN kept)
    "bf16_to_float": OpInfo("bf16_to_float", 1, "given"),
    "float_to_bf16": OpInfo("float_to_bf16", 1, "given"),
    "llvm_lookup_intrinsic_id": OpInfo("llvm_lookup_intrinsic_id", 1, "uint32"),
    # `break` / `continue` of the innermost serial or while loop (as statements)
    "break_loop": OpInfo("break_loop", 0, "handle"),
    "continue_loop": OpInfo("continue_loop", 0, "handle"),
    # a call of another function of the module, named by argument 0 (TVM's GlobalVar
    # call); typed by the callee's result, ``handle`` for none
    "call_tir": OpInfo("call_tir", None, "given"),
    # the run-time multiple of a scalable vector's length (Arm SVE); lanes of
    # scalable vectors are `k * T.vscale()`. No backend computes it (a BuildError).
    "vscale": OpInfo("vscale", 0, "int32"),
}


def reinterpret_problem(call: E.Call) -> str | None:
    """Why a backend cannot compute ``T.reinterpret(dtype, x)`` (the bits of ``x`` read
    as ``dtype``), or None: both types need lanes of one width, and neither may be
    bool or a handle."""
    src, dst = call.args[0].dtype, call.dtype
    if src.lanes != dst.lanes or src.element_of().bits != dst.element_of().bits:
        return f"reinterpret from {src} to {dst} changes the number of bits"
    if any(t.is_bool() or t.is_handle() for t in (src, dst)):
        return f"reinterpret from {src} to {dst}: bool and handle values have no bits to read"
    return None


def is_intrinsic(name: str) -> bool:
    return name in INTRINSICS


def call_intrin(name: str, *args, dtype=None, span=None) -> E.Call:
    """A call of the intrinsic ``name``, typed by its table entry."""
    info = INTRINSICS.get(name)
    if info is None:
        raise E.TIRTypeError(f"unknown intrinsic {name!r}")
    if info.num_args is not None and len(args) != info.num_args:
        raise E.TIRTypeError(f"T.{name} takes {info.num_args} arguments, got {len(args)}")
    args = tuple(convert(a) for a in args)
    if info.result == "float":
        if len(args) == 2:
            args = match_types(*args)
        # TVM types the call by its argument whatever it is (T.exp(0) is an int32
        # call); the backends compute float math of floats only (VerifyWellFormed)
        if args[0].dtype.element_of().is_handle():
            raise E.TIRTypeError(f"T.{name} needs a number, got {args[0].dtype}")
        dtype = args[0].dtype
    elif info.result == "int":
        if not args[0].dtype.element_of().is_integer():
            raise E.TIRTypeError(f"T.{name} needs an integer argument, got {args[0].dtype}")
        dtype = args[0].dtype
    elif info.result == "same":
        if len(args) == 2:
            args = match_types(*args)
        dtype = args[0].dtype
    elif info.result == "bool":
        dtype = BOOL
    elif info.result == "handle":
        dtype = HANDLE
    elif info.result == "uint32":
        dtype = UINT32
    elif info.result == "int32":
        lanes = args[0].dtype.lanes if args else 1
        if dtype is not None and DataType(dtype) != INT32.with_lanes(lanes):
            raise E.TIRTypeError(f"T.{name} is int32, not {dtype}")
        dtype = INT32.with_lanes(lanes)
    elif info.result == "arg1":
        dtype = args[1].dtype
    elif dtype is None:
        raise E.TIRTypeError(f"T.{name} needs an explicit dtype")
    return E.Call(DataType(dtype), name, args, span=span)


def _math(name):
    def build(x, span=None):
        return call_intrin(name, x, span=span)

    build.__name__ = name
    build.__doc__ = f"``{name}(x)`` of a float expression."
    return build


exp, exp2, log, log2, log10, sqrt, rsqrt = map(
    _math, ("exp", "exp2", "log", "log2", "log10", "sqrt", "rsqrt")
)
sin, cos, tan, tanh, sigmoid, erf = map(_math, ("sin", "cos", "tan", "tanh", "sigmoid", "erf"))
floor, ceil, round, trunc = map(_math, ("floor", "ceil", "round", "trunc"))  # noqa: A001


def abs(x, span=None):  # noqa: A001 - TVM's name
    return call_intrin("abs", x, span=span)


def pow(x, y, span=None):  # noqa: A001 - TVM's name
    return call_intrin("pow", x, y, span=span)


def max(a, b, span=None):  # noqa: A001 - TVM's name
    """``Max(a, b)``, typed by the operator rules."""
    return binary("max", a, b, span=span)


def min(a, b, span=None):  # noqa: A001 - TVM's name
    return binary("min", a, b, span=span)


def floordiv(a, b, span=None):
    return binary("floordiv", a, b, span=span)


def floormod(a, b, span=None):
    return binary("floormod", a, b, span=span)


def truncdiv(a, b, span=None):
    return binary("div", a, b, span=span)


def truncmod(a, b, span=None):
    return binary("mod", a, b, span=span)


def ceildiv(a, b, span=None):
    """``ceil(a / b)`` for non-negative integers, as ``(a + b - 1) // b``."""
    return floordiv(binary("sub", binary("add", a, b), 1), b, span=span)


def if_then_else(cond, t, f, span=None):
    """``t`` if ``cond`` else ``f``, evaluating only the branch taken (unlike Select)."""
    t, f = match_types(t, f)
    return E.Call(t.dtype, "if_then_else", (as_bool(cond), t, f), span=span)


def select(cond, t, f, span=None):
    t, f = match_types(t, f)
    return E.Select(as_bool(cond), t, f, span=span)


def call_extern(dtype, func_name: str, *args, span=None):
    """A call of the C function ``func_name`` returning ``dtype``."""
    return E.Call(
        DataType(dtype), "call_extern", (E.StringImm(func_name), *map(convert, args)), span=span
    )


def call_tir(func_name: str, dtype, *args, span=None):
    """A call of the module's function ``func_name``, whose result is ``dtype``."""
    return E.Call(
        DataType(dtype),
        "call_tir",
        (E.StringImm(func_name, span=span), *map(convert, args)),
        span=span,
    )


def type_annotation(dtype) -> E.Call:
    """A placeholder argument that carries a dtype (used by ``tvm_access_ptr``)."""
    return E.Call(DataType(dtype), "type_annotation", ())


def access_ptr(buffer, mode="r", offset=0, extent=None, span=None) -> E.Call:
    """A pointer into ``buffer``'s data; ``mode`` is any of ``"r"``, ``"w"``, ``"rw"``."""
    mask = (1 if "r" in mode else 0) | (2 if "w" in mode else 0)
    if mask == 0 or set(mode) - {"r", "w"}:
        raise E.TIRTypeError(f"access_ptr mode must be 'r', 'w' or 'rw', not {mode!r}")
    offset = convert(offset)
    if extent is None:
        extent = buffer.total_elements()
        if const_int_value(offset) != 0:
            extent = binary("sub", extent, offset)
    if const_int_value(buffer.elem_offset) != 0:
        # TVM's elem_offset + offset, folded as its operator folds an added 0
        if const_int_value(offset) == 0:
            offset = buffer.elem_offset
        else:
            offset = binary("add", buffer.elem_offset, offset)
    return E.Call(
        HANDLE,
        "tvm_access_ptr",
        (
            type_annotation(buffer.dtype),
            buffer.data,
            offset,
            convert(extent),
            E.IntImm(INT32, mask),
        ),
        span=span,
    )

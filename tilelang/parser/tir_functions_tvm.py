"""``T.*`` functions of the programs TVM prints and tests: limits, targets, thread
launches, constant storage, classic ``T.LetStmt``, and spellings of existing entries
(``T.cast(x, dtype)``, ``T.fabs``, ``T.bind``, ``T.meta_var``).

Registered into the same table as :mod:`tilelang.parser.tir_functions` (which imports
this module); see :mod:`tilelang.parser.tir_registry` for how an entry's signature is
its argument check.
"""

from __future__ import annotations

from tilelang.ir import Buffer, BufferLoad, Cast, FloatImm, IntImm, PrimExpr, Var, const
from tilelang.ir import op as ops
from tilelang.ir.expr import StringImm
from tilelang.parser import specs as S
from tilelang.parser.tir_registry import (
    ArgError,
    _kind,
    as_dict,
    as_dtype,
    as_expr,
    as_index,
    as_shape,
    as_str,
    tir_function,
)


@tir_function("target")
def target(spec, host=None):
    """``T.target("cuda")`` / ``T.target({"kind": "c"}, host="llvm")``: a
    :class:`tilelang.target.Target` as an attribute value."""
    from tilelang.errors import BuildError
    from tilelang.target import Target

    try:
        if host is None:
            return Target(spec)
        return Target(spec, host=str(Target(host)))
    except BuildError as exc:
        raise ArgError(str(exc), "spec") from None


@tir_function("allocate_const")
def allocate_const(data, dtype, extents, annotations=None):
    dtype = as_dtype(dtype)
    extents = as_shape(extents, "extents")
    values = _flat_numbers(data)
    count = 1
    for extent in extents:
        count = count * extent.value if isinstance(extent, IntImm) and count is not None else None
    if count is not None and count != len(values):
        raise ArgError(f"{len(values)} values for extents of {count} elements", "data")
    kind = float if dtype.is_float() else int
    if kind is int and any(isinstance(v, float) and not v.is_integer() for v in values):
        raise ArgError(f"{dtype} constants must be integers", "data")
    return S.AllocateConstSpec(
        tuple(kind(v) for v in values), dtype, extents, as_dict(annotations, "annotations")
    )


def _flat_numbers(data) -> list:
    if isinstance(data, (list, tuple)):
        return [x for item in data for x in _flat_numbers(item)]
    if isinstance(data, (IntImm, FloatImm)):
        return [data.value]
    if isinstance(data, bool) or not isinstance(data, (int, float)):
        raise ArgError(f"T.allocate_const takes numbers, got {_kind(data)}", "data")
    return [data]


@tir_function("env_thread")
def env_thread(thread_tag):
    return S.EnvThreadSpec(as_str(thread_tag, "thread_tag"))


@tir_function("launch_thread")
def launch_thread(thread, extent):
    if not isinstance(thread, (str, Var)):
        raise ArgError(
            f"expected a thread tag or a T.env_thread variable, got {_kind(thread)}", "thread"
        )
    return S.LaunchSpec(thread, as_expr(as_index(extent, "extent"), "extent"))


@tir_function("cast")
def cast_lower(value, dtype, *, span=None):
    """TVM's ``T.cast(value, dtype)`` (arguments the other way round from T.Cast)."""
    return Cast(as_dtype(dtype), as_expr(value, "value"), span=span)


@tir_function("bind")
def bind(value):
    """``x = T.bind(v)`` binds a variable (a let) even to a literal."""
    return as_expr(value, "value")


@tir_function("LetStmt")
def let_stmt(value, type_annotation=None, var=None):
    """``with T.LetStmt(value) as x:``: ``x`` is bound to ``value`` in the body;
    ``with T.LetStmt(value, var=y):`` binds the variable ``y`` declared before."""
    value = as_expr(value, "value")
    if var is not None:
        if not isinstance(var, Var):
            raise ArgError(f"expected a variable, got {_kind(var)}", "var")
        value = _typed_like(value, var.dtype)
    if type_annotation is not None and as_dtype(type_annotation) != value.dtype:
        raise ArgError(f"the value is {value.dtype}, not {type_annotation}", "type_annotation")
    return S.LetSpec(value, var)


def _typed_like(value, dtype):
    """A literal ``value`` in the type of the variable it is bound to."""
    integral = isinstance(value, IntImm) and (dtype.is_integer() or dtype.is_float())
    if (integral or isinstance(value, FloatImm) and dtype.is_float()) and value.dtype != dtype:
        return const(value.value, dtype)
    if value.dtype != dtype:
        raise ArgError(f"the value is {value.dtype}, the variable {dtype}", "value")
    return value


@tir_function("meta_var")
def meta_var(value):
    """``T.meta_var(v)`` is ``v`` itself (a name for a value, not a variable)."""
    return value


@tir_function("min_value")
def min_value(dtype, *, span=None):
    return const(_limit(as_dtype(dtype), lowest=True), as_dtype(dtype), span=span)


@tir_function("max_value")
def max_value(dtype, *, span=None):
    return const(_limit(as_dtype(dtype), lowest=False), as_dtype(dtype), span=span)


def _limit(dtype, lowest: bool):
    """The least (or greatest) finite value of a scalar ``dtype``, as TVM defines it."""
    import numpy as np

    if dtype.lanes != 1:
        raise ArgError(f"a limit is of a scalar type, not {dtype}", "dtype")
    if dtype.is_uint():
        return 0 if lowest else 2**dtype.bits - 1
    if dtype.is_int():
        return -(2 ** (dtype.bits - 1)) if lowest else 2 ** (dtype.bits - 1) - 1
    if dtype.is_float() and str(dtype) == "bfloat16":
        big = 3.3895313892515355e38
    elif dtype.is_float() and dtype.bits in (16, 32, 64):
        big = float(np.finfo(f"float{dtype.bits}").max)
    else:
        raise ArgError(f"{dtype} has no limits tilelang knows", "dtype")
    return -big if lowest else big


@tir_function("fabs")
def fabs(x, dtype=None, *, span=None):
    x = as_expr(x, "x")
    if dtype is not None and as_dtype(dtype) != x.dtype:
        raise ArgError(f"T.fabs of a {x.dtype} value has dtype {x.dtype}", "dtype")
    if not x.dtype.element_of().is_float():
        raise ArgError(f"T.fabs needs a float argument, got {x.dtype}", "x")
    return ops.abs(x, span=span)


@tir_function("llvm_lookup_intrinsic_id")
def llvm_lookup_intrinsic_id(name, *, span=None):
    """``T.llvm_lookup_intrinsic_id("llvm.ctpop.i8")``: the id of an LLVM intrinsic, a
    uint32 kept by name (TVM resolves it to a number that differs between LLVM
    versions), for ``T.call_llvm_pure_intrin``."""
    name = as_str(name, "name")
    if not name.startswith("llvm."):
        raise ArgError(f"an LLVM intrinsic's name starts with 'llvm.', got {name!r}", "name")
    return ops.call_intrin("llvm_lookup_intrinsic_id", StringImm(name), span=span)


@tir_function("address_of")
def address_of(obj, dtype=None, *, span=None):
    """``T.address_of(A[i, j])`` (an element's address), ``T.address_of(A)`` (the
    address of the buffer's first element, as TVM defines it) or of a scalar variable;
    a ``dtype`` given must be a handle."""
    if dtype is not None and not as_dtype(dtype).is_handle():
        raise ArgError(f"an address is a handle, not {as_dtype(dtype)}", "dtype")
    if isinstance(obj, Buffer):
        obj = BufferLoad(obj, tuple(IntImm("int32", 0) for _ in obj.shape), span=span)
    if not isinstance(obj, (BufferLoad, Var)):
        raise ArgError(f"takes a buffer, a buffer element or a variable, got {_kind(obj)}", "obj")
    return ops.call_intrin("address_of", obj, span=span)


@tir_function("reinterpret")
def reinterpret(*args, dtype=None, span=None):
    """``T.reinterpret("float32", x)`` (or ``T.reinterpret(x, dtype="float32")``, as
    the printer writes it): ``x``'s bits read as ``dtype``, of the same width unless
    one side is a handle."""
    if dtype is not None:
        args, target = (dtype, *args), as_dtype(dtype, "dtype")
    if len(args) != 2:
        raise ArgError(f"takes a dtype and a value, got {len(args)} arguments", "args")
    if dtype is None:
        target = as_dtype(args[0], "args")
    value = as_expr(args[1], "args")
    source = value.dtype
    if not (target.is_handle() or source.is_handle()) and (
        target.bits * target.lanes != source.bits * source.lanes
    ):
        raise ArgError(f"cannot reinterpret {source} as {target}: they differ in width", "args")
    return ops.call_intrin("reinterpret", value, dtype=target, span=span)


@tir_function("comm_reducer", lambdas=("combiner",))
def comm_reducer(combiner, identity, *, span=None):
    """``T.comm_reducer(lambda x, y: x + y, [T.float32(0)])``: a reducer of ``n``
    values whose combiner takes ``2n`` parameters (the ``n`` left values, then the
    ``n`` right ones), typed by the identities."""
    from tilelang.ir.comm_reducer import CommReducer

    if not isinstance(combiner, S.LambdaSpec):
        raise ArgError(f"expected a lambda, got {_kind(combiner)}", "combiner")
    if not isinstance(identity, (list, tuple)) or not identity:
        raise ArgError("expected a list of identity values", "identity")
    identity = [as_expr(v, "identity") for v in identity]
    n = len(identity)
    if len(combiner.params) != 2 * n:
        raise ArgError(
            f"{n} identit{'y needs' if n == 1 else 'ies need'} a lambda of "
            f"{2 * n} parameters, got {len(combiner.params)}",
            "combiner",
        )
    if len(set(combiner.params)) != 2 * n:
        raise ArgError("the lambda's parameters must be distinct", "combiner")
    params = [Var(p, v.dtype, span=span) for p, v in zip(combiner.params, identity * 2)]
    result = combiner.apply(params)
    result = list(result) if isinstance(result, (tuple, list)) else [result]
    if len(result) != n:
        raise ArgError(f"the lambda gives {len(result)} values for {n} identities", "combiner")
    result = [as_expr(r, "combiner") for r in result]
    return CommReducer(params[:n], params[n:], result, identity, span=span)


@tir_function("call_tir")
def call_tir(callee, *args, dtype=None, span=None):
    """``T.call_tir(Module.f, x, y)``: a call of the module's function ``f`` (as
    ``Module.f(x, y)``); ``T.call_tir("f", x, dtype="float32")`` names it by string,
    the form a function printed on its own takes."""
    from tilelang.parser.subroutines import FunctionRef, make_call

    values = [as_expr(a, "args") for a in args]
    if isinstance(callee, FunctionRef):
        if dtype is not None:
            raise ArgError("the result type of a module function is its own", "dtype")
        if len(values) != callee.num_params:
            raise ArgError(f"{callee.name} takes {callee.num_params} arguments", "args")
        return make_call(callee, values, span)
    name = as_str(callee, "callee")
    return ops.call_tir(name, "handle" if dtype is None else as_dtype(dtype), *values, span=span)


@tir_function("realize", regions=("buffer_slice",))
def realize(buffer_slice, storage_scope=None, condition=True):
    """``T.realize(A[0:16, 0:8], "global")``: TVM's pre-TensorIR storage realisation
    (parsed and printed; not lowered)."""
    from tilelang.ir import BufferRegion

    if not isinstance(buffer_slice, BufferRegion):
        raise ArgError(f"expected a buffer region such as A[0:16], got {_kind(buffer_slice)}")
    scope = None if storage_scope is None else as_str(storage_scope, "storage_scope")
    condition = const(condition) if isinstance(condition, bool) else condition
    if not (isinstance(condition, PrimExpr) and condition.dtype.is_bool()):
        raise ArgError(f"expected a bool condition, got {_kind(condition)}", "condition")
    return S.RealizeSpec(buffer_slice, scope, condition)

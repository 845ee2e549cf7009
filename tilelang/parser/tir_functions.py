"""The table of ``T.*`` functions: what each accepts and what it builds.

Each entry is registered with :func:`tilelang.parser.tir_registry.tir_function`; its
signature is the argument check (see that module). Names of dtypes (``T.int32``,
``T.float16x4``...) are not in the table: any valid dtype spelling is a
:class:`DTypeFunction`.
"""

from __future__ import annotations

import attrs

from tilelang.ir import (
    BufferRegion,
    Call,
    Cast,
    IterVar,
    PrimExpr,
    Range,
    StringImm,
    Var,
    const,
    convert,
)
from tilelang.ir import op as ops
from tilelang.ir.convert import binary, match_types
from tilelang.ir.expr import Broadcast, Ramp
from tilelang.ir.lanes import vscale_factor
from tilelang.parser import specs as S
from tilelang.parser.simplify import extent_of
from tilelang.parser.tir_registry import (
    TABLE,
    ArgError,
    DTypeFunction,
    TIRFunction,
    _kind,
    as_dict,
    as_dtype,
    as_expr,
    as_index,
    as_int,
    as_shape,
    as_str,
    tir_function,
)

# -------------------------------------------------------------------------- loops


def _loop(kind, start, stop, step=None, thread=None, annotations=None) -> S.LoopSpec:
    if stop is None:
        start, stop = 0, start
    start, stop = as_index(start, "start"), as_index(stop, "stop")
    if isinstance(start, int) and isinstance(stop, int):
        lo, hi = const(start), const(stop)
    else:
        lo, hi = match_types(start, stop)
    extent = extent_of(lo, hi)
    if step is not None:
        step = as_index(step, "step")
        step = None if isinstance(step, int) and step == 1 else convert(step, lo.dtype)
    annotations = as_dict(annotations, "annotations") or None
    return S.LoopSpec((S.LoopDesc(lo, extent, kind, thread, annotations, step),))


def _plain_loop(kind: str):
    """``T.<kind>(start, stop=None, step=None, *, annotations=None)``."""

    def loop(start, stop=None, step=None, *, annotations=None):
        return _loop(kind, start, stop, step, annotations=annotations)

    loop.__name__ = loop.__qualname__ = kind
    return loop


# the loop kinds that differ only by their kind (T.range is T.serial)
for _names in (("serial", "range"), ("parallel",), ("vectorized",), ("unroll",)):
    tir_function(*_names)(_plain_loop(_names[0]))


@tir_function("thread_binding")
def thread_binding(start, stop=None, thread=None, *, annotations=None):
    if isinstance(stop, str) and thread is None:  # T.thread_binding(8, "threadIdx.x")
        stop, thread = None, stop
    if thread is None:
        raise ArgError('T.thread_binding needs thread="threadIdx.x" (or another axis)')
    return _loop("thread_binding", start, stop, None, as_str(thread, "thread"), annotations)


@tir_function("grid")
def grid(*extents):
    if not extents:
        raise ArgError("T.grid needs at least one extent")
    loops = []
    for extent in extents:
        extent = as_index(extent, "extents")
        extent = const(extent) if isinstance(extent, int) else extent
        loops.append(S.LoopDesc(const(0, extent.dtype), extent, "serial"))
    return S.LoopSpec(tuple(loops))


# ------------------------------------------------------------------------- blocks


@tir_function("block", "sblock")
def block(name_hint="", no_realize=False):
    return S.BlockSpec(as_str(name_hint, "name_hint"))


@tir_function("init")
def init():
    return S.InitSpec()


@tir_function("where")
def where(predicate):
    return S.Directive("where", predicate)


@tir_function("reads", regions=("regions",))
def reads(*regions):
    return S.Directive("reads", _regions(regions))


@tir_function("writes", regions=("regions",))
def writes(*regions):
    return S.Directive("writes", _regions(regions))


def _regions(values) -> tuple:
    if len(values) == 1 and isinstance(values[0], (list, tuple)):
        values = tuple(values[0])  # T.reads([A[...], B[...]])
    for value in values:
        if not isinstance(value, BufferRegion):
            raise ArgError(f"expected a buffer region such as A[i, 0:4], got {_kind(value)}")
    return tuple(values)


@tir_function("block_attr", "sblock_attr")
def block_attr(attrs):
    return S.Directive("block_attr", as_dict(attrs, "attrs"))


@tir_function("func_attr")
def func_attr(attrs):
    return S.Directive("func_attr", as_dict(attrs, "attrs"))


def _axis(iter_type):
    def axis(dom, binding, dtype="int32"):
        binding = as_expr(as_index(binding, "binding"), "binding")
        if isinstance(dom, (tuple, list)):
            if len(dom) != 2:
                raise ArgError("a domain is an extent or a (min, max) pair", "dom")
            lo, hi = (as_index(v, "dom") for v in dom)
            lo, hi = convert(lo, binding.dtype), convert(hi, binding.dtype)
            dom = Range(lo, extent_of(lo, hi))
        elif isinstance(dom, Range):
            pass
        else:
            extent = as_index(dom, "dom")
            dom = Range(const(0, binding.dtype), convert(extent, binding.dtype))
        return S.AxisSpec(iter_type, dom, binding, binding.dtype)

    return axis


for _names, _type in (
    (("axis.spatial", "axis.S"), IterVar.DataPar),
    (("axis.reduce", "axis.R"), IterVar.CommReduce),
    (("axis.scan",), IterVar.Ordered),
    (("axis.opaque",), IterVar.Opaque),
):
    tir_function(*_names)(_axis(_type))


@tir_function("axis.remap")
def remap(kinds, bindings, dtype="int32"):
    kinds = as_str(kinds, "kinds")
    if not isinstance(bindings, (list, tuple)):
        bindings = (bindings,)
    if set(kinds) - set("SR"):
        raise ArgError(f"T.axis.remap kinds are 'S' and 'R' letters, got {kinds!r}", "kinds")
    if len(kinds) != len(bindings):
        raise ArgError(
            f"T.axis.remap got {len(kinds)} kinds {kinds!r} but {len(bindings)} variables",
            "kinds",
        )
    for value in bindings:
        if not isinstance(value, Var):
            raise ArgError(f"T.axis.remap binds loop variables, got {_kind(value)}", "bindings")
    return S.RemapSpec(kinds, tuple(bindings))


# ------------------------------------------------------------------------ buffers


def _buffer_spec(shape, dtype, data, strides, elem_offset, scope, offset_factor, separators=None):
    shape = as_shape(shape)
    if isinstance(strides, (list, tuple)):
        # TVM's strides=("A_s0",): a string names a new symbolic stride
        strides = tuple(
            Var(s, "int32") if isinstance(s, str) and s.isidentifier() else s for s in strides
        )
    strides = as_shape(strides, "strides") if strides is not None else ()
    if elem_offset is not None:
        elem_offset = as_expr(as_index(elem_offset, "elem_offset"), "elem_offset")
    if data is not None and not (isinstance(data, Var) and data.dtype.is_handle()):
        raise ArgError(f"data= must be a handle variable, got {_kind(data)}", "data")
    return S.BufferSpec(
        shape,
        as_dtype(dtype),
        data,
        strides,
        elem_offset,
        as_str(scope, "scope"),
        as_int(offset_factor, "offset_factor"),
        _separators(separators),
    )


def _separators(value) -> tuple:
    """``axis_separators=[1]``: constant axis positions."""
    if value is None:
        return ()
    if not isinstance(value, (list, tuple)):
        raise ArgError("axis_separators must be a list of axis positions", "axis_separators")
    return tuple(as_int(v, "axis_separators") for v in value)


@tir_function("Buffer")
def buffer(
    shape,
    dtype="float32",
    data=None,
    strides=None,
    elem_offset=None,
    scope="global",
    align=0,
    offset_factor=0,
    buffer_type="",
    axis_separators=None,
):
    return _buffer_spec(
        shape, dtype, data, strides, elem_offset, scope, offset_factor, axis_separators
    )


@tir_function("match_buffer", regions=("param",))
def match_buffer(
    param,
    shape=None,
    dtype="float32",
    data=None,
    strides=None,
    elem_offset=None,
    scope="global",
    align=-1,
    offset_factor=0,
    buffer_type="default",
    axis_separators=None,
):
    if shape is None:
        if not isinstance(param, BufferRegion):
            raise ArgError("T.match_buffer of a handle needs a shape", "shape")
        shape = tuple(r.extent for r in param.region)
    spec = _buffer_spec(
        shape, dtype, data, strides, elem_offset, scope, offset_factor, axis_separators
    )
    if not isinstance(param, BufferRegion) and not (
        isinstance(param, Var) and param.dtype.is_handle()
    ):
        raise ArgError(f"T.match_buffer matches a handle or a region, not {_kind(param)}", "param")
    return S.MatchBufferSpec(param, spec)


@tir_function("alloc_buffer", "sblock_alloc_buffer")
def alloc_buffer(
    shape,
    dtype="float32",
    data=None,
    strides=None,
    elem_offset=None,
    scope="global",
    align=-1,
    offset_factor=0,
    buffer_type="default",
    axis_separators=None,
    annotations=None,
):
    spec = _buffer_spec(
        shape, dtype, data, strides, elem_offset, scope, offset_factor, axis_separators
    )
    return S.AllocBufferSpec(spec, as_dict(annotations, "annotations"))


@tir_function("decl_buffer")
def decl_buffer(
    shape,
    dtype="float32",
    data=None,
    strides=None,
    elem_offset=None,
    scope="global",
    align=0,
    offset_factor=0,
    buffer_type="",
    axis_separators=None,
):
    spec = _buffer_spec(
        shape, dtype, data, strides, elem_offset, scope, offset_factor, axis_separators
    )
    return S.DeclBufferSpec(spec)


@tir_function("allocate")
def allocate(extents, dtype, scope="global", condition=True, annotations=None):
    condition = as_expr(condition, "condition")
    return S.AllocateSpec(
        as_shape(extents, "extents"),
        as_dtype(dtype),
        as_str(scope, "scope"),
        condition,
        as_dict(annotations, "annotations"),
    )


# -------------------------------------------------------------------- statements


@tir_function("evaluate")
def evaluate(value):
    return S.Evaluated(as_expr(value, "value"))


@tir_function("Assert")
def assert_(condition, message):
    if not isinstance(message, tuple):  # ("ValueError", ["..."]) is checked by `with`
        message = as_str(message, "message")
    return S.AssertSpec(as_expr(condition, "condition"), message)


@tir_function("attr")
def attr(node, attr_key, value):
    return S.AttrSpec(node, as_str(attr_key, "attr_key"), as_expr(value, "value"))


# -------------------------------------------------------------------- expressions


@tir_function("Cast")
def cast(dtype, value, *, span=None):
    value = as_expr(value, "value")
    return Cast(as_dtype(dtype), value, span=span)


@tir_function("Select")
def select(condition, true_value, false_value, *, span=None):
    return ops.select(condition, true_value, false_value, span=span)


@tir_function("if_then_else")
def if_then_else(cond, t, f, dtype=None, *, span=None):
    return ops.if_then_else(cond, t, f, span=span)


@tir_function("Ramp", "ramp")
def ramp(base, stride, lanes, *, span=None):
    base, stride = match_types(as_expr(base, "base"), stride)
    return Ramp(base, stride, _as_lanes(lanes), span=span)


@tir_function("Broadcast", "broadcast")
def broadcast(value, lanes, *, span=None):
    return Broadcast(as_expr(value, "value"), _as_lanes(lanes), span=span)


def _as_lanes(lanes):
    """A constant lane count, or a scalable one (``4 * T.vscale()``)."""
    if isinstance(lanes, PrimExpr) and vscale_factor(lanes) is not None:
        return lanes
    return as_int(lanes, "lanes")


def _binary_function(op_name):
    def build(a, b, *, span=None):
        return binary(op_name, a, b, span=span)

    return build


for _names, _op in (
    (("max",), "max"),
    (("min",), "min"),
    (("floordiv",), "floordiv"),
    (("floormod",), "floormod"),
    (("truncdiv", "Div"), "div"),
    (("truncmod", "Mod"), "mod"),
):
    tir_function(*_names)(_binary_function(_op))


@tir_function("ceildiv")
def ceildiv(a, b, *, span=None):
    return ops.ceildiv(a, b, span=span)


@tir_function("call_extern")
def call_extern(*args, dtype=None, span=None):
    args = list(args)
    if dtype is None:
        if not args:
            raise ArgError("T.call_extern needs a dtype and a function name")
        dtype = args.pop(0)
    if not args:
        raise ArgError("T.call_extern needs the name of the C function")
    name = as_str(args[0], "args")
    if dtype == "":
        dtype = "handle"  # TVM's void result; tilelang spells an ignored result "handle"
    call = ops.call_extern(
        as_dtype(dtype), name, *(as_expr(a, "args") for a in args[1:]), span=span
    )
    return locate_arguments(call, span)


def locate_arguments(call, span):
    """``call`` with the arguments it made itself (the function-name string, a
    ``type_annotation``) located at the call: every node from source has a span."""
    args = tuple(
        attrs.evolve(a, span=span) if isinstance(a, (Call, StringImm)) and a.span is None else a
        for a in call.args
    )
    if all(a is b for a, b in zip(args, call.args)):
        return call
    return attrs.evolve(call, args=args)


@tir_function("type_annotation")
def type_annotation(dtype):
    return ops.type_annotation(as_dtype(dtype))


def _intrinsic(name):
    def build(*args, dtype=None, span=None):
        args = [as_expr(a, "args") for a in args]
        return ops.call_intrin(
            name, *args, dtype=None if dtype is None else as_dtype(dtype), span=span
        )

    return build


for _name in ops.INTRINSICS:
    if _name not in TABLE:
        tir_function(_name)(_intrinsic(_name))

# TVM's other spellings and the functions of its printed and lowered programs
from tilelang.parser import tir_functions_tvm  # noqa: E402,F401 - registers its entries

# Looked up by the builder (with a specific treatment), listed for "did you mean".
SPECIAL_NAMES = ("let", "Let", "prim_func", "handle", "axis")


__all__ = ["TABLE", "SPECIAL_NAMES", "ArgError", "DTypeFunction", "TIRFunction", "tir_function"]

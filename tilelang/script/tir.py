"""``T``: the TIR namespace of decorated Python programs.

    from tilelang.script import tir as T

    @T.prim_func
    def add_one(A: T.Buffer((8,), "float32")):
        for i in range(8):
            A[i] = A[i] + T.float32(1)

``@T.prim_func`` hands the function's source text to the .tir parser (the body is
never run by Python) and returns a :class:`tilelang.ir.PrimFunc`. The names used in
annotations (``T.Buffer``, ``T.handle``, ``T.int32``...) exist here so that Python can
evaluate them; the IR-building helpers (``T.float32(0)``, ``T.max``, ``T.exp``...)
build IR directly, as TVM's ``T`` does.
"""

from __future__ import annotations

import sys

from tilelang.ir import Cast as _CastNode
from tilelang.ir import DataType, Var, const, convert
from tilelang.ir import op as _op
from tilelang.script.source import in_class_body, parse_object

# -------------------------------------------------------------------- decorators


def prim_func(func=None, *, private: bool = False, s_tir: bool = True, check_well_formed=True):
    """Parse the decorated function as a TIR prim_func (returns a PrimFunc).

    ``s_tir`` (TVM 0.27: the body has schedulable blocks) and ``check_well_formed`` are
    accepted for TVM's spelling; tilelang has one TIR and always checks it.

    Inside an ``@I.ir_module`` class the function is returned unchanged: the module
    decorator parses the whole class at once.
    """

    def decorate(function):
        # the defining scope: decorate() is called by prim_func() or, as
        # @T.prim_func(...), directly by the decorated definition
        frame = sys._getframe(1 if func is None else 2)
        if in_class_body(frame):
            return function
        module = parse_object(function, frame, function)
        ((_, parsed),) = module.functions.items()
        return parsed

    if func is None:
        return decorate
    return decorate(func)


# ------------------------------------------------------- names used in annotations


class BufferType:
    """``T.Buffer``: ``T.Buffer((m, n), "float32")`` and ``T.Buffer[(m, n), "float32"]``
    as Python annotations; the parser reads their meaning from the source."""

    def __init__(self, shape=None, dtype="float32", *args, **kwargs):
        self.shape, self.dtype = shape, dtype
        self._more = (args, kwargs)

    def tir_spec(self):
        """What the parser makes of this call when Python code run while parsing (a
        helper the decorated body calls) returns it: a buffer over ``data``, as
        ``T.Buffer(...)`` written in the body."""
        from tilelang.parser import tir_functions

        args, kwargs = self._more
        return tir_functions.buffer(self.shape, self.dtype, *args, **kwargs)

    def __class_getitem__(cls, item):
        return cls(*item) if isinstance(item, tuple) else cls(item)

    def __repr__(self):
        return f"T.Buffer({self.shape!r}, {self.dtype!r})"


Buffer = BufferType


def decl_buffer(shape, dtype="float32", *args, **kwargs):
    """``T.decl_buffer(...)`` in Python code run while a decorated function is parsed
    (a helper its body calls): the declaration the parser makes of it in the body."""
    from tilelang.parser import tir_functions

    return tir_functions.decl_buffer(shape, dtype, *args, **kwargs)


class _DType:
    """``T.int32`` / ``T.float32``...: a type in annotations; called, it builds a
    constant (``T.float32(0)``), a cast of an expression, or a new variable
    (``T.int64()``)."""

    def __init__(self, name: str):
        self.dtype = DataType(name)

    def __call__(self, value=None, *, name: str = "v"):
        if value is None:
            return Var(name, self.dtype)
        if isinstance(value, str) and self.dtype.is_float():
            return const(float(value), self.dtype)
        if hasattr(value, "dtype") and not isinstance(value, (int, float)):
            return convert(value).astype(self.dtype)
        return const(value, self.dtype)

    def __repr__(self):
        return f"T.{self.dtype}"


handle = _DType("handle")
bool = _DType("bool")  # noqa: A001 - TVM's name
int8, int16, int32, int64 = (_DType(f"int{b}") for b in (8, 16, 32, 64))
uint8, uint16, uint32, uint64 = (_DType(f"uint{b}") for b in (8, 16, 32, 64))
float16, float32, float64 = (_DType(f"float{b}") for b in (16, 32, 64))
bfloat16 = _DType("bfloat16")

# ------------------------------------------------------------- IR-building helpers

max = _op.max  # noqa: A001 - TVM's names
min = _op.min  # noqa: A001
abs = _op.abs  # noqa: A001
pow = _op.pow  # noqa: A001
exp, exp2, log, log2, log10 = _op.exp, _op.exp2, _op.log, _op.log2, _op.log10
sqrt, rsqrt, sin, cos, tan, tanh = _op.sqrt, _op.rsqrt, _op.sin, _op.cos, _op.tan, _op.tanh
sigmoid, erf, floor, ceil, round, trunc = (  # noqa: A001
    _op.sigmoid,
    _op.erf,
    _op.floor,
    _op.ceil,
    _op.round,
    _op.trunc,
)
floordiv, floormod, truncdiv, truncmod, ceildiv = (
    _op.floordiv,
    _op.floormod,
    _op.truncdiv,
    _op.truncmod,
    _op.ceildiv,
)
if_then_else, Select, call_extern = _op.if_then_else, _op.select, _op.call_extern


def _intrinsic(name: str):
    def build(*args, span=None):
        return _op.call_intrin(name, *args, span=span)

    build.__name__ = build.__qualname__ = name
    build.__doc__ = f"``T.{name}(...)``: a call of the {name} intrinsic."
    return build


# the other math intrinsics, under TVM's names
_MORE_MATH = (
    "exp10", "log1p", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh",
    "atan2", "fmod", "hypot", "copysign", "nextafter", "popcount", "nearbyint", "isnan",
)  # fmt: skip
globals().update({_name: _intrinsic(_name) for _name in _MORE_MATH})


def Cast(dtype, value):  # noqa: N802 - TVM's name
    """``T.Cast("float32", x)``."""
    return _CastNode(DataType(dtype), convert(value))


__all__ = [
    "prim_func", "Buffer", "decl_buffer", "handle", "bool", "int8", "int16", "int32",
    "int64", "uint8",
    "uint16", "uint32", "uint64", "float16", "float32", "float64", "max", "min", "abs",
    "pow", "exp", "exp2", "log", "log2", "log10", "sqrt", "rsqrt", "sin", "cos", "tan",
    "tanh", "sigmoid", "erf", "floor", "ceil", "round", "trunc", "floordiv", "floormod",
    "truncdiv", "truncmod", "ceildiv", "if_then_else", "Select", "call_extern", "Cast",
    *_MORE_MATH,
]  # fmt: skip

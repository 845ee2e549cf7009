"""Folding of operators on constants, with the semantics of the target machine:
integers wrap at their bit width, ``Div``/``Mod`` truncate (C), ``FloorDiv``/
``FloorMod`` round down, and float arithmetic happens in the operand's own precision
(a float32 sum is rounded to float32)."""

from __future__ import annotations

import math

import numpy as np

from tilelang.ir import bfloat16
from tilelang.ir import expr as E
from tilelang.ir.dtype import BOOL, DataType


def wrap_int(value: int, dtype: DataType) -> int:
    """``value`` wrapped to ``dtype``'s bit width (two's complement for signed)."""
    if dtype.is_bool():
        return int(bool(value))
    bits = dtype.bits
    if dtype.is_uint():
        return value % (1 << bits)
    half = 1 << (bits - 1)
    return (value + half) % (1 << bits) - half


def trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def trunc_mod(a: int, b: int) -> int:
    return a - b * trunc_div(a, b)


_INT_OPS = {
    E.Add: lambda a, b: a + b,
    E.Sub: lambda a, b: a - b,
    E.Mul: lambda a, b: a * b,
    E.Div: lambda a, b: None if b == 0 else trunc_div(a, b),
    E.Mod: lambda a, b: None if b == 0 else trunc_mod(a, b),
    E.FloorDiv: lambda a, b: None if b == 0 else a // b,
    E.FloorMod: lambda a, b: None if b == 0 else a % b,
    E.Min: min,
    E.Max: max,
}

_CMP_OPS = {
    E.EQ: lambda a, b: a == b,
    E.NE: lambda a, b: a != b,
    E.LT: lambda a, b: a < b,
    E.LE: lambda a, b: a <= b,
    E.GT: lambda a, b: a > b,
    E.GE: lambda a, b: a >= b,
}

_FLOAT_OPS = {
    E.Add: lambda a, b: a + b,
    E.Sub: lambda a, b: a - b,
    E.Mul: lambda a, b: a * b,
    E.Div: lambda a, b: None if b == 0 else a / b,
    E.Mod: lambda a, b: None if b == 0 else np.fmod(a, b),
    E.FloorDiv: lambda a, b: None if b == 0 else np.floor(a / b),
    E.FloorMod: lambda a, b: None if b == 0 else a - np.floor(a / b) * b,
    E.Min: lambda a, b: a if a <= b else b,
    E.Max: lambda a, b: a if a >= b else b,
}


def _float_scalar(dtype: DataType):
    """The NumPy scalar constructor of a float dtype; bfloat16 computes in float32 and
    rounds each result to bfloat16 (as the backends store it)."""
    if dtype.is_bfloat16():
        return lambda v: np.float32(bfloat16.round_value(v))
    return np.dtype(dtype.numpy_name()).type


def fold_binary(cls: type, a: E.PrimExpr, b: E.PrimExpr) -> E.PrimExpr | None:
    """The constant ``cls(a, b)`` when both operands are constants, else None."""
    if isinstance(a, E.IntImm) and isinstance(b, E.IntImm):
        if cls in _CMP_OPS:
            return E.IntImm(BOOL, _CMP_OPS[cls](a.value, b.value))
        fn = _INT_OPS.get(cls)
        value = None if fn is None else fn(a.value, b.value)
        return None if value is None else E.IntImm(a.dtype, wrap_int(value, a.dtype))
    if isinstance(a, E.FloatImm) and isinstance(b, E.FloatImm):
        scalar = _float_scalar(a.dtype)
        x, y = scalar(a.value), scalar(b.value)
        with np.errstate(all="ignore"):
            if cls in _CMP_OPS:
                return E.IntImm(BOOL, bool(_CMP_OPS[cls](x, y)))
            fn = _FLOAT_OPS.get(cls)
            value = None if fn is None else fn(x, y)
        return None if value is None else E.FloatImm(a.dtype, float(scalar(value)))
    return None


def fold_cast(dtype: DataType, value: E.PrimExpr) -> E.PrimExpr | None:
    """The constant ``Cast(dtype, value)`` with C semantics, or None."""
    if dtype.lanes != 1:
        return None
    if isinstance(value, E.IntImm):
        if dtype.is_float():
            scalar = _float_scalar(dtype)
            return E.FloatImm(dtype, float(scalar(value.value)))
        if dtype.is_integer() or dtype.is_bool():
            v = int(value.value != 0) if dtype.is_bool() else wrap_int(value.value, dtype)
            return E.IntImm(dtype, v)
    if isinstance(value, E.FloatImm):
        if dtype.is_float():
            scalar = _float_scalar(dtype)
            with np.errstate(all="ignore"):
                return E.FloatImm(dtype, float(scalar(value.value)))
        if dtype.is_bool():
            return E.IntImm(dtype, int(value.value != 0))
        if dtype.is_integer() and math.isfinite(value.value):
            return E.IntImm(dtype, wrap_int(int(value.value), dtype))
    return None

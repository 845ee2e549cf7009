"""Mapping tilelang dtypes to LLVM types and constants.

``bool`` is ``i1`` in registers but one byte (``i8``) in memory, as NumPy stores it;
:func:`storage_type` gives the in-memory type and the codegen converts at loads and
stores. Unsigned integers share LLVM's sign-less ``iN`` types; the codegen picks the
unsigned instructions (``udiv``, ``icmp ult``, ``zext``) from the tilelang dtype.
"""

from __future__ import annotations

from functools import cache

from llvmlite import ir

from tilelang.errors import BuildError
from tilelang.ir.dtype import DataType

PTR = ir.PointerType()
I1 = ir.IntType(1)
I8 = ir.IntType(8)
I32 = ir.IntType(32)
I64 = ir.IntType(64)
VOID = ir.VoidType()

_FLOATS = {16: ir.HalfType(), 32: ir.FloatType(), 64: ir.DoubleType()}


@cache
def scalar_type(dtype: DataType) -> ir.Type:
    """The LLVM type of one lane of ``dtype`` in registers."""
    dtype = DataType(dtype)
    if dtype.is_handle():
        return PTR
    if dtype.is_bool():
        return I1
    if dtype.is_integer():
        return ir.IntType(dtype.bits)
    if dtype.is_float():
        return _FLOATS[dtype.bits]
    raise BuildError(f"the llvm backend has no type for {dtype}")


@cache
def llvm_type(dtype: DataType) -> ir.Type:
    """The LLVM type of ``dtype`` in registers (a vector type when it has lanes)."""
    dtype = DataType(dtype)
    element = scalar_type(dtype.element_of())
    return ir.VectorType(element, dtype.lanes) if dtype.lanes > 1 else element


@cache
def storage_type(dtype: DataType) -> ir.Type:
    """The LLVM type of one element of a buffer of ``dtype`` in memory."""
    dtype = DataType(dtype)
    return I8 if dtype.is_bool() else scalar_type(dtype)


def element_bytes(dtype: DataType) -> int:
    """Bytes one buffer element of ``dtype`` takes in memory."""
    dtype = DataType(dtype)
    return 1 if dtype.is_bool() else dtype.bits // 8


def constant(dtype: DataType, value) -> ir.Constant:
    """An LLVM constant of the scalar (or splatted vector) ``dtype``."""
    dtype = DataType(dtype)
    element = scalar_type(dtype.element_of())
    if isinstance(element, ir.IntType):
        # the signed value of the same bit pattern, so uint64 maxima print as -1
        width = element.width
        value = int(value) & ((1 << width) - 1)
        if width > 1 and value >= 1 << (width - 1):
            value -= 1 << width
    else:
        value = float(value)
    scalar = ir.Constant(element, value)
    if dtype.lanes > 1:
        return ir.Constant(ir.VectorType(element, dtype.lanes), [scalar] * dtype.lanes)
    return scalar

"""bfloat16 values: rounding, and the bit patterns NumPy stores them as.

A bfloat16 is the upper half of a float32 (sign, the same 8-bit exponent, 7 mantissa
bits). Converting a float32 to bfloat16 rounds to nearest, ties to even, as TVM's
BF16 legalisation and ``ml_dtypes`` do; a NaN stays a (quiet) NaN of the same sign.
NumPy has no bfloat16: arrays of it are ``uint16`` arrays of the bits, or
``ml_dtypes.bfloat16`` arrays when that package is installed (the same 2 bytes each).

Example::

    bits = to_bits(np.array([1.0, 3.14159], np.float32))   # [0x3F80, 0x4049]
    from_bits(bits)                                          # [1.0, 3.140625]
"""

from __future__ import annotations

import numpy as np

__all__ = ["to_bits", "from_bits", "round_value", "ml_dtype", "as_bits"]


def to_bits(values) -> np.ndarray:
    """The bfloat16 bit patterns (``uint16``) of ``values``, rounded to nearest even."""
    f32 = np.asarray(values, dtype=np.float32)
    bits = np.ascontiguousarray(f32).reshape(-1).view(np.uint32).reshape(f32.shape)
    bits = bits.astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    quiet_nan = (bits >> 16) | 0x40
    return np.where(np.isnan(f32), quiet_nan, rounded).astype(np.uint16)


def from_bits(bits) -> np.ndarray:
    """The float32 values of bfloat16 bit patterns (exact: every bfloat16 is a float32)."""
    bits = np.asarray(bits, dtype=np.uint16)
    wide = np.left_shift(bits.astype(np.uint32).reshape(-1), 16)
    return wide.view(np.float32).reshape(bits.shape)


def round_value(value: float) -> float:
    """``value`` rounded to the nearest bfloat16 (a float, exactly that bfloat16)."""
    with np.errstate(over="ignore"):
        return float(from_bits(to_bits(np.float32(value))).reshape(-1)[0])


def ml_dtype():
    """``ml_dtypes.bfloat16`` when ml_dtypes is installed, else None."""
    try:
        import ml_dtypes
    except ImportError:
        return None
    return np.dtype(ml_dtypes.bfloat16)


def as_bits(array: np.ndarray) -> np.ndarray | None:
    """The ``uint16`` bits view of a bfloat16 array (``uint16`` or ``ml_dtypes``),
    the same memory; None for any other dtype."""
    if array.dtype == np.uint16:
        return array
    if array.dtype.name == "bfloat16" and array.dtype.itemsize == 2:
        return array.view(np.uint16)
    return None

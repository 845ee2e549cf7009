"""Helpers the generated Python code calls, with C semantics where NumPy's differ.

They are placed in the namespace of every generated module under these names.
"""

from __future__ import annotations

import math

import numpy as np

from tilelang.errors import AssertionFailure
from tilelang.ir import bfloat16


def truncdiv(a, b):
    """C's integer ``/``: rounds towards zero (``//`` rounds down)."""
    q = a // b
    return q + ((a % b != 0) & ((a < 0) != (b < 0)))


def truncmod(a, b):
    """C's integer ``%``: the sign follows the dividend."""
    return a - b * truncdiv(a, b)


def float_floormod(a, b):
    return a - np.floor(a / b) * b


def cast(value, np_type):
    """``value`` converted to ``np_type`` as C converts: integers wrap, floats
    truncate towards zero."""
    if isinstance(value, np.ndarray):
        return value.astype(np_type)
    return np.asarray(value).astype(np_type)[()]


def wrap_int(value, bits, signed):
    """A Python integer wrapped to ``bits`` (two's complement when ``signed``): loop
    variables and literals are Python ints, which never overflow by themselves."""
    value = int(value) & ((1 << bits) - 1)
    return value - (1 << bits) if signed and value >> (bits - 1) else value


def select(cond, true_value, false_value):
    """``Select``: both sides are already evaluated (they are arguments)."""
    if isinstance(cond, np.ndarray):
        return np.where(cond, true_value, false_value)
    return true_value if cond else false_value


def ramp(base, stride, lanes, np_type):
    return (base + stride * np.arange(lanes)).astype(np_type)


def sigmoid(x):
    one = np.asarray(x).dtype.type(1)
    return one / (one + np.exp(-x))


def rsqrt(x):
    return np.asarray(x).dtype.type(1) / np.sqrt(x)


def exp10(x):
    return np.power(np.asarray(x).dtype.type(10), x)


def erf(x):
    kind = np.asarray(x).dtype.type
    if isinstance(x, np.ndarray):
        return np.vectorize(math.erf, otypes=[kind])(x)
    return kind(math.erf(float(x)))


def round_half_away(x):
    """C's ``round``: halves round away from zero."""
    return np.copysign(np.floor(np.abs(x) + np.asarray(x).dtype.type(0.5)), x)


def pointer(array, offset, extent):
    """``tvm_access_ptr``: a writable 1-D view of ``extent`` elements at ``offset``."""
    offset = int(offset)
    return array[offset : offset + int(extent)]


def flat_view(array, size):
    """A 1-D view over ``size`` elements from ``array``'s first element, following its
    memory (the runtime has checked that the strides match the buffer's)."""
    if array.flags.c_contiguous:
        return array.reshape(-1)
    item = array.itemsize
    low = sum((n - 1) * s for n, s in zip(array.shape, array.strides) if s < 0) // item
    if low == 0 or array.size == 0:
        return np.lib.stride_tricks.as_strided(array, shape=(int(size),), strides=(item,))
    # negative strides: the memory runs from `low` elements before array[0, ...]; a
    # flat view from there, indexed relative to array[0, ...] as the lowered code does
    high = sum((n - 1) * s for n, s in zip(array.shape, array.strides) if s > 0) // item
    lowest = array[tuple(slice(n - 1, n) if s < 0 else slice(0, 1)
                         for n, s in zip(array.shape, array.strides))]  # fmt: skip
    flat = np.lib.stride_tricks.as_strided(lowest, shape=(high - low + 1,), strides=(item,))
    return ShiftedView(flat, low)


class ShiftedView:
    """A flat buffer whose index 0 lies ``offset`` elements before ``array[0]``: the
    buffer's constant ``elem_offset`` is part of every lowered index, but the array
    passed starts at the buffer's first element."""

    def __init__(self, array, offset):
        self.array, self.offset = array, int(offset)

    def _shift(self, index):
        if isinstance(index, slice):
            return slice(index.start - self.offset, index.stop - self.offset, index.step)
        return index - self.offset

    def __getitem__(self, index):
        return self.array[self._shift(index)]

    def __setitem__(self, index, value):
        self.array[self._shift(index)] = value


def masked_load(array, index, mask, np_type):
    """A predicated vector load: the lanes whose mask is true read ``array[index]``;
    the others read nothing (their value is unspecified in TVM; here 0)."""
    index, mask = np.asarray(index), np.asarray(mask, dtype=bool)
    out = np.zeros(index.shape, dtype=np_type)
    array, active = _active(array, index, mask)
    out[mask] = array[active]
    return out


def masked_store(array, index, value, mask):
    """A predicated vector store: only the lanes whose mask is true are written."""
    index, mask = np.asarray(index), np.asarray(mask, dtype=bool)
    array, active = _active(array, index, mask)
    array[active] = np.broadcast_to(value, index.shape)[mask]


def _active(array, index, mask):
    """The array and the indices of the unmasked lanes in it (a ShiftedView undone, so
    that an index before the array's start is caught, not wrapped by NumPy)."""
    active = index[mask]
    if isinstance(array, ShiftedView):
        array, active = array.array, active - array.offset
    if active.size and active.min() < 0:  # NumPy would wrap a negative index
        raise IndexError(f"index {int(active.min())} is out of bounds")
    return array, active


def bounds_error(payload, *values):
    """The OutOfBoundsError of a failed bounds check (raised by the generated code)."""
    from tilelang.bounds.report import out_of_bounds_error

    return out_of_bounds_error(payload, values)


def popcount(x):
    """The number of set bits of ``x`` at its width (two's complement for negatives),
    as the same dtype."""
    x = np.asarray(x)
    bits = np.asarray(x).view(f"u{x.dtype.itemsize}")
    return np.bitwise_count(bits).astype(x.dtype)


def bf16_to_float(bits):
    """float32 values of bfloat16 bits (a scalar or a vector of lanes)."""
    values = bfloat16.from_bits(bits)
    return values if isinstance(bits, np.ndarray) else values.reshape(-1)[0]


def float_to_bf16(values):
    """The bfloat16 bits of float32 values, rounded to nearest even."""
    bits = bfloat16.to_bits(values)
    return bits if isinstance(values, np.ndarray) else bits.reshape(-1)[0]


def reinterpret(value, source, target):
    """The bits of ``value`` (of NumPy type ``source``) read as ``target``."""
    bits = np.asarray(value).astype(source)
    out = bits.view(target)
    return out if isinstance(value, np.ndarray) else out[()]


NAMESPACE = {
    "np": np,
    "_truncdiv": truncdiv,
    "_truncmod": truncmod,
    "_float_floormod": float_floormod,
    "_cast": cast,
    "_wrap_int": wrap_int,
    "_AssertionFailure": AssertionFailure,
    "_select": select,
    "_ramp": ramp,
    "_masked_load": masked_load,
    "_masked_store": masked_store,
    "_sigmoid": sigmoid,
    "_rsqrt": rsqrt,
    "_exp10": exp10,
    "_popcount": popcount,
    "_erf": erf,
    "_round": round_half_away,
    "_ptr": pointer,
    "_flat": flat_view,
    "_Shifted": ShiftedView,
    "_bounds_error": bounds_error,
    "_bf16_to_float": bf16_to_float,
    "_float_to_bf16": float_to_bf16,
    "_reinterpret": reinterpret,
}

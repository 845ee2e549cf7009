"""Data types.

A :class:`DataType` *is* a string (``"float32"``, ``"int64"``, ``"float32x8"``), so it
prints, compares and hashes like the spelling users write, and it also answers
questions about itself (``bits``, ``lanes``, ``is_float``...). Construction validates
the spelling, so a misspelled dtype fails where it is written, not deep in a backend.

``bfloat16`` (code ``"bfloat"``) is a floating-point type: ``is_float()`` is true for it,
as for every type arithmetic treats as real numbers, and ``is_bfloat16()`` tells it
apart. NumPy has no such type: arrays of it are ``ml_dtypes.bfloat16`` when that
package is installed, else ``uint16`` arrays holding the bits (see
:mod:`tilelang.ir.bfloat16`; the CPU backends compute it through
:mod:`tilelang.transform.legalize_bf16`).
"""

from __future__ import annotations

import re
from functools import cache

# "float32x4": 4 lanes; "float32xvscalex4": a scalable vector of 4 * vscale lanes (Arm
# SVE's vector length, known at run time), TVM's spelling
_SCALAR_RE = re.compile(r"^(bool|int|uint|float|bfloat|handle)(\d*)(?:x(\d+)|xvscalex(\d+))?$")
_VALID_BITS = {
    "int": (8, 16, 32, 64),
    "uint": (8, 16, 32, 64),
    "float": (16, 32, 64),
    "bfloat": (16,),
}


class DataTypeError(ValueError):
    """Raised for a dtype spelling that names no type."""


class DataType(str):
    """A validated dtype spelling; see the module docstring."""

    __slots__ = ()

    def __new__(cls, spelling: str | DataType) -> DataType:
        if type(spelling) is DataType:
            return spelling
        return _parse(str(spelling))

    @classmethod
    def _make(cls, text: str) -> DataType:
        return str.__new__(cls, text)

    @property
    def code(self) -> str:
        """The type family: ``"bool"``, ``"int"``, ``"uint"``, ``"float"``, ``"bfloat"``
        or ``"handle"``."""
        return _split(self)[0]

    @property
    def bits(self) -> int:
        return _split(self)[1]

    @property
    def lanes(self) -> int:
        lanes = _split(self)[2]
        if lanes < 0:
            raise DataTypeError(
                f"{self} is a scalable vector ({-lanes} * vscale lanes): its lane count is "
                "not a number"
            )
        return lanes

    def is_scalable_vector(self) -> bool:
        """A vector of ``vscale_factor * vscale`` lanes (``"float32xvscalex4"``)."""
        return _split(self)[2] < 0

    @property
    def vscale_factor(self) -> int:
        """The constant that multiplies vscale in a scalable vector's lane count."""
        lanes = _split(self)[2]
        if lanes >= 0:
            raise DataTypeError(f"{self} is not a scalable vector")
        return -lanes

    def is_bool(self) -> bool:
        return self.code == "bool"

    def is_int(self) -> bool:
        return self.code == "int"

    def is_uint(self) -> bool:
        return self.code == "uint"

    def is_integer(self) -> bool:
        """Signed or unsigned integer (bool is not an integer here)."""
        return self.code in ("int", "uint")

    def is_float(self) -> bool:
        """A floating-point type, ``bfloat16`` included."""
        return self.code in ("float", "bfloat")

    def is_bfloat16(self) -> bool:
        return self.code == "bfloat"

    def value_range(self) -> tuple[int, int]:
        """The least and greatest value of an integer or bool type (two's complement)."""
        return _value_range(self)

    def is_handle(self) -> bool:
        return self.code == "handle"

    def is_vector(self) -> bool:
        lanes = _split(self)[2]
        return lanes > 1 or lanes < 0

    def element_of(self) -> DataType:
        """The scalar type of one lane."""
        return _element_of(self)

    def with_lanes(self, lanes: int) -> DataType:
        return _make_dtype(self.code, self.bits, lanes)

    def with_lanes_of(self, other: DataType) -> DataType:
        """This element type with the lanes of ``other`` (fixed or scalable)."""
        lanes = _split(other)[2]
        return self.with_scalable_lanes(-lanes) if lanes < 0 else self.with_lanes(lanes)

    def with_scalable_lanes(self, vscale_factor: int) -> DataType:
        """The scalable vector of ``vscale_factor * vscale`` lanes of this element type."""
        return DataType(f"{self.element_of()}xvscalex{vscale_factor}")

    def numpy_name(self) -> str:
        """The NumPy dtype name of one lane (``handle`` maps to ``uint64``, ``bfloat16``
        to ``uint16``, the storage of its bits)."""
        if self.code == "handle":
            return "uint64"
        if self.code == "bfloat":
            return "uint16"
        return "bool" if self.code == "bool" else f"{self.code}{self.bits}"

    def __repr__(self) -> str:
        return f"DataType({str.__repr__(self)})"


def _make_dtype(code: str, bits: int, lanes: int) -> DataType:
    base = code if code in ("bool", "handle") else f"{code}{bits}"
    return DataType(base if lanes == 1 else f"{base}x{lanes}")


@cache
def _parse(text: str) -> DataType:
    match = _SCALAR_RE.match(text)
    if match is None:
        raise DataTypeError(f"invalid dtype {text!r}")
    code, bits, lanes, scalable = match.groups()
    if code in ("bool", "handle"):
        if bits:
            raise DataTypeError(f"invalid dtype {text!r}: {code} takes no bit width")
    elif not bits or int(bits) not in _VALID_BITS[code]:
        allowed = ", ".join(f"{code}{b}" for b in _VALID_BITS[code])
        raise DataTypeError(f"invalid dtype {text!r}: expected one of {allowed}")
    if scalable is not None and int(scalable) < 1:
        raise DataTypeError(f"invalid dtype {text!r}: a scalable vector needs a factor >= 1")
    if scalable is None and lanes is not None and int(lanes) < 2:
        raise DataTypeError(f"invalid dtype {text!r}: a vector needs at least 2 lanes")
    return DataType._make(text)


# Memoised per type: the parser and every pass ask these of the same few dtypes
# hundreds of thousands of times.
@cache
def _value_range(dtype: DataType) -> tuple[int, int]:
    code, bits, _ = _split(dtype)
    if code == "bool":
        return 0, 1
    if code == "uint":
        return 0, 2**bits - 1
    return -(2 ** (bits - 1)), 2 ** (bits - 1) - 1


@cache
def _element_of(dtype: DataType) -> DataType:
    code, bits, lanes = _split(dtype)
    return dtype if lanes == 1 else _make_dtype(code, bits, 1)


@cache
def _split(dtype: str) -> tuple[str, int, int]:
    code, bits, lanes, scalable = _SCALAR_RE.match(dtype).groups()
    nbits = {"bool": 1, "handle": 64}.get(code) or int(bits)
    if scalable is not None:  # negative: a scalable vector's vscale factor, as TVM keeps it
        return code, nbits, -int(scalable)
    return code, nbits, int(lanes) if lanes else 1


def raw_lanes(dtype: DataType) -> int:
    """The lane count, or minus the vscale factor of a scalable vector."""
    return _split(dtype)[2]


def is_valid_dtype(text: str) -> bool:
    try:
        DataType(text)
    except DataTypeError:
        return False
    return True


def dtype_from_numpy(np_dtype) -> DataType:
    """The DataType of a NumPy dtype (``np.float32`` -> ``"float32"``)."""
    import numpy as np

    name = np.dtype(np_dtype).name
    return DataType("bool" if name == "bool" else name)  # ml_dtypes' name is "bfloat16"


BOOL = DataType("bool")
INT32 = DataType("int32")
INT64 = DataType("int64")
FLOAT32 = DataType("float32")
BFLOAT16 = DataType("bfloat16")
HANDLE = DataType("handle")

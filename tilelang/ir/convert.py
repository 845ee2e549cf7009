"""Constants, conversion of Python values, and the typing rules of the operators.

The rules are TVM's:

* a Python ``int`` takes the type of the expression it meets (``n_int64 + 1`` is
  int64; ``x_float32 + 1`` is float32); alone it is int32, or int64 when it does not
  fit in 32 bits;
* a Python ``float`` is float32 unless the other side is a wider float;
* an integer expression meeting a float expression is cast to the float type;
  integers of different widths meet at the wider one; a scalar meeting a vector is
  broadcast;
* ``bfloat16`` meets an integer as bfloat16 and an IEEE float as that float
  (``bfloat16 + float16`` is float16);
* ``handle`` takes part in no arithmetic.
"""

from __future__ import annotations

import numbers

from tilelang.ir import expr as E
from tilelang.ir.dtype import BOOL, FLOAT32, INT32, INT64, DataType, raw_lanes
from tilelang.ir.lanes import lanes_expr

_INT32_RANGE = range(-(2**31), 2**31)


def const(value, dtype=None, span=None) -> E.PrimExpr:
    """A constant of ``dtype`` (inferred from the Python value when omitted)."""
    if type(value) is int and (dtype is None or dtype is INT32 or dtype == "int32"):
        # the common case, taken directly: the parser makes one for most literals
        if -(2**31) <= value < 2**31:
            return E.IntImm(INT32, value, span=span)
    elif type(value) is bool and dtype is None:  # every block's T.where(True)
        return E.IntImm(BOOL, int(value), span=span)
    if dtype is None:
        if isinstance(value, (bool,)) or type(value).__name__ == "bool_":
            dtype = BOOL
        elif isinstance(value, numbers.Integral):
            dtype = INT32 if int(value) in _INT32_RANGE else INT64
        elif isinstance(value, numbers.Real):
            dtype = FLOAT32
        else:
            raise E.TIRTypeError(f"cannot make a constant of {value!r}")
        if hasattr(value, "dtype"):  # a NumPy scalar knows its own type
            from tilelang.ir.dtype import dtype_from_numpy

            dtype = dtype_from_numpy(value.dtype)
    dtype = DataType(dtype)
    if dtype.lanes > 1:
        return E.Broadcast(const(value, dtype.element_of(), span), dtype.lanes, span=span)
    if dtype.is_float():
        return E.FloatImm(dtype, float(value), span=span)
    if dtype.is_integer() or dtype.is_bool():
        if isinstance(value, float) and not value.is_integer():
            raise E.TIRTypeError(f"cannot make a {dtype} constant of {value!r}")
        return E.IntImm(dtype, int(value), span=span)
    raise E.TIRTypeError(f"cannot make a {dtype} constant of {value!r}")


def convert(value, dtype=None) -> E.PrimExpr:
    """An expression for ``value``: expressions pass through, numbers become constants."""
    if isinstance(value, E.PrimExpr):
        return value if dtype is None else value.astype(dtype)
    if isinstance(value, numbers.Number) or type(value).__name__ == "bool_":
        return const(value, dtype)
    if isinstance(value, str):
        return E.StringImm(value)
    raise E.TIRTypeError(f"cannot use {type(value).__name__} {value!r} as an expression")


def _literal_for(value, other: E.PrimExpr) -> E.PrimExpr:
    """A Python number placed next to ``other``, typed by TVM's literal rules."""
    dtype = other.dtype.element_of()
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return const(value, BOOL if dtype.is_bool() else dtype)
    if isinstance(value, numbers.Integral):
        if dtype.is_bool():
            return const(value)
        return const(value, dtype)
    if isinstance(value, numbers.Real):
        return const(value, dtype if dtype.is_float() else FLOAT32)
    return convert(value)


def _join(a: DataType, b: DataType) -> DataType:
    """The scalar type two operand types meet at, or a TIRTypeError."""
    ea, eb = a.element_of(), b.element_of()
    if ea.is_handle() or eb.is_handle():
        raise E.TIRTypeError(f"no arithmetic on handles ({a} and {b})")
    if ea == eb:
        return ea
    if ea.is_float() or eb.is_float():
        # as TVM's BinaryOpMatchTypes: an IEEE float wins over bfloat16 (bfloat16 +
        # float16 is float16), bfloat16 wins over integers
        ieee = [t for t in (ea, eb) if t.is_float() and not t.is_bfloat16()]
        if not ieee:
            return ea if ea.is_bfloat16() else eb
        return DataType(f"float{max(t.bits for t in ieee)}")
    if ea.is_bool():
        return eb
    if eb.is_bool():
        return ea
    if ea.code == eb.code:
        return ea if ea.bits >= eb.bits else eb
    return DataType(f"int{max(ea.bits, eb.bits)}")


def _coerce(x: E.PrimExpr, scalar: DataType, lanes: int) -> E.PrimExpr:
    """``x`` as ``scalar`` elements over ``lanes`` (negative: minus a vscale factor)."""
    if x.dtype.element_of() != scalar:
        x = E.Cast(scalar.with_lanes_of(x.dtype), x)
    if lanes != 1 and not x.dtype.is_vector():
        count = lanes if lanes > 0 else lanes_expr(scalar.with_scalable_lanes(-lanes))
        x = E.Broadcast(x, count)
    return x


def match_types(a, b) -> tuple[E.PrimExpr, E.PrimExpr]:
    """Both operands as expressions of one type, by the rules in the module docstring."""
    if not isinstance(a, E.PrimExpr) and not isinstance(b, E.PrimExpr):
        a, b = convert(a), convert(b)
    elif not isinstance(a, E.PrimExpr):
        a = _literal_for(a, b)
    elif not isinstance(b, E.PrimExpr):
        b = _literal_for(b, a)
    if a.dtype == b.dtype:
        return a, b
    la, lb = raw_lanes(a.dtype), raw_lanes(b.dtype)
    if la != 1 and lb != 1 and la != lb:
        raise E.TIRTypeError(f"vector lanes differ: {a.dtype} and {b.dtype}")
    scalar = _join(a.dtype, b.dtype)
    lanes = la if la != 1 else lb
    return _coerce(a, scalar, lanes), _coerce(b, scalar, lanes)


_BINARY = {
    "add": E.Add, "sub": E.Sub, "mul": E.Mul, "div": E.Div, "mod": E.Mod,
    "floordiv": E.FloorDiv, "floormod": E.FloorMod, "min": E.Min, "max": E.Max,
    "eq": E.EQ, "ne": E.NE, "lt": E.LT, "le": E.LE, "gt": E.GT, "ge": E.GE,
}  # fmt: skip


def binary(op: str, a, b, span=None) -> E.PrimExpr:
    """``a <op> b`` after type matching; ``op`` names a key of the operator table."""
    a, b = match_types(a, b)
    if a.dtype.element_of().is_bool() and op in ("add", "sub", "mul", "div", "floordiv"):
        a, b = a.astype(INT32), b.astype(INT32)
    return _BINARY[op](a, b, span=span)


def as_bool(x, span=None) -> E.PrimExpr:
    """``x`` as a condition; only bool expressions (or Python bools) qualify."""
    x = convert(x)
    if not x.dtype.element_of().is_bool():
        raise E.TIRTypeError(f"expected a bool condition, got {x.dtype} expression {x!r}")
    return x


def logical(op: str, a, b, span=None) -> E.PrimExpr:
    """``and`` / ``or`` of conditions; on integers ``&`` and ``|`` are bitwise, as in TVM."""
    a, b = match_types(a, b)
    if a.dtype.element_of().is_integer():
        return E.Call(a.dtype, "bitwise_" + op, (a, b), span=span)
    node = E.And if op == "and" else E.Or
    return node(as_bool(a), as_bool(b), span=span)


def is_const_int(x, value=None) -> bool:
    """True for an integer constant (equal to ``value`` when given)."""
    if isinstance(x, E.IntImm):
        return value is None or x.value == value
    if isinstance(x, numbers.Integral) and not isinstance(x, bool):
        return value is None or int(x) == value
    return False


def const_int_value(x) -> int | None:
    """The value of an integer constant, or None for anything else."""
    if isinstance(x, E.IntImm):
        return x.value
    if isinstance(x, numbers.Integral):
        return int(x)
    return None

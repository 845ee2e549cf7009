"""Index arithmetic on "concrete or symbolic" values.

Tiling computes the same quantities (segment bounds, shapes, addresses) whether the
sizes are Python ints or IR expressions. These helpers take either: two ints give an
int (so a concrete program carries plain numbers all the way to its instructions),
anything symbolic gives an IR expression with the obvious identities folded
(``x + 0``, ``x * 1``, ``(x + y) - x``), so symbolic addresses stay readable.
"""

from __future__ import annotations

import numbers

from tilelang.ir import expr as E
from tilelang.ir import op
from tilelang.ir.convert import binary, const_int_value

Value = int | E.PrimExpr


def as_int(x) -> int | None:
    """The integer value of ``x`` when it is a Python int or an integer constant."""
    if isinstance(x, bool):
        return None
    return const_int_value(x)


def value(x) -> Value:
    """``x`` normalised: integer constants become Python ints, expressions stay."""
    known = as_int(x)
    if known is not None:
        return known
    if isinstance(x, E.PrimExpr):
        if not x.dtype.is_integer():
            raise E.TIRTypeError(f"tiling needs integer indices, got {x.dtype} expression {x!r}")
        return x
    if isinstance(x, numbers.Integral):
        return int(x)
    raise E.TIRTypeError(f"tiling needs an int or an integer expression, got {x!r}")


def is_concrete(*xs) -> bool:
    """True when every argument is a known integer."""
    return all(as_int(x) is not None for x in xs)


def add(a, b) -> Value:
    ia, ib = as_int(a), as_int(b)
    if ia is not None and ib is not None:
        return ia + ib
    if ia == 0:
        return b
    if ib == 0:
        return a
    return binary("add", a, b)


def sub(a, b) -> Value:
    ia, ib = as_int(a), as_int(b)
    if ia is not None and ib is not None:
        return ia - ib
    if ib == 0:
        return a
    if a is b:
        return 0
    # (x + y) - x -> y and (x + y) - y -> x: a segment's stop minus its start.
    if isinstance(a, E.Add):
        if a.a is b:
            return a.b
        if a.b is b:
            return a.a
    return binary("sub", a, b)


def mul(a, b) -> Value:
    ia, ib = as_int(a), as_int(b)
    if ia is not None and ib is not None:
        return ia * ib
    if ia == 0 or ib == 0:
        return 0
    if ia == 1:
        return b
    if ib == 1:
        return a
    return binary("mul", a, b)


def floordiv(a, b) -> Value:
    ia, ib = as_int(a), as_int(b)
    if ia is not None and ib is not None:
        return ia // ib
    if ib == 1:
        return a
    return binary("floordiv", a, b)


def ceildiv(a, b) -> Value:
    """``ceil(a / b)`` for ``b > 0``; symbolic as ``(a + b - 1) // b``."""
    ia, ib = as_int(a), as_int(b)
    if ia is not None and ib is not None:
        return -(-ia // ib)
    if ib == 1:
        return a
    if ib is not None:
        return binary("floordiv", add(a, ib - 1), ib)
    return op.ceildiv(a, b)


def minimum(a, b) -> Value:
    ia, ib = as_int(a), as_int(b)
    if ia is not None and ib is not None:
        return min(ia, ib)
    if a is b:
        return a
    return binary("min", a, b)


def maximum(a, b) -> Value:
    ia, ib = as_int(a), as_int(b)
    if ia is not None and ib is not None:
        return max(ia, ib)
    if a is b:
        return a
    return binary("max", a, b)


def int_dtype(*xs):
    """The widest integer dtype among the symbolic arguments (int32 when none is)."""
    best = None
    for x in xs:
        if isinstance(x, E.PrimExpr) and as_int(x) is None:
            if best is None or x.dtype.bits > best.bits:
                best = x.dtype
    return best or E.INT32


def typed(x, dtype) -> E.PrimExpr:
    """``x`` as an expression of the integer ``dtype`` (ints become constants of it, so
    ``T.min(4, n)`` with an int64 ``n`` has one type)."""
    known = as_int(x)
    if known is not None:
        return E.IntImm(dtype, known)
    return x.astype(dtype)

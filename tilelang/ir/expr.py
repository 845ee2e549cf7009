"""Expressions.

Every expression carries a ``dtype``. Node constructors check that operand types
agree; the Python operators (``a + 1``, ``i < n``) apply TVM's literal typing rules
first (see :mod:`tilelang.ir.convert`).

Equality of expressions
-----------------------
``a == b`` does **not** compare: like TVM it builds the expression ``EQ(a, b)``, and
``!=`` builds ``NE`` (two integer constants are the exception: they fold to a Python
bool, as TVM folds them, so ``assert A.shape[1] == B.shape[0]`` works). Asking such
an expression for its truth value (``if a == b:``) raises ``TypeError``, so a
comparison can never be made by accident. Compare with
``a is b`` (or ``a.same_as(b)``) for identity and with
:func:`tilelang.ir.structural_equal` for structure. Expressions hash by identity, so
variables work as dictionary keys.
"""

from __future__ import annotations

import attrs

from tilelang.ir.dtype import BOOL, HANDLE, INT32, DataType, raw_lanes
from tilelang.ir.lanes import (
    check_lanes,
    check_predicate,
    convert_lanes,
    vector_dtype,
)
from tilelang.ir.node import Node, child, define, ignored, plain, ref, snake_name, span_field


class TIRTypeError(TypeError):
    """An expression whose operand types do not fit together."""


def _dtype(value) -> DataType:
    return DataType(value)


class PrimExpr(Node):
    """Base class of expressions (TVM's ``PrimExpr``)."""

    __slots__ = ()
    is_root = True
    # Let NumPy scalars on the left defer to our reflected operators.
    __array_ufunc__ = None
    __hash__ = object.__hash__

    def __add__(self, other):
        return _cv.binary("add", self, other)

    def __radd__(self, other):
        return _cv.binary("add", other, self)

    def __sub__(self, other):
        return _cv.binary("sub", self, other)

    def __rsub__(self, other):
        return _cv.binary("sub", other, self)

    def __mul__(self, other):
        return _cv.binary("mul", self, other)

    def __rmul__(self, other):
        return _cv.binary("mul", other, self)

    def __truediv__(self, other):
        return _cv.binary("div", self, other)

    def __rtruediv__(self, other):
        return _cv.binary("div", other, self)

    def __floordiv__(self, other):
        return _cv.binary("floordiv", self, other)

    def __rfloordiv__(self, other):
        return _cv.binary("floordiv", other, self)

    def __mod__(self, other):
        return _cv.binary("floormod", self, other)

    def __rmod__(self, other):
        return _cv.binary("floormod", other, self)

    def __neg__(self):
        return _cv.binary("sub", _cv.const(0, self.dtype), self)

    def __lt__(self, other):
        return _cv.binary("lt", self, other)

    def __le__(self, other):
        return _cv.binary("le", self, other)

    def __gt__(self, other):
        return _cv.binary("gt", self, other)

    def __ge__(self, other):
        return _cv.binary("ge", self, other)

    def __eq__(self, other):  # builds EQ; see the module docstring
        return _cv.binary("eq", self, other)

    def __ne__(self, other):
        return _cv.binary("ne", self, other)

    def __and__(self, other):
        return _cv.logical("and", self, other)

    def __rand__(self, other):
        return _cv.logical("and", other, self)

    def __or__(self, other):
        return _cv.logical("or", self, other)

    def __ror__(self, other):
        return _cv.logical("or", other, self)

    def __invert__(self):
        return Not(_cv.as_bool(self))

    def __bool__(self):
        raise TypeError(
            f"the expression {self!r} has no truth value: compare with "
            "tilelang.ir.structural_equal(a, b), or with `a is b` for identity"
        )

    def astype(self, dtype) -> PrimExpr:
        """This expression cast to ``dtype`` (itself when it already has that type)."""
        dtype = DataType(dtype)
        return self if self.dtype == dtype else Cast(dtype, self)


# --------------------------------------------------------------------- leaves


@attrs.frozen(eq=False, repr=False)
class Var(PrimExpr):
    """A variable. Two variables with the same name are still different variables."""

    name: str = ignored()
    dtype: DataType = plain(default=INT32, converter=_dtype)
    #: what a handle points to (a :class:`~tilelang.ir.types.PointerType`), as
    #: ``T.handle("float32", "shared")`` states it; ``None``: nothing stated
    type_annotation: object = ignored(default=None, kw_only=True)
    span: object = span_field()

    @property
    def name_hint(self) -> str:
        return self.name

    @property
    def ty(self):
        """The variable's type (TVM's ``Var.ty``): its pointer type for a handle (the
        void pointer unless stated), else a :class:`~tilelang.ir.types.PrimType`."""
        from tilelang.ir.types import VOID_POINTER, PrimType

        if self.type_annotation is not None:
            return self.type_annotation
        return VOID_POINTER if self.dtype.is_handle() else PrimType(self.dtype)


@attrs.frozen(eq=False, repr=False)
class SizeVar(Var):
    """A variable known to be non-negative (a symbolic size)."""


#: the value ranges of the scalar integer and bool types, looked up by every IntImm
_INT_RANGES = {
    DataType(name): DataType(name).value_range()
    for name in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
}


@attrs.frozen(eq=False, repr=False)
class IntImm(PrimExpr):
    """An integer (or bool) constant."""

    dtype: DataType = plain(converter=_dtype)
    value: int = plain(converter=int)
    span: object = span_field()

    def __attrs_post_init__(self):
        bounds = _INT_RANGES.get(self.dtype)  # integer and bool scalar types
        if bounds is None:
            if not (self.dtype.is_integer() or self.dtype.is_bool()):
                raise TIRTypeError(f"IntImm needs an integer or bool dtype, not {self.dtype}")
            bounds = self.dtype.value_range()
        low, high = bounds
        if not low <= self.value <= high:
            # as TVM's IntImm: a constant is a value of its type, never a wider one
            raise TIRTypeError(f"the constant {self.value} is out of the range of {self.dtype}")

    def __bool__(self):
        return bool(self.value)

    def __int__(self):
        return self.value

    def __index__(self):
        return self.value

    # Two known integers compare to a Python bool, as TVM folds ``IntImm == IntImm`` to
    # a constant: ``assert A.shape[1] == B.shape[0]`` checks shapes in TE code. With a
    # variable on either side ``==`` still builds an EQ node.
    def __eq__(self, other):
        known = _known_int(other)
        return self.value == known if known is not None else super().__eq__(other)

    def __ne__(self, other):
        known = _known_int(other)
        return self.value != known if known is not None else super().__ne__(other)

    __hash__ = PrimExpr.__hash__


def _known_int(value) -> int | None:
    """The value of an integer constant (an IntImm or a Python int), else None."""
    if isinstance(value, IntImm):
        return value.value
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return None


@attrs.frozen(eq=False, repr=False)
class FloatImm(PrimExpr):
    """A floating-point constant."""

    dtype: DataType = plain(converter=_dtype)
    value: float = plain(converter=float)
    span: object = span_field()

    def __attrs_post_init__(self):
        if not self.dtype.is_float():
            raise TIRTypeError(f"FloatImm needs a float dtype, not {self.dtype}")

    def __float__(self):
        return self.value


@attrs.frozen(eq=False, repr=False)
class StringImm(PrimExpr):
    """A string constant (extern function names, assertion messages)."""

    value: str = plain()
    span: object = span_field()
    dtype: DataType = plain(default=HANDLE, converter=_dtype, kw_only=True)


@attrs.frozen(eq=False, repr=False)
class Cast(PrimExpr):
    dtype: DataType = plain(converter=_dtype)
    value: PrimExpr = child()
    span: object = span_field()


# ------------------------------------------------------------ binary operators


def _same_type_operands(node, attribute, _value):
    if node.a.dtype != node.b.dtype:
        raise TIRTypeError(
            f"{type(node).__name__} needs operands of one type, got "
            f"{node.a.dtype} and {node.b.dtype}"
        )


class BinaryOp(PrimExpr):
    """Base of two-operand expressions; ``a`` and ``b`` share one dtype."""

    __slots__ = ()
    #: the Python operator used when printing, or None for a ``T.fn(a, b)`` call
    symbol: str | None = None

    def result_type(self) -> DataType:
        return self.a.dtype


def _binary(name: str, symbol: str | None, base=BinaryOp, operand_check=None):
    checks = [_same_type_operands] + ([operand_check] if operand_check else [])

    @attrs.frozen(eq=False, repr=False)
    class Op(base):
        a: PrimExpr = child()
        b: PrimExpr = child(validator=checks)
        span: object = span_field()
        # Stored, not derived on demand: a 5,000-term chain must not recurse to type.
        dtype: DataType = attrs.field(
            init=False, default=attrs.Factory(base.result_type, takes_self=True)
        )

    Op.__name__ = Op.__qualname__ = name
    Op.symbol = symbol
    Op.visit_name = snake_name(name)
    Op.__doc__ = f"``{symbol or name}`` of two expressions of one dtype."
    return Op


class CmpOp(BinaryOp):
    """Base of comparisons; the result is ``bool`` (with the operands' lanes)."""

    __slots__ = ()

    def result_type(self) -> DataType:
        lanes = self.a.dtype.lanes
        return BOOL.with_lanes(lanes) if lanes > 1 else BOOL


def _bool_operand(node, attribute, operand):
    if not operand.dtype.element_of().is_bool():
        raise TIRTypeError(f"{type(node).__name__} needs bool operands, got {operand.dtype}")


Add = _binary("Add", "+")
Sub = _binary("Sub", "-")
Mul = _binary("Mul", "*")
Div = _binary("Div", "/")  # truncating for integers (C semantics), true division for floats
Mod = _binary("Mod", None)  # truncating remainder (C's %)
FloorDiv = _binary("FloorDiv", "//")
FloorMod = _binary("FloorMod", "%")
Min = _binary("Min", None)
Max = _binary("Max", None)
EQ = _binary("EQ", "==", CmpOp)
NE = _binary("NE", "!=", CmpOp)
LT = _binary("LT", "<", CmpOp)
LE = _binary("LE", "<=", CmpOp)
GT = _binary("GT", ">", CmpOp)
GE = _binary("GE", ">=", CmpOp)
And = _binary("And", "and", operand_check=_bool_operand)
Or = _binary("Or", "or", operand_check=_bool_operand)


@attrs.frozen(eq=False, repr=False)
class Not(PrimExpr):
    a: PrimExpr = child(validator=_bool_operand)
    span: object = span_field()

    @property
    def dtype(self) -> DataType:
        return self.a.dtype


# ------------------------------------------------------------------ the rest


def _select_types(node, attribute, _value):
    if node.true_value.dtype != node.false_value.dtype:
        raise TIRTypeError(
            "Select needs branches of one type, got "
            f"{node.true_value.dtype} and {node.false_value.dtype}"
        )


@attrs.frozen(eq=False, repr=False)
class Select(PrimExpr):
    """``true_value if condition else false_value``; both sides are evaluated."""

    condition: PrimExpr = child(validator=_bool_operand)
    true_value: PrimExpr = child()
    false_value: PrimExpr = child(validator=_select_types)
    span: object = span_field()

    @property
    def dtype(self) -> DataType:
        return self.true_value.dtype


@attrs.frozen(eq=False, repr=False)
class BufferLoad(PrimExpr):
    """``buffer[indices]``. A vector index (a ``Ramp``) loads several lanes.

    ``predicate`` (TVM's predicated ``A.vload(indices, predicate=mask)``): a bool vector
    of the load's lanes; a lane whose mask is false is not read and its value is
    unspecified. ``None`` reads every lane."""

    buffer: object = ref()
    indices: tuple = child(converter=tuple)
    predicate: object = child(default=None, kw_only=True)
    span: object = span_field()

    def __attrs_post_init__(self):
        if self.predicate is not None:
            check_predicate(self, self.dtype)

    @property
    def dtype(self) -> DataType:
        lanes = 1  # a loop, not max() over a generator: asked for on every load built
        for ix in self.indices:
            count = raw_lanes(ix.dtype)
            if count < 0:  # a scalable vector index
                return self.buffer.dtype.with_scalable_lanes(-count)
            if count > lanes:
                lanes = count
        return self.buffer.dtype.with_lanes(lanes) if lanes > 1 else self.buffer.dtype


@attrs.frozen(eq=False, repr=False)
class Ramp(PrimExpr):
    """The vector ``[base, base + stride, ..., base + (lanes - 1) * stride]``."""

    base: PrimExpr = child()
    stride: PrimExpr = child()
    #: an int, or ``k * T.vscale()`` (an int32 expression) for a scalable vector
    lanes: int | PrimExpr = plain(converter=convert_lanes)
    span: object = span_field()

    def __attrs_post_init__(self):
        check_lanes(self)

    @property
    def dtype(self) -> DataType:
        return vector_dtype(self.base.dtype, self.lanes)


@attrs.frozen(eq=False, repr=False)
class Broadcast(PrimExpr):
    """A scalar repeated over ``lanes`` lanes."""

    value: PrimExpr = child()
    #: an int, or ``k * T.vscale()`` (an int32 expression) for a scalable vector
    lanes: int | PrimExpr = plain(converter=convert_lanes)
    span: object = span_field()

    def __attrs_post_init__(self):
        check_lanes(self)

    @property
    def dtype(self) -> DataType:
        return vector_dtype(self.value.dtype, self.lanes)


@attrs.frozen(eq=False, repr=False)
class Let(PrimExpr):
    """``body`` with ``var`` bound to ``value``."""

    var: Var = define()
    value: PrimExpr = child()
    body: PrimExpr = child()
    span: object = span_field()

    @property
    def dtype(self) -> DataType:
        return self.body.dtype


@attrs.frozen(eq=False, repr=False)
class Call(PrimExpr):
    """A call of an intrinsic named ``op`` (see :mod:`tilelang.ir.op`).

    ``call_extern`` calls carry the C function's name as their first argument.
    """

    dtype: DataType = plain(converter=_dtype)
    op: str = plain()
    args: tuple = child(converter=tuple)
    span: object = span_field()


# convert needs the classes above; the operators above need convert at call time.
from tilelang.ir import convert as _cv  # noqa: E402

__all__ = [
    "PrimExpr", "Var", "SizeVar", "IntImm", "FloatImm", "StringImm", "Cast",
    "BinaryOp", "CmpOp", "Add", "Sub", "Mul", "Div", "Mod", "FloorDiv", "FloorMod",
    "Min", "Max", "EQ", "NE", "LT", "LE", "GT", "GE", "And", "Or", "Not", "Select",
    "BufferLoad", "Ramp", "Broadcast", "Let", "Call", "TIRTypeError",
]  # fmt: skip

"""Structural information of graph-level values (TVM's ``StructInfo``).

A :class:`TensorStructInfo` says what a tensor value is: its dtype, its rank and,
when known, its shape as TIR expressions. A shape may mention symbolic sizes
(``tilelang.ir.Var`` / ``SizeVar``, usually int64), which are bound once per call
from the arguments and checked everywhere they appear (see
:mod:`tilelang.relax.shape`).
"""

from __future__ import annotations

import attrs

from tilelang.errors import ArgumentError
from tilelang.ir import IntImm, PrimExpr, Var, const
from tilelang.ir.dtype import DataType
from tilelang.ir.node import Node, child, plain, span_field


class StructInfo(Node):
    """Base of structural information."""

    __slots__ = ()
    is_root = True

    def print_script(self, printer, name) -> None:
        from tilelang.relax.printer import print_node

        print_node(printer, self)


def _dim(value) -> PrimExpr:
    if isinstance(value, PrimExpr):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return const(value, "int64")
    raise ArgumentError(f"a tensor dimension must be an int or a size variable, got {value!r}")


def _shape(shape):
    if shape is None:
        return None
    if isinstance(shape, (int, PrimExpr)):
        shape = (shape,)
    return tuple(_dim(d) for d in shape)


@attrs.frozen(eq=False, repr=False)
class TensorStructInfo(StructInfo):
    """A tensor of ``dtype`` with ``shape`` (a tuple of int64 expressions, or None
    when only the rank ``ndim`` is known; ``ndim == -1`` for an unknown rank)."""

    shape: tuple | None = child(converter=_shape)
    dtype: DataType = plain(default="float32", converter=DataType)
    ndim: int = plain(default=-1, kw_only=True)
    span: object = span_field()

    def __attrs_post_init__(self):
        if self.shape is not None:
            if self.ndim not in (-1, len(self.shape)):
                raise ArgumentError(
                    f"TensorStructInfo: ndim={self.ndim} disagrees with the shape's rank "
                    f"{len(self.shape)}"
                )
            object.__setattr__(self, "ndim", len(self.shape))


@attrs.frozen(eq=False, repr=False)
class TupleStructInfo(StructInfo):
    """A tuple of values."""

    fields: tuple = child(converter=tuple)
    span: object = span_field()


def dim_text(dim) -> str:
    """One dimension for messages: ``784``, ``m`` or ``n * 2``."""
    if isinstance(dim, int):
        return str(dim)
    if isinstance(dim, IntImm):
        return str(dim.value)
    if isinstance(dim, Var):
        return dim.name
    try:
        return dim.script()
    except Exception:  # the printer is optional for messages
        return repr(dim)


def shape_text(shape) -> str:
    """``(1, m)``: a shape for messages."""
    if shape is None:
        return "(?)"
    parts = [dim_text(d) for d in shape]
    return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"

"""Reductions: ``te.sum``, ``te.max``, ``te.min`` and user reducers (``comm_reducer``).

A reduction is not an expression: it is the whole body of a ``te.compute`` and
becomes a block with a reduce iterator, whose ``T.init`` stores the reducer's
identity (or the ``init`` given) and whose body combines the running value with one
more element.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import attrs

from tilelang.errors import ArgumentError
from tilelang.ir import IterVar, PrimExpr, const, convert
from tilelang.ir import op as tir_op


@attrs.frozen(eq=False)
class Reduce:
    """``combiner`` folded over ``source`` for every point of ``axis``.

    ``init`` is the starting value (the reducer's identity unless given); ``where``
    an optional condition (elements where it is false are skipped).
    """

    reducer: CommReducer
    source: PrimExpr
    axis: tuple
    init: PrimExpr
    where: PrimExpr | None = None

    @property
    def dtype(self):
        return self.source.dtype

    def combine(self, acc: PrimExpr) -> PrimExpr:
        """The running value ``acc`` combined with one more element."""
        return self.reducer.fcombine(acc, self.source)


@attrs.frozen(eq=False)
class CommReducer:
    """A commutative reducer: ``fcombine(x, y)`` and the identity for a dtype.

    Calling it with an ``axis`` makes a reduction; calling it with two expressions
    combines them (``te.max(x, 0)`` is ``T.max(x, 0)``), as in TVM.
    """

    name: str
    fcombine: Callable
    fidentity: Callable

    def __call__(self, expr, axis=None, where=None, init=None):
        if axis is not None and not _is_axis(axis):
            return self.fcombine(convert(expr), axis)  # two values: combine them
        if axis is None:
            raise ArgumentError(f"te.{self.name} needs an axis (a te.reduce_axis) or two values")
        axes = tuple(axis) if isinstance(axis, (list, tuple)) else (axis,)
        for iv in axes:
            if iv.iter_type != IterVar.CommReduce:
                raise ArgumentError(f"te.{self.name}: axis {iv.var.name!r} is no reduce_axis")
        source = convert(expr)
        start = self.fidentity(source.dtype) if init is None else convert(init, source.dtype)
        return Reduce(self, source, axes, start, None if where is None else convert(where))


def _is_axis(axis) -> bool:
    if isinstance(axis, IterVar):
        return True
    return isinstance(axis, (list, tuple)) and all(isinstance(a, IterVar) for a in axis)


def _lowest(dtype) -> PrimExpr:
    if dtype.is_float():
        return const(-math.inf, dtype)
    if dtype.is_uint() or dtype.is_bool():
        return const(0, dtype)
    return const(-(2 ** (dtype.bits - 1)), dtype)


def _highest(dtype) -> PrimExpr:
    if dtype.is_float():
        return const(math.inf, dtype)
    if dtype.is_bool():
        return const(1, dtype)
    if dtype.is_uint():
        return const(2**dtype.bits - 1, dtype)
    return const(2 ** (dtype.bits - 1) - 1, dtype)


def comm_reducer(fcombine: Callable, fidentity: Callable, name: str = "reduce") -> CommReducer:
    """A reducer from ``fcombine(x, y)`` and ``fidentity(dtype)`` (TVM's ``te.comm_reducer``)."""
    return CommReducer(name, fcombine, fidentity)


sum = comm_reducer(lambda x, y: x + y, lambda dtype: const(0, dtype), "sum")  # noqa: A001
max = comm_reducer(tir_op.max, _lowest, "max")  # noqa: A001
min = comm_reducer(tir_op.min, _highest, "min")  # noqa: A001

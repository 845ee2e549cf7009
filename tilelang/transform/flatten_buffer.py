"""FlattenBuffer: every N-D access becomes one element index into a flat buffer.

``A[i, j]`` of a ``(m, n)`` buffer becomes ``A[i * n + j]``; explicit strides are
honoured (``A[i * s0 + j * s1]``) and a buffer's ``elem_offset`` is added into the
index. Each data variable gets one flat buffer ``(size,)`` with no strides and no
offset, sharing the original ``data`` var; for a parameter that var is
``buffer_map[param].data`` (``buffer_map`` itself keeps the N-D buffers the runtime
checks arrays against). ``Allocate`` extents become the single flat size.

Flat indices are computed in the type of the buffer's shape, widened to int64 where a
flat index may pass int32's range (a ``(65536, 32769)`` buffer, or ``(n, m)`` with
``int32`` variables): each dimension's index fits its int32 extent, but their
combination would wrap on every backend. See :func:`index_dtype`.
"""

from __future__ import annotations

import math

import attrs

from tilelang.arith import simplify
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.buffer import Buffer, dense_strides
from tilelang.ir.convert import binary, const_int_value
from tilelang.ir.functor import StmtExprMutator
from tilelang.transform.pass_infra import prim_func_pass

_INT32_MAX = 2**31 - 1


def _widen(expr, dtype: str):
    """``expr`` (an integer expression or Python int) as ``dtype`` when it is narrower."""
    if isinstance(expr, int):
        return E.IntImm(dtype, expr)
    if expr.dtype == dtype or expr.dtype.bits >= 64:
        return expr
    value = const_int_value(expr)
    return E.IntImm(dtype, value) if value is not None else E.Cast(dtype, expr)


def _largest_flat_index(buffer: Buffer) -> int | None:
    """The largest flat index of ``buffer`` as a Python int, or None when unknown."""
    offset = const_int_value(buffer.elem_offset)
    if offset is None:
        return None
    if not buffer.strides and len(buffer.shape) == 1:
        extent = const_int_value(buffer.shape[0])
        # a symbolic extent is itself a value of the (at most 32-bit) index type
        return offset + (_INT32_MAX if extent is None else extent - 1)
    extents = [const_int_value(e) for e in buffer.shape]
    if buffer.strides:
        strides = [const_int_value(s) for s in buffer.strides]
    else:
        strides, running = [], 1
        for extent in reversed(extents):
            strides.append(running)
            running = None if running is None or extent is None else running * extent
        strides.reverse()
    if None in extents or None in strides:
        return None
    return offset + sum((e - 1) * s for e, s in zip(extents, strides) if e > 0)


def index_dtype(buffer: Buffer) -> str:
    """The type ``buffer``'s flat indices are computed in: its shape's, or int64 when
    a flat index may not fit int32 (the largest one is unknown or past 2**31 - 1)."""
    parts = (*buffer.shape, *buffer.strides)
    if const_int_value(buffer.elem_offset) != 0:  # a zero offset adds nothing
        parts += (buffer.elem_offset,)
    if any(getattr(part, "dtype", None) is not None and part.dtype.bits == 64 for part in parts):
        return "int64"
    largest = _largest_flat_index(buffer)
    return "int32" if largest is not None and largest <= _INT32_MAX else "int64"


def _strides(buffer: Buffer, dtype: str) -> tuple:
    if buffer.strides:
        return tuple(_widen(s, dtype) for s in buffer.strides)
    if dtype == "int64":
        return dense_strides(tuple(_widen(e, dtype) for e in buffer.shape))
    return dense_strides(buffer.shape)


def size_dtype(buffer: Buffer) -> str:
    """The type ``buffer``'s flat size is computed in: its index type, or int64 when
    its last flat index is int32's largest value (``(65536, 32768)``: every index
    fits int32, but the 2**31 elements do not)."""
    dtype = index_dtype(buffer)
    if dtype == "int32" and _largest_flat_index(buffer) == _INT32_MAX:
        symbolic_1d = (
            not buffer.strides
            and len(buffer.shape) == 1
            and const_int_value(buffer.shape[0]) is None
        )  # (n,): the size is n itself, an int32 value (its largest index is a bound)
        return dtype if symbolic_1d else "int64"
    return dtype


def flat_size(buffer: Buffer) -> E.PrimExpr:
    """Elements from the data pointer to the buffer's last element, inclusive."""
    dtype = size_dtype(buffer)
    if not buffer.strides and const_int_value(buffer.elem_offset) == 0:
        if dtype == "int64":
            total = _widen(1, dtype)
            for extent in buffer.shape:
                total = binary("mul", total, _widen(extent, dtype))
            return total
        return buffer.total_elements()
    size = binary("add", _widen(buffer.elem_offset, dtype), _widen(1, dtype))
    for extent, stride in zip(buffer.shape, _strides(buffer, dtype)):
        last = binary("sub", _widen(extent, dtype), _widen(1, dtype))
        size = binary("add", size, binary("mul", last, stride))
    return size


def flat_index(buffer: Buffer, indices) -> E.PrimExpr:
    """The element offset of ``buffer[indices]`` from the data pointer (computed in
    :func:`index_dtype`)."""
    dtype = index_dtype(buffer)
    if not indices:
        return _widen(buffer.elem_offset, dtype)
    index = None
    for ix, stride in zip(indices, _strides(buffer, dtype)):
        if dtype == "int64":
            ix = _widen(ix, dtype)
        term = ix if const_int_value(stride) == 1 else binary("mul", ix, stride)
        index = term if index is None else binary("add", index, term)
    if const_int_value(buffer.elem_offset) != 0:
        index = binary("add", index, _widen(buffer.elem_offset, dtype))
    return index


def allocation_size(extents) -> E.PrimExpr:
    """The element count of an allocation of ``extents`` (one that declares no flat
    buffer right inside it), computed in int64 when it may not fit int32 by the rule
    of :func:`index_dtype`: ``T.allocate([65536, 65537], ...)`` holds 2**32 + 65536
    elements, which int32 arithmetic would wrap to 65536."""
    values = [const_int_value(e) for e in extents]
    if any(e.dtype.bits == 64 for e in extents):
        dtype = "int64"
    elif len(extents) == 1:
        dtype = "int32"  # a single extent is itself a value of its (32-bit) type
    elif None in values:
        dtype = "int64"  # a product of symbolic extents may pass int32
    else:
        dtype = "int64" if math.prod(values) > _INT32_MAX else "int32"
    size = _widen(1, dtype)
    for extent in extents:
        size = binary("mul", size, _widen(extent, dtype))
    return size


class _Flatten(StmtExprMutator):
    def __init__(self):
        self.flat: dict = {}  # (id(data), dtype) -> flat buffer
        self.sizes: dict = {}  # id(data) -> flat size for allocations

    def flat_buffer(self, buffer: Buffer) -> Buffer:
        key = (id(buffer.data), buffer.dtype)
        flat = self.flat.get(key)
        if flat is None:
            flat = Buffer(
                buffer.name,
                buffer.data,
                buffer.dtype,
                (simplify(flat_size(buffer)),),
                (),
                E.IntImm(index_dtype(buffer), 0),
                buffer.scope,
                buffer.offset_factor,
                buffer.data_alignment,
                span=buffer.span,
            )
            self.flat[key] = flat
        return flat

    def visit_buffer_def(self, buffer):
        return self.flat_buffer(buffer)

    def visit_buffer_ref(self, buffer):
        return self.flat_buffer(buffer)

    def _index(self, buffer, indices):
        return (flat_index(buffer, indices),)

    def visit_buffer_load(self, op):
        indices = tuple(self.visit(ix) for ix in op.indices)
        return E.BufferLoad(
            self.flat_buffer(op.buffer),
            self._index(op.buffer, indices),
            predicate=self._predicate(op),
            span=op.span,
        )

    def visit_buffer_store(self, op):
        indices = tuple(self.visit(ix) for ix in op.indices)
        value = self.visit(op.value)
        return S.BufferStore(
            self.flat_buffer(op.buffer),
            value,
            self._index(op.buffer, indices),
            predicate=self._predicate(op),
            span=op.span,
        )

    def _predicate(self, op):
        return None if op.predicate is None else self.visit(op.predicate)

    def visit_allocate(self, op: S.Allocate):
        body = self.visit(op.body)
        size = None
        if isinstance(op.body, S.DeclBuffer) and op.body.buffer.data is op.buffer_var:
            size = flat_size(op.body.buffer)
        if size is None:
            size = allocation_size(op.extents)
        return attrs.evolve(op, extents=(simplify(size),), body=body)


def flatten_buffer(func):
    """``func`` with every buffer access flattened; see the module docstring."""
    flattener = _Flatten()
    for buffer in func.buffer_map.values():
        flattener.flat_buffer(buffer)
    return func.with_body(flattener.visit(func.body))


def FlattenBuffer():  # noqa: N802 - TVM's pass name
    """The pass; see the module docstring."""

    def transform(func, mod, ctx):
        return flatten_buffer(func)

    return prim_func_pass(transform, opt_level=0, name="tir.FlattenBuffer")

"""FlattenBuffer: every N-D access becomes one element index into a flat buffer.

``A[i, j]`` of a ``(m, n)`` buffer becomes ``A[i * n + j]``; explicit strides are
honoured (``A[i * s0 + j * s1]``) and a buffer's ``elem_offset`` is added into the
index. Each data variable gets one flat buffer ``(size,)`` with no strides and no
offset, sharing the original ``data`` var; for a parameter that var is
``buffer_map[param].data`` (``buffer_map`` itself keeps the N-D buffers the runtime
checks arrays against). ``Allocate`` extents become the single flat size.
"""

from __future__ import annotations

import attrs

from tilelang.arith import simplify
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.buffer import Buffer, dense_strides
from tilelang.ir.convert import binary, const_int_value
from tilelang.ir.functor import StmtExprMutator
from tilelang.transform.pass_infra import prim_func_pass


def _strides(buffer: Buffer) -> tuple:
    return buffer.strides if buffer.strides else dense_strides(buffer.shape)


def flat_size(buffer: Buffer) -> E.PrimExpr:
    """Elements from the data pointer to the buffer's last element, inclusive."""
    if not buffer.strides and const_int_value(buffer.elem_offset) == 0:
        return buffer.total_elements()
    size = binary("add", buffer.elem_offset, 1)
    for extent, stride in zip(buffer.shape, _strides(buffer)):
        size = binary("add", size, binary("mul", binary("sub", extent, 1), stride))
    return size


def flat_index(buffer: Buffer, indices) -> E.PrimExpr:
    """The element offset of ``buffer[indices]`` from the data pointer."""
    if not indices:
        return buffer.elem_offset
    index = None
    for ix, stride in zip(indices, _strides(buffer)):
        term = ix if const_int_value(stride) == 1 else binary("mul", ix, stride)
        index = term if index is None else binary("add", index, term)
    if const_int_value(buffer.elem_offset) != 0:
        index = binary("add", index, buffer.elem_offset)
    return index


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
                E.IntImm(_index_dtype(buffer), 0),
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
            self.flat_buffer(op.buffer), self._index(op.buffer, indices), span=op.span
        )

    def visit_buffer_store(self, op):
        indices = tuple(self.visit(ix) for ix in op.indices)
        value = self.visit(op.value)
        return S.BufferStore(
            self.flat_buffer(op.buffer), value, self._index(op.buffer, indices), span=op.span
        )

    def visit_allocate(self, op: S.Allocate):
        body = self.visit(op.body)
        size = None
        if isinstance(op.body, S.DeclBuffer) and op.body.buffer.data is op.buffer_var:
            size = flat_size(op.body.buffer)
        if size is None:
            size = E.IntImm("int32", 1)
            for extent in op.extents:
                size = binary("mul", size, extent)
        return attrs.evolve(op, extents=(simplify(size),), body=body)


def _index_dtype(buffer: Buffer) -> str:
    for extent in buffer.shape:
        return extent.dtype
    return "int32"


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

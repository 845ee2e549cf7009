"""Buffers and regions.

A :class:`Buffer` is a typed, shaped view of memory: its ``data`` pointer variable,
``shape``, ``strides`` (empty for a dense row-major buffer), ``elem_offset`` (in
elements) and storage ``scope`` (``"global"``, ``"shared"``, ``"local"`` or a user
scope such as ``"global.A_reg"``). ``offset_factor`` (TVM's) says the element offset
is a multiple of it; as in TVM, 0 means 1, so every buffer has one (1 by default).
``axis_separators`` (TVM's) split the axes into
groups, each flattened to one physical axis (``[1]``: a 2-d physical buffer); on flat
memory the groups are laid out row-major one after the other, which is the plain
row-major layout, so the CPU backends need nothing for them. Buffers compare by
identity, like variables.
"""

from __future__ import annotations

import attrs

from tilelang.ir import expr as E
from tilelang.ir.convert import binary, const_int_value, convert
from tilelang.ir.dtype import HANDLE, INT32, INT64, DataType
from tilelang.ir.node import Node, child, define, ignored, plain, ref, span_field


def _exprs(values) -> tuple:
    return tuple(convert(v) for v in values)


def _offset(value) -> E.PrimExpr:
    return convert(value)


def _ints(values) -> tuple:
    return tuple(v.value if isinstance(v, E.IntImm) else int(v) for v in values)


def default_index_dtype(shape) -> DataType:
    """TVM's ``DefaultIndexType``: the type of the first extent, int64 for a 0-d
    buffer (TVM's default build). A buffer's default ``elem_offset`` is 0 of it."""
    return convert(shape[0]).dtype if len(shape) else INT64


def _zero_offset(buffer) -> E.IntImm:
    return E.IntImm(default_index_dtype(buffer.shape), 0)


@attrs.frozen(eq=False, repr=False)
class Buffer(Node):
    """A buffer; build one with :func:`decl_buffer`."""

    name: str = ignored()
    data: E.Var = define()
    dtype: DataType = plain(converter=DataType)
    shape: tuple = child(converter=_exprs)
    strides: tuple = child(factory=tuple, converter=_exprs)
    elem_offset: E.PrimExpr = child(
        default=attrs.Factory(_zero_offset, takes_self=True), converter=_offset
    )
    scope: str = plain(default="global")
    offset_factor: int = plain(default=1, converter=lambda v: int(v) or 1)
    data_alignment: int = plain(default=64)
    axis_separators: tuple = plain(factory=tuple, converter=lambda v: _ints(v))
    span: object = span_field()

    __hash__ = object.__hash__

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def total_elements(self) -> E.PrimExpr:
        """The number of elements the shape covers (1 for a scalar buffer)."""
        total = None
        for extent in self.shape:
            # folded like dense_strides: the parser folds constant products too
            total = extent if total is None else _fold_mul(total, extent)
        return E.IntImm(INT32, 1) if total is None else total

    def is_dense(self) -> bool:
        """True when the strides are those of a compact row-major layout."""
        return not self.strides or all(
            stride is expected or const_int_value(stride) == const_int_value(expected) is not None
            for stride, expected in zip(self.strides, dense_strides(self.shape))
        )

    def __getitem__(self, indices) -> E.BufferLoad:
        """``A[i, j]`` is the load ``BufferLoad(A, (i, j))``."""
        if not isinstance(indices, tuple):
            indices = (indices,)
        return self.vload(indices)

    def vload(self, indices, predicate=None) -> E.BufferLoad:
        """The load ``self[indices]``; ``predicate``: a bool vector masking its lanes."""
        return E.BufferLoad(self, _exprs(indices), predicate=predicate)

    def vstore(self, indices, value, predicate=None):
        """The statement ``self[indices] = value`` (value cast to the buffer's dtype);
        ``predicate``: a bool vector, only the lanes where it is true are written."""
        from tilelang.ir.stmt import BufferStore

        if not isinstance(indices, (tuple, list)):
            indices = (indices,)
        dtype = self.dtype
        if isinstance(value, E.PrimExpr) and value.dtype.is_vector():
            dtype = dtype.with_lanes(value.dtype.lanes)
        return BufferStore(self, convert(value, dtype), _exprs(indices), predicate=predicate)

    def access_ptr(self, mode="r", offset=0, extent=None) -> E.Call:
        """A pointer into this buffer for an extern call (see :func:`tilelang.ir.op.access_ptr`)."""
        from tilelang.ir.op import access_ptr

        return access_ptr(self, mode, offset, extent)


def dense_strides(shape) -> tuple:
    """Row-major strides, in elements, for ``shape``."""
    strides, running = [], E.IntImm(INT32, 1)
    shape = tuple(shape)
    for extent in reversed(shape[1:]):
        strides.append(running)
        running = _fold_mul(running, convert(extent))
    if shape:
        # the outermost extent scales no stride: the whole product (2**31 for a
        # (65536, 32768) buffer) need not fit the shape's type
        strides.append(running)
    return tuple(reversed(strides))


def _fold_mul(a: E.PrimExpr, b: E.PrimExpr) -> E.PrimExpr:
    ca, cb = const_int_value(a), const_int_value(b)
    if ca is not None and cb is not None and a.dtype == b.dtype:
        product = ca * cb
        low, high = a.dtype.value_range()
        if low <= product <= high:
            return E.IntImm(a.dtype, product)
        if a.dtype.is_int() and -(2**63) <= product < 2**63:
            # a count past int32 (a (65536, 32768) buffer's 2**31 elements) is an
            # int64 constant, not an out-of-range int32 one
            return E.IntImm(INT64, product)
    if ca == 1:
        return b
    return binary("mul", a, b)


def decl_buffer(
    shape,
    dtype="float32",
    name="buffer",
    data=None,
    strides=None,
    elem_offset=None,
    scope="global",
    offset_factor=0,
    span=None,
    axis_separators=(),
) -> Buffer:
    """A new buffer with a fresh data pointer unless ``data`` is given.

    As TVM's ``decl_buffer``, a buffer declared with an ``offset_factor`` but no
    ``elem_offset`` gets a fresh offset variable ``<name>_elem_offset`` (of the first
    extent's type): its offset is whatever the matched memory's is, a multiple of the
    factor. Without either, the offset is 0."""
    if isinstance(shape, (int, E.PrimExpr)):
        shape = (shape,)
    if elem_offset is None and offset_factor:
        first = convert(shape[0]) if len(shape) else None
        offset_dtype = first.dtype if first is not None else INT32
        elem_offset = E.Var(f"{name}_elem_offset", offset_dtype, span=span)
    return Buffer(
        name,
        data if data is not None else E.Var(name, HANDLE),
        dtype,
        tuple(shape),
        tuple(strides or ()),
        E.IntImm(default_index_dtype(shape), 0) if elem_offset is None else elem_offset,
        scope or "global",  # TVM: an empty storage scope is the global one
        offset_factor,
        axis_separators=axis_separators or (),
        span=span,
    )


@attrs.frozen(eq=False, repr=False)
class Range(Node):
    """The half-open interval ``[min, min + extent)``."""

    min: E.PrimExpr = child(converter=convert)
    extent: E.PrimExpr = child(converter=convert)
    span: object = span_field()

    @staticmethod
    def from_min_extent(min_value, extent) -> Range:
        return Range(min_value, extent)

    @staticmethod
    def from_bounds(begin, end) -> Range:
        """``[begin, end)``; the extent is ``end - begin`` unless ``begin`` is 0."""
        begin = convert(begin)
        return Range(begin, end if const_int_value(begin) == 0 else binary("sub", end, begin))


@attrs.frozen(eq=False, repr=False)
class BufferRegion(Node):
    """A rectangular region of a buffer: one :class:`Range` per dimension."""

    buffer: Buffer = ref()
    region: tuple = child(converter=tuple)
    span: object = span_field()

    @staticmethod
    def full(buffer: Buffer) -> BufferRegion:
        return BufferRegion(buffer, tuple(Range(0, extent) for extent in buffer.shape))


@attrs.frozen(eq=False, repr=False)
class MatchBufferRegion(Node):
    """``buffer = T.match_buffer(source[...])`` inside a block: a view of a region."""

    buffer: Buffer = define()
    source: BufferRegion = child()
    span: object = span_field()

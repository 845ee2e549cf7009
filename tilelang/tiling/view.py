"""Tensor views: nested sub-tensors of one buffer that know their addresses.

A root view covers a whole buffer. Indexing a view with segments, slices and ints
makes a sub-view; indexing is always **relative to the view being indexed** (index 0
of a sub-view is its first element, wherever that lies in the root). Each view knows

* ``shape`` and ``strides`` (in elements; a sub-view inherits its root's strides,
  multiplied by the step of a strided slice),
* ``offset``: where it starts relative to its parent, in elements,
* ``addr``: where it starts relative to the root, in elements,

as Python ints when everything is concrete and IR expressions otherwise.
"""

from __future__ import annotations

import attrs

from tilelang.errors import ArgumentError
from tilelang.ir import expr as E
from tilelang.ir.buffer import Buffer, BufferRegion, Range, decl_buffer
from tilelang.ir.convert import convert
from tilelang.tiling import arith
from tilelang.tiling.segment import Segment


@attrs.frozen(eq=False, repr=False)
class TensorView:
    """A (possibly strided) rectangular view of ``buffer``; see the module docstring.

    ``origin`` is the root index of the view's first element along every root axis;
    view axis ``k`` walks root axis ``axes[k]`` in steps of ``steps[k]``. An int index
    drops its axis, as in NumPy.
    """

    buffer: Buffer
    shape: tuple
    strides: tuple
    offset: arith.Value
    addr: arith.Value
    origin: tuple
    axes: tuple
    steps: tuple
    parent: TensorView | None = None

    @staticmethod
    def root(name_or_buffer, shape=None, strides=None, dtype="float32", scope="global"):
        """The view of a whole buffer: an existing ``Buffer``, or a new one named
        ``name_or_buffer`` with ``shape`` (ints or integer expressions), optional
        ``strides`` (elements; row-major when omitted) and ``dtype``."""
        if isinstance(name_or_buffer, Buffer):
            buffer = name_or_buffer
            if shape is not None and len(shape) != buffer.ndim:
                raise ArgumentError(f"buffer {buffer.name} has {buffer.ndim} dimensions")
        else:
            if shape is None:
                raise ArgumentError(f"TensorView.root({name_or_buffer!r}) needs a shape")
            buffer = decl_buffer(
                tuple(convert(arith.value(x)) for x in shape),
                dtype,
                str(name_or_buffer),
                strides=tuple(convert(arith.value(x)) for x in strides) if strides else None,
                scope=scope,
            )
        dims = tuple(arith.value(x) for x in buffer.shape)
        if buffer.strides:
            root_strides = tuple(arith.value(x) for x in buffer.strides)
        else:
            root_strides = _dense_strides(dims)
        rank = len(dims)
        return TensorView(
            buffer,
            dims,
            root_strides,
            0,
            0,
            (0,) * rank,
            tuple(range(rank)),
            (1,) * rank,
        )

    # ------------------------------------------------------------ properties

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def dtype(self):
        return self.buffer.dtype

    @property
    def name(self) -> str:
        return self.buffer.name

    def numel(self) -> arith.Value:
        """The number of elements the view covers."""
        total = 1
        for extent in self.shape:
            total = arith.mul(total, extent)
        return total

    def is_concrete(self) -> bool:
        return arith.is_concrete(*self.shape, *self.strides, self.addr)

    # -------------------------------------------------------------- indexing

    def __getitem__(self, key) -> TensorView:
        """The sub-view selected by ``key``, relative to this view.

        A :class:`Segment` keeps its axis with ``length`` elements from ``start``; a
        slice ``a:b:s`` keeps it with ``ceil((b - a) / s)`` elements, every ``s``-th
        (its stride is multiplied by ``s``); an int or integer expression selects
        one index and drops the axis. Missing trailing axes (or ``...``) are kept
        whole.
        """
        items = _expand(key if isinstance(key, tuple) else (key,), self.ndim, self)
        offset = 0
        origin = list(self.origin)
        shape, strides, axes, steps = [], [], [], []
        for k, item in enumerate(items):
            start, length, step = self._select(k, item)
            offset = arith.add(offset, arith.mul(start, self.strides[k]))
            root_axis = self.axes[k]
            origin[root_axis] = arith.add(origin[root_axis], arith.mul(start, self.steps[k]))
            if length is not None:
                shape.append(length)
                strides.append(arith.mul(self.strides[k], step))
                axes.append(root_axis)
                steps.append(arith.mul(self.steps[k], step))
        return TensorView(
            self.buffer,
            tuple(shape),
            tuple(strides),
            offset,
            arith.add(self.addr, offset),
            tuple(origin),
            tuple(axes),
            tuple(steps),
            self,
        )

    def _select(self, k, item):
        """``(start, length or None for a dropped axis, step)`` of one index."""
        extent = self.shape[k]
        if isinstance(item, Segment):
            start, length = item.start, item.length
            _check_range(self, k, start, arith.add(start, length), extent)
            return start, length, 1
        if isinstance(item, slice):
            start = 0 if item.start is None else arith.value(item.start)
            stop = extent if item.stop is None else arith.value(item.stop)
            step = 1 if item.step is None else arith.value(item.step)
            if arith.is_concrete(step) and step <= 0:
                raise ArgumentError(f"view {self.name}: axis {k} needs a positive step")
            _check_range(self, k, start, stop, extent)
            length = arith.ceildiv(arith.sub(stop, start), step)
            return start, length, step
        index = arith.value(item)
        if arith.is_concrete(index, extent) and not 0 <= index < extent:
            raise ArgumentError(
                f"view {self.name}: index {index} is out of range for axis {k} of extent {extent}"
            )
        return index, None, 1

    # ------------------------------------------------------------ accesses

    def root_indices(self, *indices) -> tuple:
        """The root buffer's indices of the element at ``indices`` of this view."""
        if len(indices) != self.ndim:
            raise ArgumentError(
                f"view of {self.name} has {self.ndim} dimensions, got {len(indices)} indices"
            )
        origin = list(self.origin)
        for k, index in enumerate(indices):
            axis = self.axes[k]
            origin[axis] = arith.add(origin[axis], arith.mul(arith.value(index), self.steps[k]))
        return tuple(convert(x) for x in origin)

    def load(self, *indices) -> E.BufferLoad:
        """``BufferLoad`` of the element at ``indices`` (relative to this view)."""
        return E.BufferLoad(self.buffer, self.root_indices(*indices))

    def store(self, value, *indices):
        """``BufferStore`` of ``value`` at ``indices`` (relative to this view)."""
        return self.buffer.vstore(self.root_indices(*indices), value)

    def region(self) -> BufferRegion:
        """The root buffer region the view spans (the bounding box of a strided view)."""
        extents = [1] * len(self.origin)
        for extent, axis, step in zip(self.shape, self.axes, self.steps):
            extents[axis] = arith.add(arith.mul(arith.sub(extent, 1), step), 1)
        return BufferRegion(
            self.buffer,
            tuple(Range(convert(lo), convert(n)) for lo, n in zip(self.origin, extents)),
        )

    def __repr__(self) -> str:
        return (
            f"TensorView({self.name}, shape={_fmt(self.shape)}, strides={_fmt(self.strides)}, "
            f"offset={self.offset!r}, addr={self.addr!r})"
        )


def _dense_strides(shape) -> tuple:
    strides, running = [], 1
    for extent in reversed(shape):
        strides.append(running)
        running = arith.mul(running, extent)
    return tuple(reversed(strides))


def _expand(items: tuple, ndim: int, view) -> tuple:
    """``items`` with ``...`` and missing trailing axes filled by full slices."""
    ellipses = sum(1 for x in items if x is Ellipsis)
    if ellipses > 1:
        raise ArgumentError(f"view {view.name}: at most one ... in an index")
    given = len(items) - ellipses
    if given > ndim:
        raise ArgumentError(f"view of {view.name} has {ndim} dimensions, got {given} indices")
    fill = (slice(None),) * (ndim - given)
    if ellipses:
        at = next(i for i, x in enumerate(items) if x is Ellipsis)
        return items[:at] + fill + items[at + 1 :]
    return items + fill


def _check_range(view, k, start, stop, extent) -> None:
    if arith.is_concrete(start, stop, extent) and not 0 <= start <= stop <= extent:
        raise ArgumentError(
            f"view {view.name}: [{start}, {stop}) is out of range for axis {k} of extent "
            f"{extent} (indices are relative to the view)"
        )


def _fmt(values) -> str:
    return "(" + ", ".join(repr(v) for v in values) + ("," if len(values) == 1 else "") + ")"

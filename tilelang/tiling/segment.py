"""Segments: half-open index ranges ``[start, stop)`` along one axis, and chunking.

A :class:`Segment` holds concrete ints when its bounds are known and IR expressions
otherwise; every operation works on both (see :mod:`tilelang.tiling.arith`).
"""

from __future__ import annotations

from collections.abc import Iterator

import attrs

from tilelang.errors import ArgumentError
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.tiling import arith
from tilelang.tiling.builder import scoped


@attrs.frozen(eq=False)
class Segment:
    """The indices ``[start, start + length)`` of one axis.

    ``pad_before`` / ``pad_after`` count virtual elements (zero padding of a
    convolution) that the segment covers beyond the real data; :meth:`clip` sets them.
    ``index`` is the segment's position in the sequence that produced it (0, 1, ...,
    or the symbolic iteration number), useful to alternate ping-pong buffers.

    Build one with ``Segment.of(start, stop)`` or ``Segment(start, length=...)``.
    """

    start: arith.Value = attrs.field(converter=arith.value)
    length: arith.Value = attrs.field(converter=arith.value)
    pad_before: arith.Value = attrs.field(default=0, converter=arith.value, kw_only=True)
    pad_after: arith.Value = attrs.field(default=0, converter=arith.value, kw_only=True)
    index: arith.Value = attrs.field(default=0, converter=arith.value, kw_only=True)

    @staticmethod
    def of(start, stop, **kwargs) -> Segment:
        """The segment ``[start, stop)``."""
        return Segment(start, arith.sub(arith.value(stop), arith.value(start)), **kwargs)

    @property
    def stop(self) -> arith.Value:
        """The exclusive end, ``start + length``."""
        return arith.add(self.start, self.length)

    @property
    def padded_length(self) -> arith.Value:
        """``length`` plus the padding on both sides."""
        return arith.add(arith.add(self.pad_before, self.length), self.pad_after)

    def is_concrete(self) -> bool:
        return arith.is_concrete(self.start, self.length)

    def output_by_stride(self, stride) -> Segment:
        """The output indices ``o`` of a stride-``stride`` operation whose input
        position ``o * stride`` lies in this segment: ``[ceil(start/s), ceil(stop/s))``.

        Consecutive input segments map to consecutive, non-overlapping output
        segments, so a tiled strided operation writes every output exactly once.
        """
        first = arith.ceildiv(self.start, stride)
        return Segment.of(first, arith.ceildiv(self.stop, stride), index=self.index)

    def scale(self, factor) -> Segment:
        """``[start * factor, stop * factor)``: output coordinates back to input ones."""
        return Segment(
            arith.mul(self.start, factor), arith.mul(self.length, factor), index=self.index
        )

    def shift(self, base) -> Segment:
        """The same indices relative to ``base`` (a Segment, whose ``start`` is used,
        or an offset): what indexes a sub-view whose origin is ``base.start``."""
        origin = base.start if isinstance(base, Segment) else arith.value(base)
        return attrs.evolve(self, start=arith.sub(self.start, origin))

    def clip(self, lo, hi) -> Segment:
        """The part inside ``[lo, hi)``, with what was cut off recorded as padding."""
        start = arith.maximum(self.start, lo)
        stop = arith.minimum(self.stop, hi)
        return Segment.of(
            start,
            stop,
            pad_before=arith.add(self.pad_before, arith.sub(start, self.start)),
            pad_after=arith.add(self.pad_after, arith.sub(self.stop, stop)),
            index=self.index,
        )

    def split(self, chunk, name: str = "seg") -> Iterator[Segment]:
        """``segment_by_chunk(self.start, chunk, self.stop)``."""
        return segment_by_chunk(self.start, chunk, self.stop, name=name)

    def __repr__(self) -> str:
        pad = ""
        if arith.as_int(self.pad_before) != 0 or arith.as_int(self.pad_after) != 0:
            pad = f", pad=({self.pad_before!r}, {self.pad_after!r})"
        return f"Segment([{self.start!r}, {self.stop!r}){pad})"


def segment_by_chunk(start, chunk, stop, name: str = "seg") -> Iterator[Segment]:
    """The segments ``[start, start + chunk), [start + chunk, ...)`` up to ``stop``,
    the last one clipped to ``stop`` (a ragged tail).

    With integer arguments this is a plain iterator over concrete segments: a loop
    over it is unrolled when the program is built::

        >>> list(segment_by_chunk(0, 4, 10))
        [Segment([0, 4)), Segment([4, 8)), Segment([8, 10))]

    With a symbolic bound it yields a single symbolic segment and must be consumed by
    :func:`~tilelang.tiling.seq`: the statements yielded while it is open land in the
    strided loop ``for lo in T.serial(start, stop, chunk)`` (``ceildiv(stop - start,
    chunk)`` iterations), under ``len = T.min(chunk, stop - lo)``; the segment is
    ``[lo, lo + len)``. ``name`` names the loop variable (``lo`` is ``{name}``, the
    length ``{name}_len``).
    """
    start, chunk, stop = arith.value(start), arith.value(chunk), arith.value(stop)
    if arith.is_concrete(chunk) and chunk <= 0:
        raise ArgumentError(f"segment_by_chunk needs a positive chunk, got {chunk}")
    if arith.is_concrete(start, chunk, stop):
        count = max(0, arith.ceildiv(stop - start, chunk))
        return iter(
            [
                Segment(start + k * chunk, min(chunk, stop - start - k * chunk), index=k)
                for k in range(count)
            ]
        )
    return _symbolic_segments(start, chunk, stop, name)


def _symbolic_segments(start, chunk, stop, name) -> Iterator[Segment]:
    dtype = arith.int_dtype(start, chunk, stop)
    lo = E.Var(name, dtype)
    length = E.Var(f"{name}_len", dtype)
    extent = arith.sub(stop, start)

    def wrap(body: S.Stmt) -> S.Stmt:
        tail = arith.minimum(arith.typed(chunk, dtype), arith.sub(stop, lo))
        return S.For(
            lo,
            arith.typed(start, dtype),
            arith.typed(extent, dtype),
            S.ForKind.SERIAL,
            S.LetStmt(length, tail, body),
            # a unit step is the plain loop (step None), as the parser reads it back
            step=None if arith.as_int(chunk) == 1 else arith.typed(chunk, dtype),
        )

    index = arith.floordiv(arith.sub(lo, start), chunk)
    segment = Segment(lo, length, index=index)
    return scoped(f"segment_by_chunk loop {name!r}", wrap, segment, (lo, length))

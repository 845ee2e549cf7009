"""LowerMatchBuffer: a block's ``T.match_buffer`` views become accesses to the source.

``X = T.match_buffer(A[vi * 16:vi * 16 + 16, 0:16], (16, 16))`` makes ``X[i, j]`` mean
``A[vi * 16 + i, j]``. The view's symbolic fields are bound to what the source region
implies: a ``Var`` ``elem_offset`` becomes ``A.elem_offset + sum(min_d * stride_d)``
and ``Var`` strides become the source's strides (so ``sa`` in
``T.call_extern("tmm16", ..., sa)`` is the source's row stride), and ``X.data`` is
``A.data`` (so ``X.access_ptr(...)`` points into ``A``).

A view of lower rank than its region matches the region's trailing dimensions; the
leading ones must have extent 1 and contribute their minimum.
"""

from __future__ import annotations

import attrs

from tilelang.errors import BuildError
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.buffer import BufferRegion, Range, dense_strides
from tilelang.ir.convert import binary, const_int_value
from tilelang.ir.functor import StmtExprMutator, substitute
from tilelang.transform.pass_infra import prim_func_pass


def _source_strides(buffer) -> tuple:
    return buffer.strides if buffer.strides else dense_strides(buffer.shape)


class _Lower(StmtExprMutator):
    def __init__(self):
        # view buffer -> (source buffer, per-dimension offsets of the view's axes,
        #                 offsets of the leading, dropped axes)
        self.views: dict = {}

    def visit_block(self, op: S.Block):
        if not op.match_buffers:
            return self.generic_visit(op)
        bindings: dict = {}
        for match in op.match_buffers:
            self._bind(match, bindings)
        block = attrs.evolve(op, match_buffers=())
        if bindings:
            block = substitute(block, bindings)
        return self.generic_visit(block)

    def _bind(self, match, bindings: dict) -> None:
        view, source = match.buffer, match.source
        source_buffer = source.buffer
        while source_buffer in self.views:  # a view of a view: resolve to the root
            source_buffer, source = self._resolve_region(source)
        region = source.region
        lead = len(region) - len(view.shape)
        if lead < 0:
            raise BuildError(
                f"match_buffer {view.name} has rank {len(view.shape)} but its source region "
                f"of {source_buffer.name} has rank {len(region)}"
            )
        for r in region[:lead]:
            if const_int_value(r.extent) != 1:
                raise BuildError(
                    f"match_buffer {view.name}: leading source dimensions it does not "
                    "cover must have extent 1"
                )
        self.views[view] = (source_buffer, tuple(r.min for r in region))
        strides = _source_strides(source_buffer)
        offset = source_buffer.elem_offset
        for r, stride in zip(region, strides):
            offset = binary("add", offset, binary("mul", r.min, stride))
        if isinstance(view.elem_offset, E.Var):
            bindings[view.elem_offset] = offset
        for view_stride, stride in zip(view.strides, strides[lead:]):
            if isinstance(view_stride, E.Var):
                bindings[view_stride] = stride
        for view_extent, r in zip(view.shape, region[lead:]):
            if isinstance(view_extent, E.Var):
                bindings[view_extent] = r.extent
        bindings[view.data] = source_buffer.data

    def _resolve_region(self, region):
        source, mins = self.views[region.buffer]
        lead = len(mins) - len(region.region)
        ranges = list(region.region)
        new = [Range(m, 1) for m in mins[:lead]] + [
            Range(binary("add", m, r.min), r.extent) for m, r in zip(mins[lead:], ranges)
        ]
        return source, BufferRegion(source, tuple(new))

    def _indices(self, buffer, indices):
        source, mins = self.views[buffer]
        lead = len(mins) - len(indices)
        return source, (*mins[:lead], *(binary("add", m, i) for m, i in zip(mins[lead:], indices)))

    def visit_buffer_load(self, op: E.BufferLoad):
        new = self.generic_visit(op)
        if new.buffer not in self.views:
            return new
        source, indices = self._indices(new.buffer, new.indices)
        return E.BufferLoad(source, indices, predicate=new.predicate, span=op.span)

    def visit_buffer_store(self, op: S.BufferStore):
        new = self.generic_visit(op)
        if new.buffer not in self.views:
            return new
        source, indices = self._indices(new.buffer, new.indices)
        return S.BufferStore(source, new.value, indices, predicate=new.predicate, span=op.span)

    def visit_buffer_region(self, op):
        if op.buffer not in self.views:
            return self.generic_visit(op)
        return self._resolve_region(self.generic_visit(op))[1]


def LowerMatchBuffer():  # noqa: N802 - TVM's pass name
    """The pass; see the module docstring."""

    def transform(func, mod, ctx):
        return func.with_body(_Lower().visit(func.body))

    return prim_func_pass(transform, opt_level=0, name="tir.LowerMatchBuffer")

"""The ``buffer_dim_align`` block annotation ``Schedule.storage_align`` writes, read back
when allocations are compacted: strides padded so that ``stride[axis] % factor ==
offset`` (TVM's rule, used to dodge shared-memory bank conflicts and to align rows).

The annotation is a list of ``[buffer_index, axis, factor, offset]`` on a block, the
buffer being ``writes[buffer_index]`` of that block.
"""

from __future__ import annotations

from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.convert import binary, const_int_value
from tilelang.ir.functor import post_order_visit

ANNOTATION = "buffer_dim_align"


def _int(value):
    return value.value if isinstance(value, E.IntImm) else value


def alignments(body) -> dict:
    """``{buffer: {axis: (factor, offset)}}`` from every annotated block in ``body``."""
    found: dict = {}

    def visit(node):
        if isinstance(node, S.Block) and ANNOTATION in node.annotations:
            for entry in node.annotations[ANNOTATION]:
                index, axis, factor, offset = (_int(x) for x in entry)
                buffer = node.writes[index].buffer
                axis = axis + len(buffer.shape) if axis < 0 else axis
                found.setdefault(buffer, {})[axis] = (factor, offset)

    post_order_visit(body, visit)
    return found


def aligned_strides(shape, aligns: dict) -> tuple:
    """Row-major strides of ``shape`` where each aligned axis's stride is raised to the
    next value congruent to its offset modulo its factor (a symbolic stride is left
    unpadded: its remainder is unknown)."""
    dtype = shape[-1].dtype if shape else "int32"
    strides, stride = [], E.IntImm(dtype, 1)
    for axis in reversed(range(len(shape))):
        value = const_int_value(stride)
        if axis in aligns and value is not None:
            factor, offset = aligns[axis]
            stride = E.IntImm(dtype, value + (factor + offset - value % factor) % factor)
        strides.append(stride)
        value, extent = const_int_value(stride), const_int_value(shape[axis])
        if value is not None and extent is not None:
            stride = E.IntImm(dtype, value * extent)
        else:
            stride = binary("mul", stride, shape[axis])
    return tuple(reversed(strides))

"""Comprehension-based tiling: segments, nested tensor views with addresses, seq().

A tiled program is written as a Python comprehension over :class:`Segment`s and
:class:`TensorView`s and turned into IR by :func:`seq`; see ``docs/tiling.md``.
Concrete sizes unroll at build time, symbolic sizes become real (strided) loops.
"""

from tilelang.tiling.builder import let, loop, seq
from tilelang.tiling.func import make_prim_func
from tilelang.tiling.intrinsic import (
    Instruction,
    Intrinsic,
    TensorOperand,
    ViewArgs,
    instructions,
    intrinsic,
    tensor,
)
from tilelang.tiling.segment import Segment, segment_by_chunk
from tilelang.tiling.view import TensorView

__all__ = [
    "Segment", "segment_by_chunk", "TensorView", "seq", "loop", "let", "intrinsic",
    "tensor", "Intrinsic", "TensorOperand", "Instruction", "ViewArgs", "instructions",
    "make_prim_func",
]  # fmt: skip

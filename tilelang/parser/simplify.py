"""The one simplification the parser does: the extent ``hi - lo`` of a range.

``T.serial(n, n + 4)``, ``A[vi:vi + 3]`` and ``T.axis.spatial((lo, hi), ...)`` are
written with bounds but stored as ``(min, extent)``. TVM simplifies ``hi - lo``; the
common shapes are folded here so that a printed range parses back to the same extent.
"""

from __future__ import annotations

from tilelang.ir import Add, PrimExpr, const, structural_equal
from tilelang.ir.convert import binary, const_int_value, match_types


def extent_of(lo, hi) -> PrimExpr:
    """``hi - lo`` with constants folded and ``(lo + e) - lo`` reduced to ``e``."""
    lo_value, hi_value = const_int_value(lo), const_int_value(hi)
    if lo_value is not None and hi_value is not None:
        dtype = next((x.dtype for x in (hi, lo) if isinstance(x, PrimExpr)), None)
        return const(hi_value - lo_value, dtype)
    if lo_value == 0:
        lo_expr, hi_expr = match_types(lo, hi)
        return hi_expr
    if isinstance(hi, Add) and isinstance(lo, PrimExpr) and structural_equal(hi.a, lo):
        return hi.b
    return binary("sub", hi, lo)


def region_extent(lo, hi) -> PrimExpr:
    """The extent of the region slice ``lo:hi``: ``hi - lo`` simplified, as TVM's
    ``Buffer.__getitem__`` writes it (``A[vi - 1:vi + 2]`` has extent 3)."""
    from tilelang.arith import simplify

    extent = extent_of(lo, hi)
    return extent if const_int_value(extent) is not None else simplify(extent)

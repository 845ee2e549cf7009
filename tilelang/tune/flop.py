"""Floating-point operation counts of a workload, for GFLOP/s figures.

Each ``BufferStore`` counts its floating-point operations (``+ - * / min max`` and
math calls of a float type; integer index arithmetic such as a convolution's ``y + ry``
and selections such as ``if_then_else`` are not arithmetic on the data) times the trip
count of the loops around it; initialisations (a block's ``init``) count nothing, as in
TVM's FLOP estimator. ``C[i, j] += A[i, k] * B[k, j]`` over 1024^3 iterations is
2 * 1024^3.
"""

from __future__ import annotations

from tilelang.ir import expr as E
from tilelang.ir.functor import StmtExprVisitor

_COUNTED = (E.Add, E.Sub, E.Mul, E.Div, E.Min, E.Max, E.Call)
_NOT_ARITHMETIC = {"if_then_else", "reinterpret"}


class _FlopCounter(StmtExprVisitor):
    def __init__(self):
        self.trips = 1
        self.flop = 0
        self.in_store = False
        self.ops = 0

    def visit_for(self, op):
        extent = op.extent.value if isinstance(op.extent, E.IntImm) else 1
        saved, self.trips = self.trips, self.trips * extent
        self.visit(op.body)
        self.trips = saved

    def visit_block(self, op):
        self.visit(op.body)  # the init is not counted

    def visit_buffer_store(self, op):
        self.ops = 0
        self.in_store = True
        self.visit(op.value)
        self.in_store = False
        self.flop += self.ops * self.trips

    def generic_visit(self, op):
        if self.in_store and isinstance(op, _COUNTED) and op.dtype.is_float():
            if not (isinstance(op, E.Call) and op.op in _NOT_ARITHMETIC):
                self.ops += op.dtype.lanes
        return super().generic_visit(op)


def estimate_flop(mod) -> float:
    """The FLOP count of every prim_func of ``mod``."""
    total = 0
    for _, func in mod.functions.items():
        body = getattr(func, "body", None)
        if body is not None:
            counter = _FlopCounter()
            counter.visit(body)
            total += counter.flop
    return float(total)

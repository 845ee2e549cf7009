"""Loop metadata that keeps LLVM's pass order from undoing a schedule.

LLVM's -O3 pipeline fully unrolls loops of small constant trip count (LoopFullUnroll,
in the function simplification pipeline) *before* the loop vectoriser runs. A
scheduled register tile such as ``for fi in range(8): for xi in range(8): O[.., xi] +=
I[.., xi] * W[fi]`` then reaches the vectoriser with its unit-stride ``xi`` loop
unrolled into eight scalar statements, and the vectoriser widens the *outer* ``fi``
loop instead, with gathers and scatters at stride 3136 (4.4x slower than gcc on the
conv2d in benchmarks/bench_conv2d.py). gcc vectorises the innermost loop first.

:func:`serial_loop_hints` marks an innermost serial loop of constant trip count that
stores with unit stride in its own variable (the loop a vectoriser wants) with
``llvm.loop.unroll.disable``: it reaches the loop vectoriser intact, whose cost model
decides as for any loop; loops around it are still unrolled, and loops without such a
store (scalar reductions, tiny loops) are left to LLVM's unroller. Long loops (more than
:data:`MAX_FULL_UNROLL_TRIP` iterations) are left alone too: LLVM does not unroll them
fully, and the hint would also stop the vectoriser from interleaving them (it reads
``unroll.disable`` as "interleave once").
"""

from __future__ import annotations

from tilelang.arith.linear import linear_form
from tilelang.ir import expr as E
from tilelang.ir import stmt as S
from tilelang.ir.functor import StmtExprVisitor

#: below this trip count a vector loop is not worth keeping the loop for
MIN_VECTOR_TRIP = 4
#: above this trip count LLVM's -O3 does not fully unroll a loop (its size threshold)
MAX_FULL_UNROLL_TRIP = 64


class _InnerStores(StmtExprVisitor):
    """The store indices of a loop body, and whether it holds another loop."""

    def __init__(self):
        self.indices: list = []
        self.has_loop = False

    def visit_for(self, op):
        self.has_loop = True

    visit_while = visit_for

    def visit_buffer_store(self, op):
        self.indices.extend(op.indices)
        self.generic_visit(op)


def _unit_stride(index, var) -> bool:
    if not index.dtype.is_integer() or index.dtype.lanes != 1:
        return False
    for atom, coeff in linear_form(index).live_terms():
        if atom is var:
            return coeff == 1
    return False


def serial_loop_hints(loop: S.For) -> list:
    """``[("llvm.loop.unroll.disable", None)]`` for an innermost, constant-trip,
    unit-stride-storing serial loop (see the module docstring), else ``[]``."""
    if not isinstance(loop.extent, E.IntImm):
        return []
    if not MIN_VECTOR_TRIP <= loop.extent.value <= MAX_FULL_UNROLL_TRIP:
        return []
    if loop.step is not None and not (isinstance(loop.step, E.IntImm) and loop.step.value == 1):
        return []
    found = _InnerStores()
    found.visit(loop.body)
    if found.has_loop or not any(_unit_stride(i, loop.loop_var) for i in found.indices):
        return []
    return [("llvm.loop.unroll.disable", None)]

"""TVM-compatible ``tir`` namespace: ``tilelang.tir.Schedule`` as ``tvm.tir.Schedule``.

Programs written against TVM (``sch = tvm.tir.Schedule(mod)``) run with
``import tilelang as tvm``.
"""

from tilelang.schedule import BlockRV, ExprRV, LoopRV, SBlockRV, Schedule, Trace

__all__ = ["Schedule", "Trace", "BlockRV", "SBlockRV", "LoopRV", "ExprRV"]

"""TVM-compatible ``tir`` namespace: ``tilelang.tir.Schedule`` as ``tvm.tir.Schedule``.

Programs written against TVM (``sch = tvm.tir.Schedule(mod)``) run with
``import tilelang as tvm``.
"""

from tilelang.schedule import (
    BlockRV,
    ExprRV,
    Instruction,
    InstructionKind,
    LoopRV,
    SBlockRV,
    Schedule,
    ScheduleState,
    StmtSRef,
    Trace,
)
from tilelang.schedule.index_map import IndexMap
from tilelang.schedule.tensor_intrin import TensorIntrin

__all__ = [
    "Schedule",
    "Trace",
    "BlockRV",
    "SBlockRV",
    "LoopRV",
    "ExprRV",
    "Instruction",
    "InstructionKind",
    "ScheduleState",
    "StmtSRef",
    "TensorIntrin",
    "IndexMap",
]

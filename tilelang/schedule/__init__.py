"""TensorIR schedules: :class:`Schedule` with its primitives, handles and trace."""

from tilelang.schedule.schedule import Schedule
from tilelang.schedule.state import BlockRV, ExprRV, LoopRV
from tilelang.schedule.trace import Instruction, Trace

__all__ = ["Schedule", "BlockRV", "LoopRV", "ExprRV", "Instruction", "Trace"]

"""Passes, the pass context and the lowering pipeline (TVM's ``tvm.transform`` and
``tvm.tir.transform`` in one package). One pass per module; the pipeline is the
plain list in :mod:`tilelang.transform.pipeline`."""

from tilelang.transform.bind_arguments import BindArguments
from tilelang.transform.compact_buffer_allocation import CompactBufferAllocation
from tilelang.transform.convert_blocks_to_opaque import ConvertBlocksToOpaque
from tilelang.transform.flatten_buffer import FlattenBuffer
from tilelang.transform.instrument import PassInstrument, PassTimingInstrument, PrintIR
from tilelang.transform.instrument_bound_checkers import InstrumentBoundCheckers
from tilelang.transform.lower_init_block import LowerInitBlock
from tilelang.transform.lower_match_buffer import LowerMatchBuffer
from tilelang.transform.lower_opaque_block import LowerOpaqueBlock
from tilelang.transform.pass_infra import (
    ModulePass,
    Pass,
    PassContext,
    PassInfo,
    PrimFuncPass,
    Sequential,
    module_pass,
    prim_func_pass,
)
from tilelang.transform.pipeline import lower, lower_passes, phases
from tilelang.transform.plan_buffer_allocation import PlanAndUpdateBufferAllocationLocation
from tilelang.transform.remove_no_op import RemoveNoOp
from tilelang.transform.simplify import Simplify
from tilelang.transform.unroll_loop import UnrollLoop
from tilelang.transform.verify_bounds import BoundsWarning, VerifyBufferBounds
from tilelang.transform.verify_well_formed import VerifyWellFormed, WellFormedError

__all__ = [
    "Pass", "PassInfo", "PassContext", "ModulePass", "PrimFuncPass", "Sequential",
    "module_pass", "prim_func_pass", "PassInstrument", "PrintIR", "PassTimingInstrument",
    "lower", "lower_passes", "phases", "VerifyWellFormed", "WellFormedError",
    "LowerInitBlock", "ConvertBlocksToOpaque", "PlanAndUpdateBufferAllocationLocation",
    "CompactBufferAllocation", "LowerMatchBuffer", "LowerOpaqueBlock", "FlattenBuffer",
    "Simplify", "RemoveNoOp", "UnrollLoop", "BindArguments", "VerifyBufferBounds",
    "BoundsWarning", "InstrumentBoundCheckers",
]  # fmt: skip

"""The lowering pipeline: TensorIR with blocks -> the flat form of docs/lowered_ir.md.

The passes run in the order listed, grouped in phases as TVM groups them. A user
pass registered with ``PassContext(config={"tir.add_lower_pass": [(phase, pass)]})``
runs right after the built-in passes of its phase (0 to 3).
"""

from __future__ import annotations

from tilelang.ir import IRModule, PrimFunc
from tilelang.transform.bind_arguments import BindArguments
from tilelang.transform.compact_buffer_allocation import CompactBufferAllocation
from tilelang.transform.convert_blocks_to_opaque import ConvertBlocksToOpaque
from tilelang.transform.flatten_buffer import FlattenBuffer
from tilelang.transform.inject_software_pipeline import InjectSoftwarePipeline
from tilelang.transform.instrument_bound_checkers import CONFIG as BOUNDS_CHECK_CONFIG
from tilelang.transform.instrument_bound_checkers import InstrumentBoundCheckers
from tilelang.transform.lower_init_block import LowerInitBlock
from tilelang.transform.lower_intrinsics import LowerIntrinsics
from tilelang.transform.lower_match_buffer import LowerMatchBuffer
from tilelang.transform.lower_opaque_block import LowerOpaqueBlock
from tilelang.transform.pass_infra import PassContext, Sequential
from tilelang.transform.plan_buffer_allocation import PlanAndUpdateBufferAllocationLocation
from tilelang.transform.remove_no_op import RemoveNoOp
from tilelang.transform.simplify import Simplify
from tilelang.transform.unroll_loop import UnrollLoop
from tilelang.transform.verify_bounds import VerifyBufferBounds
from tilelang.transform.verify_well_formed import VerifyWellFormed


def phases() -> list[list]:
    """The built-in passes, phase by phase (fresh pass objects on each call)."""
    return [
        # phase 0: check the input
        [VerifyWellFormed(), VerifyBufferBounds()],
        # phase 1: blocks become loops, ifs and allocations
        [
            LowerInitBlock(),
            # planned while blocks still have iterators (TVM's order): a reduction's
            # buffer must stay above the loops driving the reduction
            PlanAndUpdateBufferAllocationLocation(),
            ConvertBlocksToOpaque(),
            CompactBufferAllocation(),
            LowerMatchBuffer(),
            InjectSoftwarePipeline(),  # software_pipeline_stage/order loops
            LowerOpaqueBlock(),
        ],
        # phase 2: flat memory; formula-defined intrinsics as arithmetic
        [FlattenBuffer(), LowerIntrinsics(), Simplify()],
        # phase 3: loop transformations, clean-up, calling convention
        [UnrollLoop(), Simplify(), RemoveNoOp(), BindArguments()],
    ]


def lower_passes(ctx: PassContext | None = None, bounds_check: bool | None = None) -> list:
    """The passes :func:`lower` runs, with the context's ``tir.add_lower_pass``
    entries placed after their phases. With ``bounds_check`` (by default the context's
    ``tir.instrument_bound_checkers``), InstrumentBoundCheckers ends phase 1."""
    ctx = ctx or PassContext.current()
    if bounds_check is None:
        bounds_check = bool(ctx.config.get(BOUNDS_CHECK_CONFIG, False))
    extra = ctx.config.get("tir.add_lower_pass", ())
    for phase, _ in extra:
        if phase not in (0, 1, 2, 3):
            raise ValueError(f"tir.add_lower_pass: phase must be 0, 1, 2 or 3, not {phase!r}")
    passes = []
    for number, builtin in enumerate(phases()):
        passes += builtin
        if number == 1 and bounds_check:
            passes.append(InstrumentBoundCheckers())
        passes += [p for phase, p in extra if phase == number]
    return passes


def lower(mod_or_func, name: str = "main", bounds_check: bool | None = None) -> IRModule:
    """The lowered IRModule of a module or a single PrimFunc (stored under its
    ``global_symbol``, else ``name``), under the current :class:`PassContext`.
    ``bounds_check=True`` inserts a run-time check before every access not shown to
    be inside its buffer (default: the context's ``tir.instrument_bound_checkers``)."""
    if isinstance(mod_or_func, PrimFunc):
        mod = IRModule({mod_or_func.attrs.get("global_symbol", name): mod_or_func})
    elif isinstance(mod_or_func, IRModule):
        mod = mod_or_func
    else:
        raise TypeError(
            f"lower() takes an IRModule or a PrimFunc, not {type(mod_or_func).__name__}"
        )
    return Sequential(lower_passes(bounds_check=bounds_check), opt_level=0, name="tir.lower")(mod)

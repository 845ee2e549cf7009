"""TensorIR schedules: :class:`Schedule` with its primitives, handles and trace.

The package has two layers, and the module names say which a file belongs to:

- ``schedule.py`` is the core of :class:`Schedule` (construction, state, handle
  resolution, navigation with ``get_block``/``get_loops``/..., and ``_apply``, the
  one "commit, hand out handles, record" step every primitive ends with).
- ``api_*.py`` hold the public primitives, one mixin class per family, which
  ``Schedule`` inherits: ``api_loops`` (split, fuse, reorder), ``api_annotation``
  (parallel, vectorize, unroll, bind, annotate, unannotate), ``api_placement``
  (compute_at, reverse_compute_at, compute_inline, reverse_compute_inline),
  ``api_cache`` (cache_read, cache_write, set_scope), ``api_reduction``
  (decompose_reduction, rfactor, blockize), ``api_sampling`` (sample_perfect_tile,
  sample_categorical), ``api_reindex`` (reindex_cache_read, reindex_cache_write),
  ``api_state`` (state, get_sref, work_on, enter_postproc, get_output_blocks,
  sample_compute_location). Each method is a thin wrapper around its rewrite and
  carries the long, tested docstring example that docs/schedule.md is generated from.
- The rewrite modules (``loop_transformation``, ``block_placement``, ``inline``, ``cache``,
  ``reindex_cache``, ``reduction``, ``rfactor``, ``blockize``, ``sampling``,
  ``navigation``) take a PrimFunc and resolved targets (names, loop variables),
  validate, and return the new PrimFunc; they know nothing of handles or traces.
- TVM's schedule API around them: ``instruction`` (InstructionKind, Instruction) and
  ``trace`` (Trace: decisions, simplification, Python and JSON forms);
  ``schedule_state`` (ScheduleState, StmtSRef, replace), ``block_scope`` (block
  dependencies) and ``block_info`` (the cached affine/region-cover/stage-pipeline
  flags); ``index_map`` (IndexMap).

The wrappers sit in their own ``api_`` modules rather than next to their rewrites
because the docstring examples are as long as many rewrites (putting them together
would push ``loop_transformation`` and ``block_placement`` far past the size
guideline), and because the prefix keeps the public surface together in a listing.
"""

from tilelang.schedule.block_info import CachedFlags
from tilelang.schedule.block_scope import BlockScope, Dependency, DepKind
from tilelang.schedule.errors import UnknownFunctionError, UnknownHandleError
from tilelang.schedule.instruction import Instruction, InstructionKind
from tilelang.schedule.schedule import Schedule
from tilelang.schedule.schedule_state import ScheduleState, StmtSRef
from tilelang.schedule.state import BlockRV, ExprRV, LoopRV, SBlockRV
from tilelang.schedule.trace import Trace

__all__ = [
    "Schedule",
    "BlockRV",
    "SBlockRV",
    "LoopRV",
    "ExprRV",
    "Instruction",
    "InstructionKind",
    "Trace",
    "ScheduleState",
    "StmtSRef",
    "BlockScope",
    "Dependency",
    "DepKind",
    "CachedFlags",
    "UnknownHandleError",
    "UnknownFunctionError",
]

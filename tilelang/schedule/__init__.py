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
  sample_categorical). Each method is a thin wrapper around its rewrite and carries
  the long, tested docstring example that docs/schedule.md is generated from.
- The rewrite modules (``loop_transformation``, ``block_placement``, ``inline``, ``cache``,
  ``reduction``, ``rfactor``, ``blockize``, ``sampling``, ``navigation``) take a
  PrimFunc and resolved targets (names, loop variables), validate, and return the
  new PrimFunc; they know nothing of handles or traces.

The wrappers sit in their own ``api_`` modules rather than next to their rewrites
because the docstring examples are as long as many rewrites (putting them together
would push ``loop_transformation`` and ``block_placement`` far past the size
guideline), and because the prefix keeps the public surface together in a listing.
"""

from tilelang.schedule.schedule import Schedule
from tilelang.schedule.state import BlockRV, ExprRV, LoopRV
from tilelang.schedule.trace import Instruction, Trace

__all__ = ["Schedule", "BlockRV", "LoopRV", "ExprRV", "Instruction", "Trace"]

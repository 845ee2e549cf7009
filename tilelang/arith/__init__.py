"""Integer arithmetic: constant bounds, canonical linear forms and the simplifier.

The :class:`Analyzer` (TVM's ``arith.Analyzer``) knows inclusive constant bounds of
variables (loop variables while a pass walks inside their loops) and uses them to
simplify: ``(i_0 * 4 + i_1) // 4`` is ``i_0`` when ``0 <= i_1 < 4``, and ``k < 128``
is ``True`` inside ``for k in range(128)``. The lowering pipeline, the schedule and
the C printer share it.
"""

from tilelang.arith.analyzer import Analyzer, const_value, simplify
from tilelang.arith.bound import ConstBound, const_bound
from tilelang.arith.int_set import const_difference, eval_interval, fold_max, fold_min, range_extent
from tilelang.arith.iter_map import detect_iter_map, iter_map_simplify
from tilelang.arith.linear import LinearForm, linear_form

__all__ = [
    "Analyzer", "simplify", "const_value", "ConstBound", "const_bound", "LinearForm",
    "linear_form", "eval_interval", "const_difference", "fold_min", "fold_max", "range_extent",
    "detect_iter_map", "iter_map_simplify",
]  # fmt: skip

"""Where the rules take their decisions from.

:func:`.apply.schedule_function` asks a planner four questions while it schedules a
function: the register-tiling plan of a reduction (:mod:`.tiling`), the plan of a
block scheduled on its own (:mod:`.alone`), the loop a row's producers are computed at
and whether their reductions become vector partial results (:mod:`.fusion`), and where
a producer that stays a block of its own is computed. :class:`RulesPlanner` answers
with the rules' fixed choices; the tuner's rules space
(:mod:`tilelang.tune.space_rules`) answers with sampling primitives, so the same
driver builds both the default schedule and every candidate.
"""

from __future__ import annotations

from tilelang.schedule.rules.alone import plan_alone
from tilelang.schedule.rules.tiling import plan_tiling


class RulesPlanner:
    """The default rules' decisions: nothing is drawn."""

    def tiling(self, sch, info, machine):
        """The :class:`~.tiling.TilePlan` for reduction ``info``, or None (not tiled)."""
        return plan_tiling(info, machine)

    def alone(self, sch, info, machine):
        """The :class:`~.alone.AlonePlan` for a block no other plan took."""
        return plan_alone(info, machine)

    def row_fusion(self, sch, anchor, depth: int) -> tuple[int, tuple]:
        """The anchor's loop the row's producers are computed at (the rules: the
        deepest loop its reads of their results move along, ``depth``) and the row
        fusions to try in order: with the reductions split into vector partial results
        (True), then without (False)."""
        return depth, (True, False)

    def location(self, sch, func_name: str, info):
        """Where to compute producer ``info`` before it is scheduled alone: a loop
        handle for ``compute_at`` (or a mark from ``sample_compute_location``), or None
        to leave it at the root. The rules leave it (their fusions choose their own
        locations)."""
        return None


__all__ = ["RulesPlanner"]

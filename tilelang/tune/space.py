"""Search spaces: how a candidate schedule is drawn, and how one is mutated.

A *space* is a Python function ``space(sch) -> sch`` that applies schedule primitives
and draws its choices with ``sch.sample_perfect_tile`` / ``sch.sample_categorical``
(SEED §3's ``stochastic_schedule_mm``), or a name (see :func:`resolve_space`):
``"auto"`` starts from the default rules on CPUs (:mod:`tilelang.tune.space_rules`)
and is :mod:`tilelang.tune.space_cuda` for cuda.

Drawing runs the space on a :class:`DecisionSchedule`, a Schedule whose sampling
primitives take *forced decisions* by position (the k-th sampling call takes the k-th
forced decision, when it is still valid). A random candidate forces nothing; a
mutation forces the parent's decisions except one, which is drawn again. Running the
space again (rather than replaying the parent's trace) keeps spaces whose structure
depends on a decision correct.
"""

from __future__ import annotations

import random

from tilelang.errors import ArgumentError, ScheduleError
from tilelang.schedule import Schedule


class DecisionSchedule(Schedule):
    """A Schedule whose k-th sampling call uses ``forced[k]`` when it is not None;
    calls past the end of ``forced`` use ``rest`` (None: draw)."""

    def __init__(self, mod, seed: int, forced=(), rest=None):
        super().__init__(mod, seed=seed)
        self._forced = list(forced)
        self._rest = rest
        self._draws = 0

    def _next_forced(self):
        index, self._draws = self._draws, self._draws + 1
        return self._forced[index] if index < len(self._forced) else self._rest

    def copy(self) -> DecisionSchedule:
        """A copy that goes on taking the forced decisions where this one is (spaces
        built on the default rules try each plan on a copy)."""
        other = super().copy()
        other.__class__ = DecisionSchedule
        other._forced, other._rest, other._draws = self._forced, self._rest, self._draws
        return other

    def sample_perfect_tile(self, loop, n, max_innermost_factor=16, decision=None):
        forced = self._next_forced() if decision is None else decision
        if forced is not None:
            try:
                return super().sample_perfect_tile(loop, n, max_innermost_factor, forced)
            except ScheduleError:
                pass  # the forced decision does not fit this loop: draw afresh
        return super().sample_perfect_tile(loop, n, max_innermost_factor)

    def sample_compute_location(self, block, decision=None):
        """As Schedule's, the location forced when there is one. A draw past the
        forced list takes ``rest`` as every draw does, except that a ``rest`` of 0
        ("every draw's first candidate") leaves the block at the root (-1): where a
        schedule that issues nothing leaves it, the rules' choice."""
        beyond = self._draws >= len(self._forced)
        forced = self._next_forced() if decision is None else decision
        if decision is None and beyond and forced is not None:
            forced = -1
        if forced is not None:
            try:
                return super().sample_compute_location(block, forced)
            except ScheduleError:
                pass  # a forced decision of another kind (a tiling): draw afresh
        return super().sample_compute_location(block)

    def sample_categorical(self, candidates, probs, decision=None):
        forced = self._next_forced() if decision is None else decision
        if forced is not None:
            try:
                return super().sample_categorical(candidates, probs, forced)
            except ScheduleError:
                pass
        return super().sample_categorical(candidates, probs)


def stochastic_schedule_mm(sch):
    """SEED §3's search space, verbatim: a sampled two-way split of the ``j`` loop of the
    matmul block ``"C"`` of ``"main"`` (:func:`tilelang.testing.workloads.matmul`),
    ``k`` moved between the two halves, the reduction's init decomposed. The example
    of what a space looks like; ``samples/random_search.py`` searches it by hand."""
    block_C = sch.get_block("C", "main")
    i, j, k = sch.get_loops(block=block_C)
    j_factors = sch.sample_perfect_tile(loop=j, n=2)
    j_0, j_1 = sch.split(loop=j, factors=j_factors)
    sch.reorder(i, j_0, k, j_1)
    sch.decompose_reduction(block_C, k)
    return sch


def resolve_space(space, target=None):
    """The space function for ``space``: a callable; ``"auto"`` (for cuda
    :mod:`~tilelang.tune.space_cuda`, else the default rules or the generic CPU space,
    :class:`~tilelang.tune.space_rules.RulesOrGenericSpace`); ``"rules"`` (the default
    rules with sampled sizes); ``"generic"`` (:mod:`~tilelang.tune.space_cpu`)."""
    if (space == "auto" or space is None) and target is not None:
        from tilelang.target import as_target

        if as_target(target).kind == "cuda":
            from tilelang.tune.space_cuda import cuda_space

            return cuda_space(as_target(target))
    if space in ("auto", "rules") or space is None:
        from tilelang.tune.space_rules import RulesOrGenericSpace, RulesSpace

        return RulesSpace() if space == "rules" else RulesOrGenericSpace()
    if space == "generic":
        from tilelang.tune.space_cpu import generic_space

        return generic_space
    if callable(space):
        return space
    raise ArgumentError(
        f"space must be a function sch -> sch, 'auto', 'rules' or 'generic', not {space!r}"
    )


def decisions_of(trace) -> list:
    """The decisions of a trace's sampling instructions, in order."""
    return [trace.get_decision(inst) for inst in trace.insts if inst.kind.has_decision]


def apply_space(mod, space, seed: int, forced=(), rest=None) -> Schedule:
    """``space`` run on a fresh :class:`DecisionSchedule` of ``mod`` (``forced`` and
    ``rest`` as there: ``rest=0`` takes every draw's first candidate).

    The space may return the schedule, None (it changed ``sch`` in place) or another
    Schedule (whose module and trace are then the candidate). Raises ScheduleError when
    the drawn choices cannot be applied.
    """
    sch = DecisionSchedule(mod, seed, forced, rest)
    result = space(sch)
    if result is None:
        result = sch
    if not isinstance(result, Schedule):
        raise ArgumentError(
            f"a search space must return a Schedule (or None), not {type(result).__name__}"
        )
    return result


def mutate(mod, space, parent_trace, rng: random.Random) -> Schedule | None:
    """A child of ``parent_trace``: one of its decisions drawn again, the rest kept.
    None when the parent has no decision to change."""
    decisions = decisions_of(parent_trace)
    if not decisions:
        return None
    forced = list(decisions)
    forced[rng.randrange(len(forced))] = None
    return apply_space(mod, space, rng.randrange(1, 2**31), forced)

"""``ms.space_generator``: what a tuning run searches.

- ``ScheduleFn(f)``: the space a function ``f(sch)`` describes with the sampling
  primitives (``sch.sample_perfect_tile``...); it may return the schedule or None.
- ``PostOrderApply()``: the generic space (multi-level tiling, vectorisation,
  parallelisation, unrolling) of :mod:`tilelang.tune.space_cpu`; the default, as in TVM.

Either is passed as ``space=`` to :func:`tilelang.meta_schedule.tune_tir`.
"""

from __future__ import annotations

from tilelang.errors import ArgumentError


class ScheduleFn:
    """A search space given by a schedule function ``sch_fn(sch)``."""

    def __init__(self, sch_fn):
        if not callable(sch_fn):
            raise ArgumentError(f"ScheduleFn takes a function sch -> sch, not {sch_fn!r}")
        self.sch_fn = sch_fn

    def __call__(self, sch):
        result = self.sch_fn(sch)
        if isinstance(result, (list, tuple)):
            if len(result) != 1:
                raise ArgumentError(
                    "a ScheduleFn returning several schedules is not supported; return one"
                )
            result = result[0]
        return result

    def __repr__(self) -> str:
        return f"ScheduleFn({getattr(self.sch_fn, '__name__', self.sch_fn)!r})"


class PostOrderApply:
    """The generic space of :mod:`tilelang.tune.space_cpu` (TVM's default space)."""

    def __call__(self, sch):
        from tilelang.tune.space_cpu import generic_space

        return generic_space(sch)

    def __repr__(self) -> str:
        return "PostOrderApply()"


def as_space(space):
    """The tuner's space for MetaSchedule's ``space=`` argument."""
    if space is None or space == "post-order-apply" or isinstance(space, PostOrderApply):
        return "auto"
    if isinstance(space, ScheduleFn) or callable(space):
        return space
    raise ArgumentError(
        f"space must be ms.space_generator.ScheduleFn(f), PostOrderApply() or "
        f"'post-order-apply', not {space!r}"
    )


__all__ = ["ScheduleFn", "PostOrderApply", "as_space"]

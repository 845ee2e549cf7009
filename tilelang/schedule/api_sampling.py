"""Sampling primitives of :class:`~tilelang.schedule.Schedule`: sample_perfect_tile,
sample_categorical. Their draws are recorded in the trace with the decision, so a
trace replays them (:data:`.trace.SAMPLING`); the draws are in :mod:`.sampling`."""

from __future__ import annotations

from tilelang.arith import const_value
from tilelang.schedule import sampling
from tilelang.schedule.common import find_loop
from tilelang.schedule.state import ExprRV, Tree


class SamplingPrimitives:
    """sample_perfect_tile, sample_categorical (a mixin of
    :class:`~tilelang.schedule.Schedule`, which provides the handle resolution and
    the random state)."""

    def sample_perfect_tile(self, loop, n: int, max_innermost_factor: int = 16, decision=None):
        """Draws ``n`` factors whose product is the loop's extent, the innermost at most
        ``max_innermost_factor``, uniformly among all such tilings.

        The draw is recorded in the trace; pass the handles to :meth:`split`.

        Parameters
        ----------
        loop : LoopRV
            The loop. One of symbolic extent is tiled trivially, as TVM does: the
            first factor is None (inferred by ``split``), the others 1.
        n : int
            The number of factors.
        max_innermost_factor : int
            The largest innermost factor (0 or less: no limit).
        decision : list of int or None
            The factors to use instead of drawing (how a trace replays).

        Returns
        -------
        list of ExprRV
            The factors, outermost first (the first None for a symbolic extent).

        Raises
        ------
        ScheduleError
            When ``n`` is not a positive int, no tiling
            satisfies the limit, or the decision is not ``n`` positive factors of the
            extent.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i in range(8):
                    with T.block("B"):
                        vi = T.axis.remap("S", [i])
                        T.reads(A[vi])
                        T.writes(B[vi])
                        B[vi] = A[vi] * T.float32(2)

        Schedule::

            sch = tilelang.Schedule(before)
            (i,) = sch.get_loops("B")
            # decision= fixes the draw, as a replayed trace does
            factors = sch.sample_perfect_tile(i, n=2, decision=[2, 4])
            i_0, i_1 = sch.split(i, factors)

        After::

            @T.prim_func
            def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i_0, i_1 in T.grid(2, 4):
                    with T.block("B"):
                        vi = T.axis.spatial(8, i_0 * 4 + i_1)
                        T.reads(A[vi])
                        T.writes(B[vi])
                        B[vi] = A[vi] * T.float32(2)
        """
        func_name, var = self._loop(loop, "sample_perfect_tile")
        extent = const_value(
            find_loop(Tree(self._mod[func_name]), var, "sample_perfect_tile").extent
        )
        if extent is None:  # as TVM: a symbolic loop is tiled trivially, the outer part inferred
            decision = sampling.symbolic_tiling(n)
        else:
            decision = sampling.sample_perfect_tile(
                self._rng, extent, n, max_innermost_factor, decision
            )
        rvs = self._new_handles(ExprRV, [d for d in decision if d != -1])
        if decision[0] == -1:
            rvs.insert(0, None)
        self._record(
            "sample_perfect_tile",
            [("loop", loop), ("n", n), ("max_innermost_factor", max_innermost_factor)],
            rvs,
            list(decision),
        )
        return rvs

    def sample_categorical(self, candidates, probs, decision=None) -> ExprRV:
        """Draws one of ``candidates`` with probabilities ``probs``.

        The draw is recorded in the trace; the handle can be passed where a value is
        expected, e.g. as an annotation value.

        Parameters
        ----------
        candidates : list
            The values to choose from.
        probs : list of float
            One non-negative weight per candidate (normalized; not all zero).
        decision : int or None
            The index to use instead of drawing (how a trace replays).

        Returns
        -------
        ExprRV
            The chosen value.

        Raises
        ------
        ScheduleError
            When the lists differ in length or are empty, the weights are negative or
            all zero, or the decision is not an index of ``candidates``.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i in range(8):
                    with T.block("B"):
                        vi = T.axis.remap("S", [i])
                        T.reads(A[vi])
                        T.writes(B[vi])
                        B[vi] = A[vi] * T.float32(2)

        Schedule::

            sch = tilelang.Schedule(before)
            (i,) = sch.get_loops("B")
            # decision= fixes the draw (an index into the candidates), as a replayed trace does
            step = sch.sample_categorical([0, 16, 64], probs=[0.25, 0.5, 0.25], decision=1)
            sch.annotate(i, "pragma_auto_unroll_max_step", step)

        After::

            @T.prim_func
            def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i in T.serial(8, annotations={"pragma_auto_unroll_max_step": 16}):
                    with T.block("B"):
                        vi = T.axis.remap("S", [i])
                        T.reads(A[vi])
                        T.writes(B[vi])
                        B[vi] = A[vi] * T.float32(2)
        """
        index = sampling.sample_categorical(self._rng, candidates, probs, decision)
        (rv,) = self._new_handles(ExprRV, [candidates[index]])
        self._record(
            "sample_categorical",
            [("candidates", list(candidates)), ("probs", list(probs))],
            [rv],
            index,
        )
        return rv

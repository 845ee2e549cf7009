"""Loop primitives of :class:`~tilelang.schedule.Schedule` that restructure a loop
nest: split, fuse, reorder. The rewrites are in :mod:`.loop_transformation`."""

from __future__ import annotations

from tilelang.schedule import loop_transformation
from tilelang.schedule.state import LoopRV


class LoopPrimitives:
    """split, fuse, reorder (a mixin of :class:`~tilelang.schedule.Schedule`, which
    provides the handle resolution and ``_apply``)."""

    def split(self, loop, factors, preserve_unit_iters=True, disable_predication=False):
        """Splits ``loop`` into nested loops whose extents are ``factors``, outermost first.

        Blocks under the loop bind its variable to ``i_0 * f_1 + i_1`` (and so on for
        more factors). When the factors do not divide the extent, those blocks get the
        predicate ``T.where(i_0 * f_1 + i_1 < extent)``.

        Parameters
        ----------
        loop : LoopRV
            The loop to split; it must start at 0 and have unit step.
        factors : list of int, ExprRV or None
            The new extents; at most one may be None (inferred from the others).
            ``ExprRV`` factors come from :meth:`sample_perfect_tile`.
        preserve_unit_iters : bool
            Whether a factor of 1 keeps its loop variable in the bindings (else 0).
        disable_predication : bool
            Whether to leave out the ``T.where`` guard of an imperfect split.

        Returns
        -------
        list of LoopRV
            The new loops, outermost first, named ``<loop>_0``, ``<loop>_1``, ...

        Raises
        ------
        ScheduleError
            When the loop starts elsewhere than 0 or is strided, is not serial (bound,
            parallel, vectorized or unrolled) or has annotations, fewer than two
            factors or more than one None are given, a factor is not a positive
            integer (``T.int64(10)`` and NumPy integers are), or the factors multiply
            to less than the extent.

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
            i_0, i_1 = sch.split(i, factors=[None, 4])

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
        func_name, var = self._loop(loop, "split")
        func, new_vars = loop_transformation.split(
            self._mod[func_name],
            var,
            self._value(list(factors), "split"),
            preserve_unit_iters,
            disable_predication,
        )
        args = [
            ("loop", loop),
            ("factors", list(factors)),
            ("preserve_unit_iters", preserve_unit_iters),
            ("disable_predication", disable_predication),
        ]
        return self._apply("split", args, func_name, func, loops=new_vars)

    def fuse(self, *loops, preserve_unit_iters=True) -> LoopRV:
        """Fuses consecutive, perfectly nested loops into one loop named ``i_j_fused``.

        Blocks under the loops bind each old loop variable to a ``//`` and ``%`` of the
        fused one; the fused extent is the product of the extents.

        The blocks bind each fused loop's slice in TVM's normal form
        (:mod:`tilelang.arith.iter_map`): ``f // 16384``, ``f % 16384 // 128``,
        ``f % 128``; a symbolic fused extent reads ``n * 16384``.

        Parameters
        ----------
        *loops : LoopRV
            At least two loops, outermost first, each the only statement of the one
            before it.
        preserve_unit_iters : bool
            Whether unit-extent loops keep their variable in the bindings (else 0).

        Returns
        -------
        LoopRV
            The fused loop.

        Raises
        ------
        ScheduleError
            When fewer than two loops or a loop twice are given, the loops are not
            consecutive and perfectly nested, a loop starts elsewhere than 0 or is
            strided, is not serial or has annotations, or an extent depends on another
            fused loop.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i, j in T.grid(4, 8):
                    with T.block("B"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        T.reads(A[vi, vj])
                        T.writes(B[vi, vj])
                        B[vi, vj] = A[vi, vj] * T.float32(2)

        Schedule::

            sch = tilelang.Schedule(before)
            i, j = sch.get_loops("B")
            i_j_fused = sch.fuse(i, j)

        After::

            @T.prim_func
            def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i_j_fused in range(32):
                    with T.block("B"):
                        vi = T.axis.spatial(4, i_j_fused // 8)
                        vj = T.axis.spatial(8, i_j_fused % 8)
                        T.reads(A[vi, vj])
                        T.writes(B[vi, vj])
                        B[vi, vj] = A[vi, vj] * T.float32(2)
        """
        targets = [self._loop(rv, "fuse") for rv in loops]
        func_name = targets[0][0] if targets else self._function_name(None)
        variables = [var for _, var in targets]
        func, fused = loop_transformation.fuse(self._mod[func_name], variables, preserve_unit_iters)
        args = [(None, x) for x in loops] + [("preserve_unit_iters", preserve_unit_iters)]
        (rv,) = self._apply("fuse", args, func_name, func, loops=[fused])
        return rv

    def reorder(self, *ordered_loops) -> None:
        """Reorders loops of one perfectly nested chain into the given order.

        The named loops take the places the chain had for them, in the order given;
        loops of the chain that are not named keep their places.

        Parameters
        ----------
        *ordered_loops : LoopRV
            The loops in their new order, outermost first.

        Returns
        -------
        None

        Raises
        ------
        ScheduleError
            When a loop is given twice, the loops are not nested in one another or the
            chain between them is not perfectly nested, a loop's range depends on a
            loop that would move inside it, or a block under the loops has an
            iterator that is neither spatial nor reduction, or bindings (with its
            predicate) that are not an affine iterator map of the loops from the
            outermost reordered one down (:func:`tilelang.arith.detect_iter_map`).

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i, j in T.grid(4, 8):
                    with T.block("B"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        T.reads(A[vi, vj])
                        T.writes(B[vi, vj])
                        B[vi, vj] = A[vi, vj] * T.float32(2)

        Schedule::

            sch = tilelang.Schedule(before)
            i, j = sch.get_loops("B")
            sch.reorder(j, i)

        After::

            @T.prim_func
            def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
                T.func_attr({"global_symbol": "main"})
                for j, i in T.grid(8, 4):
                    with T.block("B"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        T.reads(A[vi, vj])
                        T.writes(B[vi, vj])
                        B[vi, vj] = A[vi, vj] * T.float32(2)
        """
        targets = [self._loop(rv, "reorder") for rv in ordered_loops]
        if not targets:
            return
        func_name = targets[0][0]
        func = loop_transformation.reorder(self._mod[func_name], [var for _, var in targets])
        self._apply("reorder", [(None, x) for x in ordered_loops], func_name, func)

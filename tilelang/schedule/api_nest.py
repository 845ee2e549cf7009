"""Primitives of :class:`~tilelang.schedule.Schedule` that restructure whole loop
nests: merge (rewrite in :mod:`.merge`), loop_partition (:mod:`.loop_partition`),
add_unit_loop (:mod:`.unit_loop`), and the trace marker enter_postproc."""

from __future__ import annotations

from tilelang.schedule import loop_partition as partition_mod
from tilelang.schedule import merge as merge_mod
from tilelang.schedule import unit_loop
from tilelang.schedule.errors import schedule_error
from tilelang.schedule.state import LoopRV


class NestPrimitives:
    """merge, loop_partition, add_unit_loop, enter_postproc (a mixin of
    :class:`~tilelang.schedule.Schedule`)."""

    def merge(self, *loops) -> LoopRV:
        """Merges loop nests of the same shape that sit side by side in one scope into
        one nest whose body runs each original body in turn (the nest stands where the
        last one stood).

        Each loop is taken with the loops above it up to the loops' lowest common
        ancestor; those chains must have the same depth and extents.

        Parameters
        ----------
        *loops : LoopRV
            Two or more loops, one per nest.

        Returns
        -------
        LoopRV
            The merged loop standing for the given loops.

        Raises
        ------
        ScheduleError
            When the chains differ in depth or extents, are under different block
            scopes, a loop of a chain is not the only child of the one above, does
            not start at 0, has a kind, annotation or thread binding, or the nests
            depend on each other or on statements the earlier ones would move past.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32"), C: T.Buffer((4, 4), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i, j in T.grid(4, 8):
                    with T.block("B"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        T.reads(A[vi, vj])
                        T.writes(B[vi, vj])
                        B[vi, vj] = A[vi, vj] * T.float32(2)
                for i, j in T.grid(4, 4):
                    with T.block("C"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        T.reads(A[vi, vj])
                        T.writes(C[vi, vj])
                        C[vi, vj] = A[vi, vj] + T.float32(1)

        Schedule::

            sch = tilelang.Schedule(before)
            i_b = sch.get_loops("B")[0]
            i_c = sch.get_loops("C")[0]
            i = sch.merge(i_b, i_c)

        After::

            @T.prim_func
            def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32"), C: T.Buffer((4, 4), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i_m in range(4):
                    for j in range(8):
                        with T.block("B"):
                            vi, vj = T.axis.remap("SS", [i_m, j])
                            T.reads(A[vi, vj])
                            T.writes(B[vi, vj])
                            B[vi, vj] = A[vi, vj] * T.float32(2)
                    for j in range(4):
                        with T.block("C"):
                            vi, vj = T.axis.remap("SS", [i_m, j])
                            T.reads(A[vi, vj])
                            T.writes(C[vi, vj])
                            C[vi, vj] = A[vi, vj] + T.float32(1)
        """
        resolved = [self._loop(lp, "merge") for lp in loops]
        if not resolved:
            raise schedule_error("merge", "()", "needs two or more loops")
        func_name = resolved[0][0]
        func, merged = merge_mod.merge(self._mod[func_name], [var for _, var in resolved])
        args = [(None, lp) for lp in loops]
        (rv,) = self._apply("merge", args, func_name, func, loops=[merged])
        return rv

    def loop_partition(self, loop, factors, preserve_unit_iters: bool = True) -> list[LoopRV]:
        """Cuts a loop into consecutive ranges of the given lengths, each a copy of the
        loop and its body (TVM's block structure: a ``<block>_<loop>_common`` block
        holding one ``<block>_<loop><k>_partition`` block per range).

        In each copy the blocks are renamed ``<name>_<loop><k>``, the iterator bound to
        the loop gets the range as its domain, and regions indexed by plain iterators
        become the product of their domains. One factor may be None (what is left);
        when the factors do not reach the extent, the rest is one more range.

        Parameters
        ----------
        loop : LoopRV
            A loop from 0 with a constant extent, without annotations or thread binding.
        factors : list of int or None
            The lengths of the ranges (positive; at most one None).
        preserve_unit_iters : bool
            Accepted for TVM's signature; it does not change the result.

        Returns
        -------
        list of LoopRV
            The loop of each range.

        Raises
        ------
        ScheduleError
            When the loop has a symbolic or nonzero start or extent, annotations or a
            thread binding, a factor is not a positive constant, more than one is
            None, or the factors reach the extent.

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
            parts = sch.loop_partition(i, [3, None])

        After::

            @T.prim_func
            def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
                T.func_attr({"global_symbol": "main"})
                with T.block("root"):
                    T.reads()
                    T.writes()
                    with T.block("B_i_common"):
                        T.reads()
                        T.writes()
                        with T.block("B_i0_partition"):
                            T.reads()
                            T.writes()
                            for i0 in range(3):
                                with T.block("B_i0"):
                                    vi = T.axis.remap("S", [i0])
                                    T.reads(A[0:3])
                                    T.writes(B[0:3])
                                    B[vi] = A[vi] * T.float32(2)
                        with T.block("B_i1_partition"):
                            T.reads()
                            T.writes()
                            for i1 in range(3, 8):
                                with T.block("B_i1"):
                                    vi = T.axis.spatial((3, 8), i1)
                                    T.reads(A[3:8])
                                    T.writes(B[3:8])
                                    B[vi] = A[vi] * T.float32(2)
        """
        func_name, var = self._loop(loop, "loop_partition")
        factors = [self._value(f) for f in factors]
        func, variables = partition_mod.loop_partition(self._mod[func_name], var, factors)
        args = [("loop", loop), ("factors", factors), ("preserve_unit_iters", preserve_unit_iters)]
        return self._apply("loop_partition", args, func_name, func, loops=variables)

    def add_unit_loop(self, block_or_loop) -> LoopRV:
        """Adds a loop of extent 1 right above a block or a loop (e.g. to give a block
        outside any loop a loop to be computed at or to bind).

        Parameters
        ----------
        block_or_loop : BlockRV, LoopRV or str
            The block (a handle or its name) or the loop to put the new loop above.

        Returns
        -------
        LoopRV
            The new loop.

        Raises
        ------
        ScheduleError
            When the block is the root block.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((1,), "float32"), B: T.Buffer((1,), "float32")):
                T.func_attr({"global_symbol": "main"})
                with T.block("B"):
                    T.reads(A[0])
                    T.writes(B[0])
                    B[0] = A[0] + T.float32(1)

        Schedule::

            sch = tilelang.Schedule(before)
            u = sch.add_unit_loop("B")

        After::

            @T.prim_func
            def main(A: T.Buffer((1,), "float32"), B: T.Buffer((1,), "float32")):
                T.func_attr({"global_symbol": "main"})
                for u in range(1):
                    with T.block("B"):
                        T.reads(A[0])
                        T.writes(B[0])
                        B[0] = A[0] + T.float32(1)
        """
        if isinstance(block_or_loop, str):
            block_or_loop = self.get_block(block_or_loop)
        if isinstance(block_or_loop, LoopRV):
            func_name, target = self._loop(block_or_loop, "add_unit_loop")
        else:
            func_name, target = self._block(block_or_loop, "add_unit_loop")
        func, var = unit_loop.add_unit_loop(self._mod[func_name], target)
        args = [("block_or_loop", block_or_loop)]
        (rv,) = self._apply("add_unit_loop", args, func_name, func, loops=[var])
        return rv

    def enter_postproc(self) -> None:
        """Marks, in the trace, where scheduling ends and post-processing begins (as
        TVM's meta-schedule does). The program is unchanged, so this is a trace
        marker rather than a primitive (docs/gen_schedule_doc.py lists it as such)."""
        self._record("enter_postproc", [])

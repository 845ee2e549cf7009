"""Primitives of :class:`~tilelang.schedule.Schedule` that mark a loop or block
without restructuring it: the loop kinds (parallel, vectorize, unroll, bind; rewrite
in :mod:`.loop_transformation`) and annotations (annotate, unannotate; rewrite in
:mod:`.navigation`)."""

from __future__ import annotations

from tilelang.ir import stmt as S
from tilelang.schedule import loop_transformation, navigation


class AnnotationPrimitives:
    """parallel, vectorize, unroll, bind, annotate, unannotate (a mixin of
    :class:`~tilelang.schedule.Schedule`, which provides the handle resolution and
    ``_apply``)."""

    def _loop_kind(self, primitive, loop, kind, thread=None, extra=()):
        func_name, var = self._loop(loop, primitive)
        func = loop_transformation.set_loop_kind(self._mod[func_name], var, kind, primitive, thread)
        self._apply(primitive, [("loop", loop), *extra], func_name, func)

    def parallel(self, loop) -> None:
        """Makes ``loop`` a parallel loop (``T.parallel``): its iterations run on CPU threads.

        Parameters
        ----------
        loop : LoopRV
            A loop whose blocks bind it to spatial iterators only.

        Returns
        -------
        None

        Raises
        ------
        ScheduleError
            When the loop carries a reduction iterator of a block under it, is
            strided, or a block directly under it is neither *complete* (spatial
            iterators only, reading none of what it writes) nor a *reduction* (an
            init, quasi-affine bindings, writes at spatial indices): TVM's compact
            data flow.

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
            sch.parallel(i)

        After::

            @T.prim_func
            def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i in T.parallel(8):
                    with T.block("B"):
                        vi = T.axis.remap("S", [i])
                        T.reads(A[vi])
                        T.writes(B[vi])
                        B[vi] = A[vi] * T.float32(2)
        """
        self._loop_kind("parallel", loop, S.ForKind.PARALLEL)

    def vectorize(self, loop) -> None:
        """Makes ``loop`` a vectorized loop (``T.vectorized``): its iterations become vector
        lanes.

        Parameters
        ----------
        loop : LoopRV
            A loop with a constant extent whose blocks bind it to spatial iterators only.

        Returns
        -------
        None

        Raises
        ------
        ScheduleError
            When the loop carries a reduction iterator of a block under it, is strided,
            its extent is not a constant, or the blocks under it lack compact data
            flow (as :meth:`parallel`).

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
            sch.vectorize(i)

        After::

            @T.prim_func
            def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i in T.vectorized(8):
                    with T.block("B"):
                        vi = T.axis.remap("S", [i])
                        T.reads(A[vi])
                        T.writes(B[vi])
                        B[vi] = A[vi] * T.float32(2)
        """
        self._loop_kind("vectorize", loop, S.ForKind.VECTORIZED)

    def unroll(self, loop) -> None:
        """Makes ``loop`` an unrolled loop (``T.unroll``): the backend repeats its body once
        per iteration.

        Parameters
        ----------
        loop : LoopRV
            Any loop, reduction loops included.

        Returns
        -------
        None

        Raises
        ------
        ScheduleError
            When ``loop`` is not a loop handle of this schedule.

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
            sch.unroll(i)

        After::

            @T.prim_func
            def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i in T.unroll(8):
                    with T.block("B"):
                        vi = T.axis.remap("S", [i])
                        T.reads(A[vi])
                        T.writes(B[vi])
                        B[vi] = A[vi] * T.float32(2)
        """
        self._loop_kind("unroll", loop, S.ForKind.UNROLLED)

    def bind(self, loop, thread_axis: str) -> None:
        """Binds ``loop`` to a GPU thread axis (``T.thread_binding``).

        Parameters
        ----------
        loop : LoopRV
            A loop whose blocks bind it to spatial iterators only.
        thread_axis : str
            ``"blockIdx.x/y/z"``, ``"threadIdx.x/y/z"``, ``"vthread"`` or
            ``"vthread.x/y/z"``.

        Returns
        -------
        None

        Raises
        ------
        ScheduleError
            When the loop carries a reduction iterator or is strided, the blocks under
            it lack compact data flow (as :meth:`parallel`), the axis is unknown, or
            the axis would get two different extents in one kernel.

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
            sch.bind(i, "threadIdx.x")

        After::

            @T.prim_func
            def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i in T.thread_binding(8, thread="threadIdx.x"):
                    with T.block("B"):
                        vi = T.axis.remap("S", [i])
                        T.reads(A[vi])
                        T.writes(B[vi])
                        B[vi] = A[vi] * T.float32(2)
        """
        self._loop_kind(
            "bind", loop, S.ForKind.THREAD_BINDING, thread_axis, [("thread_axis", thread_axis)]
        )

    def annotate(self, block_or_loop, ann_key: str, ann_val) -> None:
        """Adds the annotation ``ann_key = ann_val`` to a block or loop.

        A loop's annotations print as ``T.serial(..., annotations={...})``, a block's as
        ``T.block_attr({...})``. An existing value under the same key is replaced.

        Parameters
        ----------
        block_or_loop : BlockRV, LoopRV or str
            The block (a handle or its name) or loop to annotate.
        ann_key : str
            The annotation key.
        ann_val : int, float, str, bool, list or ExprRV
            The value; an ``ExprRV`` is replaced by its sampled value.

        Returns
        -------
        None

        Raises
        ------
        ScheduleError
            When the key is not a string or the value is not a number, string or list.

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
            sch.annotate(i, "pragma_unroll_explicit", 1)
            sch.annotate("B", "meta_schedule.tiling_structure", "SSRSRS")

        After::

            @T.prim_func
            def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i in T.serial(8, annotations={"pragma_unroll_explicit": 1}):
                    with T.block("B"):
                        vi = T.axis.remap("S", [i])
                        T.reads(A[vi])
                        T.writes(B[vi])
                        T.block_attr({"meta_schedule.tiling_structure": "SSRSRS"})
                        B[vi] = A[vi] * T.float32(2)
        """
        func_name, target = self._block_or_loop(block_or_loop, "annotate")
        value = self._value(ann_val, "annotate")
        func = navigation.annotate(self._mod[func_name], target, ann_key, value)
        args = [("block_or_loop", block_or_loop), ("ann_key", ann_key), ("ann_val", ann_val)]
        self._apply("annotate", args, func_name, func)

    def unannotate(self, block_or_loop, ann_key: str) -> None:
        """Removes the annotation ``ann_key`` from a block or loop.

        Parameters
        ----------
        block_or_loop : BlockRV, LoopRV or str
            The block (a handle or its name) or loop.
        ann_key : str
            The key to remove.

        Returns
        -------
        None

        Raises
        ------
        ScheduleError
            When the block or loop has no annotation ``ann_key``.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i in T.serial(8, annotations={"pragma_unroll_explicit": 1}):
                    with T.block("B"):
                        vi = T.axis.remap("S", [i])
                        T.reads(A[vi])
                        T.writes(B[vi])
                        B[vi] = A[vi] * T.float32(2)

        Schedule::

            sch = tilelang.Schedule(before)
            (i,) = sch.get_loops("B")
            sch.unannotate(i, "pragma_unroll_explicit")

        After::

            @T.prim_func
            def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i in range(8):
                    with T.block("B"):
                        vi = T.axis.remap("S", [i])
                        T.reads(A[vi])
                        T.writes(B[vi])
                        B[vi] = A[vi] * T.float32(2)
        """
        func_name, target = self._block_or_loop(block_or_loop, "unannotate")
        func = navigation.unannotate(self._mod[func_name], target, ann_key)
        args = [("block_or_loop", block_or_loop), ("ann_key", ann_key)]
        self._apply("unannotate", args, func_name, func)

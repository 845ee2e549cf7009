"""Primitives of :class:`~tilelang.schedule.Schedule` that restructure a reduction
or a block's iteration: decompose_reduction (rewrite in :mod:`.reduction`),
merge_reduction (:mod:`.merge_reduction`), rfactor (:mod:`.rfactor`), blockize
(:mod:`.blockize`)."""

from __future__ import annotations

from tilelang.schedule import blockize, merge_reduction, reduction, rfactor
from tilelang.schedule.common import find_loop, loop_subject
from tilelang.schedule.errors import schedule_error
from tilelang.schedule.state import BlockRV, Tree


class ReductionPrimitives:
    """decompose_reduction, rfactor, blockize (a mixin of
    :class:`~tilelang.schedule.Schedule`, which provides the handle resolution and
    ``_apply``)."""

    def decompose_reduction(self, block, loop) -> BlockRV:
        """Moves the ``T.init()`` of a reduction block into its own block ``<name>_init``
        placed right before ``loop``; the block becomes ``<name>_update``.

        The init block gets copies (``<loop>_init``) of the loops between ``loop`` and
        the block that carry spatial iterators, the block's annotations, and the
        conditions of its predicate that do not involve the reduction loops it leaves
        out. The update block reads the buffers it accumulates into (listed first, as
        TVM does). Handles to the block now refer to ``<name>_update``.

        Parameters
        ----------
        block : BlockRV or str
            A reduction block (one with ``T.init()``).
        loop : LoopRV
            One of the block's loops; no loop above it may carry a reduction iterator.

        Returns
        -------
        BlockRV
            The init block.

        Raises
        ------
        ScheduleError
            When the block has no init, the loop is not above it, a loop outside it
            carries a reduction iterator, a condition of the block's predicate
            mixes a reduction loop with the init's loops, or the loops from ``loop``
            down run a block instance more than once (a compute_at that recomputes
            overlapping elements, a loop the bindings do not use): the init, run once
            before them, would let an element accumulate twice.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4,), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i, k in T.grid(4, 8):
                    with T.block("B"):
                        vi, vk = T.axis.remap("SR", [i, k])
                        T.reads(A[vi, vk])
                        T.writes(B[vi])
                        with T.init():
                            B[vi] = T.float32(0)
                        B[vi] = B[vi] + A[vi, vk]

        Schedule::

            sch = tilelang.Schedule(before)
            i, k = sch.get_loops("B")
            B_init = sch.decompose_reduction(sch.get_block("B"), k)

        After::

            @T.prim_func
            def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4,), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i in range(4):
                    with T.block("B_init"):
                        vi = T.axis.remap("S", [i])
                        T.reads()
                        T.writes(B[vi])
                        B[vi] = T.float32(0)
                    for k in range(8):
                        with T.block("B_update"):
                            vi, vk = T.axis.remap("SR", [i, k])
                            T.reads(B[vi], A[vi, vk])
                            T.writes(B[vi])
                            B[vi] = B[vi] + A[vi, vk]
        """
        block, func_name, name = self._block_target(block, "decompose_reduction")
        _, var = self._loop(loop, "decompose_reduction")
        func, init_name, update_name = reduction.decompose_reduction(
            self._mod[func_name], name, var
        )
        (rv,) = self._apply(
            "decompose_reduction",
            [("block", block), ("loop", loop)],
            func_name,
            func,
            blocks=[init_name],
            renames={name: update_name},
        )
        return rv

    def merge_reduction(self, init, update) -> None:
        """Folds the init block ``init`` into the update block right after it as its
        ``T.init()`` (the inverse of :meth:`decompose_reduction`; a tilelang primitive,
        not one of TVM's). The update becomes a reduction block again, so its loops can
        be bound, parallelized or tiled (SEED §8 writes a matmul as two such blocks);
        ``init`` is removed and its handle is no longer valid.

        Parameters
        ----------
        init : BlockRV or str
            A block of spatial iterators storing one value, right before the loop nest
            of ``update`` in the same sequence, or alone in a nest of its own right
            before it whose loops are the update's outer loops.
        update : BlockRV or str
            A block with reduction iterators and no ``T.init()``, accumulating into the
            element ``init`` writes.

        Returns
        -------
        None
            The update block's handle stays valid.

        Raises
        ------
        ScheduleError
            When the merge could change the result: something runs between the blocks,
            the init writes another element or reads the accumulator, an init in a nest
            of its own covers other loops or the update reads another element of the
            accumulator, a block has a predicate, or a loop of the update's nest does
            not move its reduction
            iterators from their minimum (the conditions of
            :mod:`tilelang.schedule.merge_reduction`).

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4,), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i in range(4):
                    with T.block("init"):
                        vi = T.axis.remap("S", [i])
                        T.reads()
                        T.writes(B[vi])
                        B[vi] = T.float32(0)
                    for k in range(8):
                        with T.block("update"):
                            vi, vk = T.axis.remap("SR", [i, k])
                            T.reads(B[vi], A[vi, vk])
                            T.writes(B[vi])
                            B[vi] = B[vi] + A[vi, vk]

        Schedule::

            sch = tilelang.Schedule(before)
            sch.merge_reduction(sch.get_block("init"), sch.get_block("update"))

        After::

            @T.prim_func
            def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4,), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i, k in T.grid(4, 8):
                    with T.block("update"):
                        vi, vk = T.axis.remap("SR", [i, k])
                        T.reads(B[vi], A[vi, vk])
                        T.writes(B[vi])
                        with T.init():
                            B[vi] = T.float32(0)
                        B[vi] = B[vi] + A[vi, vk]
        """
        init, func_name, init_name = self._block_target(init, "merge_reduction")
        update, update_func, update_name = self._block_target(update, "merge_reduction")
        if update_func != func_name:
            from tilelang.schedule.errors import schedule_error

            raise schedule_error(
                "merge_reduction", repr(update_name), "the blocks are in different functions"
            )
        func = merge_reduction.merge_reduction(self._mod[func_name], init_name, update_name)
        self._apply("merge_reduction", [("init", init), ("update", update)], func_name, func)

    def rfactor(self, loop, factor_axis: int) -> BlockRV:
        """Factors the reduction under ``loop`` into partial results over a new spatial axis.

        A block ``<name>_rf`` reduces into ``<buffer>_rf``, whose shape is the written
        buffer's with the loop's extent inserted at ``factor_axis``; the loop's iterator is
        spatial there, so the loop can then be parallelized or vectorized. The original
        block keeps its name and combines the partial results.

        When the block shares outer loops with other blocks (and none of them writes
        its inputs), the partial reductions run first in a copy of the whole loop
        nest and the write-back takes the block's place, as in TVM; otherwise the
        write-back goes right after the outermost loop that holds only this block.
        Either way a consumer sharing an outer loop reads the combined result.

        Parameters
        ----------
        loop : LoopRV
            A loop over the single block under it, starting at 0 with unit step, that
            no spatial iterator reads (a reduction loop, or a loop no iterator reads);
            the block's update (possibly through lets) is ``+``, ``*``, ``T.min`` or
            ``T.max`` of the stored element, and its init stores that combiner's
            identity; or the block is an argmax / argmin over an index and a value
            buffer of one shape (two lets of ``T.Select`` stored as they are, init
            ``-1`` and the lowest / highest value). The block's scope must be a stage pipeline. When the loop
            carries the whole reduction, the partial results are plain stores.
        factor_axis : int
            Where the new dimension goes in ``<buffer>_rf`` (negative counts from the
            end).

        Returns
        -------
        BlockRV
            The rfactor block ``<name>_rf``.

        Raises
        ------
        ScheduleError
            When there is not exactly one block under the loop, the loop is not one of
            its reduction loops, the block is not such a reduction (or has a predicate,
            or a loop carrying both spatial and reduction iterators), a reduction
            loop is not serial, the bindings are not quasi-affine, a loop the
            block shares with other blocks carries the reduction, or
            ``factor_axis`` is out of range.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4,), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i, k in T.grid(4, 8):
                    with T.block("B"):
                        vi, vk = T.axis.remap("SR", [i, k])
                        T.reads(A[vi, vk])
                        T.writes(B[vi])
                        with T.init():
                            B[vi] = T.float32(0)
                        B[vi] = B[vi] + A[vi, vk]

        Schedule::

            sch = tilelang.Schedule(before)
            i, k = sch.get_loops("B")
            k_0, k_1 = sch.split(k, factors=[None, 4])
            B_rf = sch.rfactor(k_1, 0)

        After::

            @T.prim_func
            def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4,), "float32")):
                T.func_attr({"global_symbol": "main"})
                B_rf = T.alloc_buffer((4, 4), "float32")
                for i, k_0, k_1 in T.grid(4, 2, 4):
                    with T.block("B_rf"):
                        vk_1, vi, vk_0 = T.axis.remap("SSR", [k_1, i, k_0])
                        T.reads(A[vi, vk_0 * 4 + vk_1])
                        T.writes(B_rf[vk_1, vi])
                        with T.init():
                            B_rf[vk_1, vi] = T.float32(0)
                        B_rf[vk_1, vi] = B_rf[vk_1, vi] + A[vi, vk_0 * 4 + vk_1]
                for i, k_1 in T.grid(4, 4):
                    with T.block("B"):
                        vk_1, vi = T.axis.remap("RS", [k_1, i])
                        T.reads(B_rf[vk_1, vi])
                        T.writes(B[vi])
                        with T.init():
                            B[vi] = T.float32(0)
                        B[vi] = B[vi] + B_rf[vk_1, vi]
        """
        func_name, var = self._loop(loop, "rfactor")
        self._require_stage_pipeline("rfactor", func_name, var)
        func, rf_name = rfactor.rfactor(self._mod[func_name], var, factor_axis)
        args = [("loop", loop), ("factor_axis", factor_axis)]
        (rv,) = self._apply("rfactor", args, func_name, func, blocks=[rf_name])
        return rv

    def _require_stage_pipeline(self, primitive, func_name, loop_var) -> None:
        """As TVM, the scope of the blocks under the loop must be a stage pipeline:
        every consumer there reads only what its producers write (region cover)."""
        tree = Tree(self._mod[func_name])
        loop = find_loop(tree, loop_var, primitive)
        under = tree.blocks_under(loop)
        scope = tree.scope_realize(under[0]) if under else None
        if scope is None:
            return
        sref = self._state.get_sref(scope.block)
        if sref is not None and not self._state._get_cached_flags(sref).stage_pipeline:
            raise schedule_error(
                primitive,
                loop_subject(loop),
                f"the scope block {scope.block.name_hint!r} is not a stage pipeline (a block "
                "there reads a region its producers do not write, or overwrites what an "
                "earlier block reads)",
                loop,
            )

    def blockize(self, target, preserve_unit_iters: bool = True) -> BlockRV:
        """Wraps the loops from ``target`` down to the single block under them into an outer
        block ``<name>_o`` over tensor regions (the shape ``tensorize`` matches).

        Each binding splits into an outer iterator ``v_o`` of the new block and an inner
        iterator ``v_i`` of the old one; a reduction gets its init as a nested block.

        Parameters
        ----------
        target : LoopRV
            The outermost loop of the subtree; the loops under it must end in exactly
            one block whose bindings tile affinely.
        preserve_unit_iters : bool
            Accepted for TVM's signature; it does not change the result.

        Returns
        -------
        BlockRV
            The outer block.

        Raises
        ------
        ScheduleError
            When the loops under ``target`` do not end in one block, the block's
            predicate uses outer loops, or a binding is not an affine tile.

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
            B_o = sch.blockize(j)

        After::

            @T.prim_func
            def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i in range(4):
                    with T.block("B_o"):
                        vi_o = T.axis.spatial(4, i)
                        vj_o = T.axis.spatial(1, 0)
                        T.reads(A[vi_o, 0:8])
                        T.writes(B[vi_o, 0:8])
                        for j in range(8):
                            with T.block("B"):
                                vj_i = T.axis.remap("S", [j])
                                T.reads(A[vi_o, vj_i])
                                T.writes(B[vi_o, vj_i])
                                B[vi_o, vj_i] = A[vi_o, vj_i] * T.float32(2)
        """
        func_name, var = self._loop(target, "blockize")
        func, outer = blockize.blockize(self._mod[func_name], var, preserve_unit_iters)
        args = [("target", target), ("preserve_unit_iters", preserve_unit_iters)]
        (rv,) = self._apply("blockize", args, func_name, func, blocks=[outer])
        return rv

"""Primitives of :class:`~tilelang.schedule.Schedule` that move or inline a block:
compute_at, reverse_compute_at, compute_inline, reverse_compute_inline. The
rewrites are in :mod:`.block_placement` and :mod:`.inline`."""

from __future__ import annotations

from tilelang.schedule import block_placement, inline
from tilelang.schedule.api_state import at_mark, is_mark
from tilelang.schedule.errors import schedule_error


class PlacementPrimitives:
    """compute_at, reverse_compute_at, compute_inline, reverse_compute_inline (a mixin
    of :class:`~tilelang.schedule.Schedule`, which provides the handle resolution and
    ``_apply``)."""

    def compute_at(self, block, loop, preserve_unit_loops=False, index=-1) -> None:
        """Moves producer ``block`` under ``loop``, computing in each iteration exactly the
        region its consumers there read.

        The block gets new loops ``ax0, ...`` over that region, placed after what writes
        its inputs and before what reads its output.

        Each iterator's range is solved from the region as TVM does: through the
        inverse of the block's write indices when they form a bijective iterator map
        (``(v1 * 8 + v4) // 16`` with ``(v1 * 8 + v4) % 16``), otherwise index by index
        through ``v``, ``v * e`` (a tile written per instance), ``x // f`` and
        ``x % f``, nested (``v % 4 // 2``); a loop of extent 1 counts as its value.

        Where the region the consumers read runs past the block's iterator domain or
        the buffer (a ragged tile edge, a stencil at the border), the moved block
        gets TVM's bound predicate, e.g. ``T.where(j + ax0 < 16)``, unless the range
        can be clipped to a constant one or the loops' ranges prove it in bounds.

        Parameters
        ----------
        block : BlockRV or str
            A block writing one buffer; all its consumers must lie under ``loop``.
        loop : LoopRV
            A loop of the same scope, not above ``block``.
        preserve_unit_loops : bool
            Whether new loops of extent 1 are kept (else the binding is the region's
            start).
        index : int
            Where among the loop's body statements the block goes: -1 the latest legal
            position, -2 the earliest, or a position in between.

        Returns
        -------
        None

        Raises
        ------
        ScheduleError
            When the block is already under the loop or contains it, they are in
            different block scopes, the block has a predicate or writes more than one
            buffer, another block writes its buffer, a consumer is outside the loop, no
            position respects the dependences, the region cannot be bounded, or an
            index cannot be solved for an iterator.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((4, 8), "float32"), C: T.Buffer((4, 8), "float32")):
                T.func_attr({"global_symbol": "main"})
                B = T.alloc_buffer((4, 8), "float32")
                for i, j in T.grid(4, 8):
                    with T.block("B"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        T.reads(A[vi, vj])
                        T.writes(B[vi, vj])
                        B[vi, vj] = A[vi, vj] * T.float32(2)
                for i, j in T.grid(4, 8):
                    with T.block("C"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        T.reads(B[vi, vj])
                        T.writes(C[vi, vj])
                        C[vi, vj] = B[vi, vj] + T.float32(1)

        Schedule::

            sch = tilelang.Schedule(before)
            i, j = sch.get_loops("C")
            sch.compute_at(sch.get_block("B"), i)

        After::

            @T.prim_func
            def main(A: T.Buffer((4, 8), "float32"), C: T.Buffer((4, 8), "float32")):
                T.func_attr({"global_symbol": "main"})
                B = T.alloc_buffer((4, 8), "float32")
                for i in range(4):
                    for ax0 in range(8):
                        with T.block("B"):
                            vi, vj = T.axis.remap("SS", [i, ax0])
                            T.reads(A[vi, vj])
                            T.writes(B[vi, vj])
                            B[vi, vj] = A[vi, vj] * T.float32(2)
                    for j in range(8):
                        with T.block("C"):
                            vi, vj = T.axis.remap("SS", [i, j])
                            T.reads(B[vi, vj])
                            T.writes(C[vi, vj])
                            C[vi, vj] = B[vi, vj] + T.float32(1)
        """
        self._place("compute_at", block, loop, preserve_unit_loops, index)

    def reverse_compute_at(self, block, loop, preserve_unit_loops=False, index=-1) -> None:
        """Moves consumer ``block`` under ``loop``, computing in each iteration exactly the
        region its producers there write.

        The block gets new loops ``ax0, ...`` over that region, placed after its
        producers and before whatever reads its output.

        As :meth:`compute_at`, the iterators' ranges are solved from the block's read
        indices (an inverted iterator map, or index by index), and a region past the
        block's domain or the buffer gets a bound predicate
        (``T.where(j_0 * 5 + ax0 < 16)``).

        Parameters
        ----------
        block : BlockRV or str
            A block reading at least one buffer produced under ``loop``; every
            producer of the buffers it reads must lie under ``loop``.
        loop : LoopRV
            A loop of the same scope, not above ``block``.
        preserve_unit_loops : bool
            Whether new loops of extent 1 are kept (else the binding is the region's
            start).
        index : int
            Where among the loop's body statements the block goes: -1 the latest legal
            position, -2 the earliest, or a position in between.

        Returns
        -------
        None

        Raises
        ------
        ScheduleError
            When the block is already under the loop or contains it, they are in
            different block scopes, the block has a predicate, not exactly one of its
            inputs is produced under the loop, a producer is outside the loop, no
            position respects the dependences, or the region cannot be bounded.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((4, 8), "float32"), C: T.Buffer((4, 8), "float32")):
                T.func_attr({"global_symbol": "main"})
                B = T.alloc_buffer((4, 8), "float32")
                for i, j in T.grid(4, 8):
                    with T.block("B"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        T.reads(A[vi, vj])
                        T.writes(B[vi, vj])
                        B[vi, vj] = A[vi, vj] * T.float32(2)
                for i, j in T.grid(4, 8):
                    with T.block("C"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        T.reads(B[vi, vj])
                        T.writes(C[vi, vj])
                        C[vi, vj] = B[vi, vj] + T.float32(1)

        Schedule::

            sch = tilelang.Schedule(before)
            i, j = sch.get_loops("B")
            sch.reverse_compute_at(sch.get_block("C"), i)

        After::

            @T.prim_func
            def main(A: T.Buffer((4, 8), "float32"), C: T.Buffer((4, 8), "float32")):
                T.func_attr({"global_symbol": "main"})
                B = T.alloc_buffer((4, 8), "float32")
                for i in range(4):
                    for j in range(8):
                        with T.block("B"):
                            vi, vj = T.axis.remap("SS", [i, j])
                            T.reads(A[vi, vj])
                            T.writes(B[vi, vj])
                            B[vi, vj] = A[vi, vj] * T.float32(2)
                    for ax0 in range(8):
                        with T.block("C"):
                            vi, vj = T.axis.remap("SS", [i, ax0])
                            T.reads(B[vi, vj])
                            T.writes(C[vi, vj])
                            C[vi, vj] = B[vi, vj] + T.float32(1)
        """
        self._place("reverse_compute_at", block, loop, preserve_unit_loops, index)

    def _place(self, primitive, block, loop, preserve_unit_loops, index):
        block, func_name, name = self._block_target(block, primitive)
        loop_func, var = self._loop(loop, primitive)
        if loop_func != func_name:
            raise schedule_error(primitive, f"block {name!r}", "the loop is in another function")
        rewrite = getattr(block_placement, primitive)
        func = (
            at_mark(self._mod[func_name], name, var)
            if is_mark(var)  # sampled root/inline
            else rewrite(self._mod[func_name], name, var, preserve_unit_loops, index)
        )
        args = [
            ("block", block),
            ("loop", loop),
            ("preserve_unit_loops", preserve_unit_loops),
            ("index", index),
        ]
        self._apply(primitive, args, func_name, func)

    def compute_inline(self, block) -> None:
        """Inlines producer ``block`` into its consumers and removes it.

        Each load of the intermediate buffer is replaced by the stored expression; a
        buffer no longer used is no longer allocated.

        Loads in a consumer's ``T.where`` are inlined too.

        Parameters
        ----------
        block : BlockRV or str
            A spatial block whose body is one store ``B[v0, ...] = expr`` to an
            intermediate (allocated) buffer, indexed by its iterators.

        Returns
        -------
        None

        Raises
        ------
        ScheduleError
            When the block is a reduction, has a predicate, allocates buffers, is not a
            single store to an intermediate buffer, another block writes that buffer,
            the block reads it itself, a consumer reads it before it is written or
            after its inputs change, or a consumer uses the buffer other than by loads
            (``access_ptr``, a ``T.match_buffer`` source, its data pointer).

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
                T.func_attr({"global_symbol": "main"})
                B = T.alloc_buffer((8,), "float32")
                for i in range(8):
                    with T.block("B"):
                        vi = T.axis.remap("S", [i])
                        T.reads(A[vi])
                        T.writes(B[vi])
                        B[vi] = A[vi] * T.float32(2)
                for i in range(8):
                    with T.block("C"):
                        vi = T.axis.remap("S", [i])
                        T.reads(B[vi])
                        T.writes(C[vi])
                        C[vi] = B[vi] + T.float32(1)

        Schedule::

            sch = tilelang.Schedule(before)
            sch.compute_inline(sch.get_block("B"))

        After::

            @T.prim_func
            def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i in range(8):
                    with T.block("C"):
                        vi = T.axis.remap("S", [i])
                        T.reads(A[vi])
                        T.writes(C[vi])
                        C[vi] = A[vi] * T.float32(2) + T.float32(1)
        """
        self._inline("compute_inline", block)

    def reverse_compute_inline(self, block) -> None:
        """Inlines consumer ``block`` into its producer and removes it.

        The producer stores the consumer's expression (of the produced value) straight
        into the consumer's output buffer.

        The consumer's iterators are recovered by inverting its load indices (an
        iterator map, bijective over the iterators' domains or over those domains
        padded to whole periods of the divisors, as ``cvi // 16, cvi % 16`` with
        ``cvi < 127``). When the producer computes more of the buffer than the
        consumer reads, the inlined producer gets the predicate
        ``T.where(i < 127 and j < 127)`` that keeps its stores inside the consumer's
        domain; a predicate the producer already has is kept. A producer that
        accumulates in place (an init, spatial iterators) takes only a consumer that
        copies the element unchanged.

        Parameters
        ----------
        block : BlockRV or str
            A spatial block without a predicate whose body is one store reading
            exactly one intermediate buffer (at one index list); that buffer has one
            producer and no other readers.

        Returns
        -------
        None

        Raises
        ------
        ScheduleError
            When the block is a reduction, has a predicate, is not a single store, does
            not read exactly one intermediate buffer exactly once, that buffer has
            other producers or readers, or a block between the two interferes.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
                T.func_attr({"global_symbol": "main"})
                B = T.alloc_buffer((8,), "float32")
                for i in range(8):
                    with T.block("B"):
                        vi = T.axis.remap("S", [i])
                        T.reads(A[vi])
                        T.writes(B[vi])
                        B[vi] = A[vi] * T.float32(2)
                for i in range(8):
                    with T.block("C"):
                        vi = T.axis.remap("S", [i])
                        T.reads(B[vi])
                        T.writes(C[vi])
                        C[vi] = B[vi] + T.float32(1)

        Schedule::

            sch = tilelang.Schedule(before)
            sch.reverse_compute_inline(sch.get_block("C"))

        After::

            @T.prim_func
            def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i in range(8):
                    with T.block("B"):
                        vi = T.axis.remap("S", [i])
                        T.reads(A[vi])
                        T.writes(C[vi])
                        C[vi] = A[vi] * T.float32(2) + T.float32(1)
        """
        self._inline("reverse_compute_inline", block)

    def _inline(self, primitive, block):
        block, func_name, name = self._block_target(block, primitive)
        func = getattr(inline, primitive)(self._mod[func_name], name)
        self._apply(primitive, [("block", block)], func_name, func)

"""Primitives of :class:`~tilelang.schedule.Schedule` about padding:
decompose_padding, can_decompose_padding (rewrite in :mod:`.decompose_padding`) and
pad_einsum (rewrite in :mod:`.pad_einsum`)."""

from __future__ import annotations

from tilelang.schedule import decompose_padding as padding
from tilelang.schedule import pad_einsum as einsum
from tilelang.schedule.state import BlockRV


class PaddingPrimitives:
    """decompose_padding, can_decompose_padding, pad_einsum (a mixin of
    :class:`~tilelang.schedule.Schedule`)."""

    def decompose_padding(self, block, loop) -> BlockRV:
        """Splits a padding block ``y[v] = T.if_then_else(cond, value, pad)`` into a block
        filling the buffer with ``pad`` (``<name>_pad_const``, placed before ``loop``)
        and the block copying ``value`` only where ``cond`` holds.

        ``cond`` must bound single iterators by constants; each bounded iterator is
        rebased to the range where it holds. A loop at or below ``loop`` that alone
        binds such an iterator shrinks; otherwise the copy block gets a predicate.

        Parameters
        ----------
        block : BlockRV or str
            The padding block.
        loop : LoopRV
            A loop above the block: the fill block copies the loops from it down.

        Returns
        -------
        BlockRV
            The fill block.

        Raises
        ------
        ScheduleError
            When the block's body is not one store of ``T.if_then_else``, the pad value
            depends on buffers or iterators, a part of the condition does not bound one
            iterator by constants, the condition leaves nothing to copy, or ``loop`` is
            not above the block.

        Example
        -------
        Before::

            @T.prim_func
            def main(x: T.Buffer((6,), "float32"), y: T.Buffer((10,), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i in range(10):
                    with T.block("pad"):
                        vi = T.axis.remap("S", [i])
                        T.reads(x[vi - 2])
                        T.writes(y[vi])
                        y[vi] = T.if_then_else(2 <= vi and vi < 8, x[vi - 2], T.float32(0))

        Schedule::

            sch = tilelang.Schedule(before)
            (i,) = sch.get_loops("pad")
            fill = sch.decompose_padding("pad", i)

        After::

            @T.prim_func
            def main(x: T.Buffer((6,), "float32"), y: T.Buffer((10,), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i in range(10):
                    with T.block("pad_pad_const"):
                        vi = T.axis.remap("S", [i])
                        T.reads()
                        T.writes(y[vi])
                        y[vi] = T.float32(0)
                for i in range(6):
                    with T.block("pad"):
                        vi = T.axis.remap("S", [i])
                        T.reads(x[vi])
                        T.writes(y[vi + 2])
                        y[vi + 2] = x[vi]
        """
        block, func_name, name = self._block_target(block, "decompose_padding")
        _, var = self._loop(loop, "decompose_padding")
        func, fill = padding.decompose_padding(self._mod[func_name], name, var)
        args = [("block", block), ("loop", loop)]
        (rv,) = self._apply("decompose_padding", args, func_name, func, blocks=[fill])
        return rv

    def can_decompose_padding(self, block, loop) -> bool:
        """Whether :meth:`decompose_padding` would succeed on ``block`` and ``loop``
        (nothing changes, nothing is traced)."""
        block, func_name, name = self._block_target(block, "can_decompose_padding")
        _, var = self._loop(loop, "can_decompose_padding")
        return padding.can_decompose_padding(self._mod[func_name], name, var)

    def pad_einsum(self, block, padding) -> None:
        """Rounds each iterator of an einsum-like block up to a multiple of its padding:
        the buffers it accesses along a padded iterator become zero-padded copies
        (``<name>_pad``), filled right before the block's statement and, for outputs,
        copied back right after it; the loops that are padded iterators grow.

        Parameters
        ----------
        block : BlockRV or str
            A block whose every access is one point indexed by iterators or constants,
            each buffer accessed once.
        padding : list of int
            One positive multiple per block iterator (1 leaves it alone).

        Returns
        -------
        None

        Raises
        ------
        ScheduleError
            When the padding does not give one positive integer per iterator, the block
            is not an einsum, a padded loop or the block's statement holds another
            block, a padded reduction would add non-zero terms (the update is not
            ``acc = acc + e`` with ``e`` zero on the padding), or the block divides by a
            padded input.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((4, 7), "float32"), B: T.Buffer((6, 7), "float32"), C: T.Buffer((4, 6), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i, j, k in T.grid(4, 6, 7):
                    with T.block("C"):
                        vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                        T.reads(A[vi, vk], B[vj, vk])
                        T.writes(C[vi, vj])
                        with T.init():
                            C[vi, vj] = T.float32(0)
                        C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vj, vk]

        Schedule::

            sch = tilelang.Schedule(before)
            sch.pad_einsum("C", [1, 8, 1])

        After::

            @T.prim_func
            def main(A: T.Buffer((4, 7), "float32"), B: T.Buffer((6, 7), "float32"), C: T.Buffer((4, 6), "float32")):
                T.func_attr({"global_symbol": "main"})
                B_pad = T.alloc_buffer((8, 7), "float32")
                C_pad = T.alloc_buffer((4, 8), "float32")
                for i0, i1 in T.grid(8, 7):
                    with T.block("B_pad"):
                        v0, v1 = T.axis.remap("SS", [i0, i1])
                        T.reads(B[v0, v1])
                        T.writes(B_pad[v0, v1])
                        B_pad[v0, v1] = T.if_then_else(v0 < 6, B[v0, v1], T.float32(0))
                for i, j, k in T.grid(4, 8, 7):
                    with T.block("C"):
                        vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                        T.reads(A[vi, vk], B_pad[vj, vk])
                        T.writes(C_pad[vi, vj])
                        with T.init():
                            C_pad[vi, vj] = T.float32(0)
                        C_pad[vi, vj] = C_pad[vi, vj] + A[vi, vk] * B_pad[vj, vk]
                for i0, i1 in T.grid(4, 6):
                    with T.block("C_pad"):
                        v0, v1 = T.axis.remap("SS", [i0, i1])
                        T.reads(C_pad[v0, v1])
                        T.writes(C[v0, v1])
                        C[v0, v1] = C_pad[v0, v1]
        """
        block, func_name, name = self._block_target(block, "pad_einsum")
        func = einsum.pad_einsum(self._mod[func_name], name, list(self._value(padding)))
        self._apply("pad_einsum", [("block", block), ("padding", list(padding))], func_name, func)

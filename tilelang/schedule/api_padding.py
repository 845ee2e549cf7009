"""Primitives of :class:`~tilelang.schedule.Schedule` about padding:
decompose_padding, can_decompose_padding (rewrite in :mod:`.decompose_padding`)."""

from __future__ import annotations

from tilelang.schedule import decompose_padding as padding
from tilelang.schedule.state import BlockRV


class PaddingPrimitives:
    """decompose_padding, can_decompose_padding (a mixin of
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

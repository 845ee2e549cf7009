"""Primitives of :class:`~tilelang.schedule.Schedule` about how a buffer is stored:
rolling_buffer (rewrite in :mod:`.rolling_buffer`), set_axis_separator
(:mod:`.axis_separator`)."""

from __future__ import annotations

from tilelang.schedule import axis_separator
from tilelang.schedule import rolling_buffer as rolling


class StoragePrimitives:
    """rolling_buffer, set_axis_separator (a mixin of
    :class:`~tilelang.schedule.Schedule`)."""

    def rolling_buffer(self, block, write_buffer_index: int) -> None:
        """Keeps one tile of the buffer ``block`` writes (``writes[write_buffer_index]``)
        along its rolling axis, indexed modulo the tile, when the block is computed
        per tile of its consumers and neighbouring tiles overlap (a sliding window, as
        in cascaded pooling). The block then skips, after the first tile, the elements
        the previous tile computed.

        Parameters
        ----------
        block : BlockRV or str
            The producer, computed at a tile loop shared with all its consumers.
        write_buffer_index : int
            The position of the buffer in the block's writes.

        Returns
        -------
        None

        Raises
        ------
        ScheduleError
            When the index is out of range, the buffer is a function parameter, the
            block has a dependence other than read-after-write, no loop holds the block
            and its consumers, no axis of the window starts at ``v * stride`` with
            overlapping tiles, a loop whose iterations reuse earlier ones is not serial
            from 0, the block's reduction runs across tiles, or a consumer reads outside
            one tile's window.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((12,), "int32"), C: T.Buffer((8,), "int32")):
                T.func_attr({"global_symbol": "main"})
                B = T.alloc_buffer((10,), "int32")
                for i_0 in range(2):
                    for ax0 in range(6):
                        with T.block("B"):
                            vi = T.axis.spatial(10, i_0 * 4 + ax0)
                            T.reads(A[vi:vi + 3])
                            T.writes(B[vi])
                            B[vi] = A[vi] + A[vi + 1] + A[vi + 2]
                    for i_1 in range(4):
                        with T.block("C"):
                            vi = T.axis.spatial(8, i_0 * 4 + i_1)
                            T.reads(B[vi:vi + 3])
                            T.writes(C[vi])
                            C[vi] = B[vi] + B[vi + 1] + B[vi + 2]

        Schedule::

            sch = tilelang.Schedule(before)
            sch.rolling_buffer("B", 0)

        After::

            @T.prim_func
            def main(A: T.Buffer((12,), "int32"), C: T.Buffer((8,), "int32")):
                T.func_attr({"global_symbol": "main"})
                B = T.alloc_buffer((6,), "int32")
                for i_0 in range(2):
                    for ax0 in range(6):
                        with T.block("B"):
                            vi = T.axis.opaque(10, i_0 * 4 + ax0)
                            T.where(i_0 < 1 or 2 <= ax0)
                            T.reads(A[vi:vi + 3])
                            T.writes(B[vi % 6])
                            B[vi % 6] = A[vi] + A[vi + 1] + A[vi + 2]
                    for i_1 in range(4):
                        with T.block("C"):
                            vi = T.axis.opaque(8, i_0 * 4 + i_1)
                            T.reads(B[0:6])
                            T.writes(C[vi])
                            C[vi] = B[vi % 6] + B[(vi + 1) % 6] + B[(vi + 2) % 6]
        """
        block, func_name, name = self._block_target(block, "rolling_buffer")
        func = rolling.rolling_buffer(self._mod[func_name], name, write_buffer_index)
        args = [("block", block), ("write_buffer_index", write_buffer_index)]
        self._apply("rolling_buffer", args, func_name, func)

    def set_axis_separator(self, block, buffer_index, axis_separators) -> None:
        """Groups the axes of a buffer ``block`` accesses into physical axes (TVM's
        ``axis_separators``, e.g. ``[1]`` for a 2-d physical buffer); the accesses stay
        as they are. On the CPU backends the groups are laid out one after the other,
        which is the usual row-major layout. ``T.match_buffer`` views of the buffer
        get separators as TVM gives them (the same at the same rank, else zeros).

        Parameters
        ----------
        block : BlockRV or str
            A block accessing the buffer.
        buffer_index : tuple or str
            ``("read", i)``, ``("write", i)`` or the buffer's name.
        axis_separators : list of int
            Increasing axis positions strictly inside the buffer's rank.

        Returns
        -------
        None

        Raises
        ------
        ScheduleError
            When the buffer index is invalid, the separators are not increasing
            positions inside the rank, or the buffer is itself a ``T.match_buffer``
            view.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((8, 16), "float32"), C: T.Buffer((8, 16), "float32")):
                T.func_attr({"global_symbol": "main"})
                B = T.alloc_buffer((8, 16), "float32")
                for i, j in T.grid(8, 16):
                    with T.block("B"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        T.reads(A[vi, vj])
                        T.writes(B[vi, vj])
                        B[vi, vj] = A[vi, vj] * T.float32(2)
                for i, j in T.grid(8, 16):
                    with T.block("C"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        T.reads(B[vi, vj])
                        T.writes(C[vi, vj])
                        C[vi, vj] = B[vi, vj] + T.float32(1)

        Schedule::

            sch = tilelang.Schedule(before)
            sch.set_axis_separator("B", ("write", 0), [1])

        After::

            @T.prim_func
            def main(A: T.Buffer((8, 16), "float32"), C: T.Buffer((8, 16), "float32")):
                T.func_attr({"global_symbol": "main"})
                B = T.alloc_buffer((8, 16), "float32", axis_separators=[1])
                for i, j in T.grid(8, 16):
                    with T.block("B"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        T.reads(A[vi, vj])
                        T.writes(B[vi, vj])
                        B[vi, vj] = A[vi, vj] * T.float32(2)
                for i, j in T.grid(8, 16):
                    with T.block("C"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        T.reads(B[vi, vj])
                        T.writes(C[vi, vj])
                        C[vi, vj] = B[vi, vj] + T.float32(1)
        """
        block, func_name, name = self._block_target(block, "set_axis_separator")
        func = axis_separator.set_axis_separator(
            self._mod[func_name], name, buffer_index, axis_separators
        )
        args = [
            ("block", block),
            ("buffer_index", buffer_index),
            ("axis_separators", list(axis_separators)),
        ]
        self._apply("set_axis_separator", args, func_name, func)

"""Primitives of :class:`~tilelang.schedule.Schedule` that stage a buffer through a
cache around one block: cache_inplace (rewrite in :mod:`.cache_inplace`)."""

from __future__ import annotations

from tilelang.schedule import cache_inplace as inplace
from tilelang.schedule.state import BlockRV


class StagingPrimitives:
    """cache_inplace (a mixin of :class:`~tilelang.schedule.Schedule`)."""

    def cache_inplace(self, block, read_buffer_index: int, storage_scope: str) -> list[BlockRV]:
        """Stages a buffer the block both reads and writes (an in-place update) through
        a cache in ``storage_scope``: a copy in right before the block and a copy back
        right after, over the block's region of the buffer.

        Parameters
        ----------
        block : BlockRV or str
            The block updating the buffer in place.
        read_buffer_index : int
            The index of the buffer in the block's reads.
        storage_scope : str
            The scope of the cache (``"local"``, ``"shared"``, ``"global.X"``).

        Returns
        -------
        list of BlockRV
            The copy-in and the copy-out blocks.

        Raises
        ------
        ScheduleError
            When the index is out of range, the scope is invalid, the block does not
            write the buffer it reads, the region has a symbolic extent, or its read
            and write regions differ.

        Example
        -------
        Before::

            @T.prim_func
            def main(data: T.Buffer((8,), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i in range(8):
                    with T.block("scale"):
                        vi = T.axis.remap("S", [i])
                        T.reads(data[vi])
                        T.writes(data[vi])
                        data[vi] = data[vi] * T.float32(2)

        Schedule::

            sch = tilelang.Schedule(before)
            copy_in, copy_out = sch.cache_inplace("scale", 0, "local")

        After::

            @T.prim_func
            def main(data: T.Buffer((8,), "float32")):
                T.func_attr({"global_symbol": "main"})
                data_local = T.alloc_buffer((8,), "float32", scope="local")
                for i in range(8):
                    for ax0 in range(1):
                        with T.block("data_local"):
                            v0 = T.axis.spatial(8, i + ax0)
                            T.reads(data[v0])
                            T.writes(data_local[v0])
                            data_local[v0] = data[v0]
                    with T.block("scale"):
                        vi = T.axis.remap("S", [i])
                        T.reads(data_local[vi])
                        T.writes(data_local[vi])
                        data_local[vi] = data_local[vi] * T.float32(2)
                    for ax0 in range(1):
                        with T.block("data_local_1"):
                            v0 = T.axis.spatial(8, i + ax0)
                            T.reads(data_local[v0])
                            T.writes(data[v0])
                            data[v0] = data_local[v0]
        """
        block, func_name, name = self._block_target(block, "cache_inplace")
        func, names = inplace.cache_inplace(
            self._mod[func_name], name, read_buffer_index, storage_scope
        )
        args = [("block", block), ("read_buffer_index", read_buffer_index),
                ("storage_scope", storage_scope)]  # fmt: skip
        return self._apply("cache_inplace", args, func_name, func, blocks=names)

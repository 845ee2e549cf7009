"""Primitives of :class:`~tilelang.schedule.Schedule` that stage a buffer through a
cache: cache_inplace around one block (rewrite in :mod:`.cache_inplace`), read_at and
write_at per iteration of a loop (rewrite in :mod:`.read_write_at`), cache_index for
the index computations of a block (rewrite in :mod:`.cache_index`)."""

from __future__ import annotations

from tilelang.schedule import cache_index as index_cache
from tilelang.schedule import cache_inplace as inplace
from tilelang.schedule import read_write_at
from tilelang.schedule.state import BlockRV


class StagingPrimitives:
    """cache_inplace, read_at, write_at, cache_index (a mixin of
    :class:`~tilelang.schedule.Schedule`)."""

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

    def read_at(self, loop, block, read_buffer_index: int, storage_scope: str) -> BlockRV:
        """Copies, in each iteration of ``loop``, the region of the buffer ``block``
        reads (``reads[read_buffer_index]``) that the blocks under the loop read, into a
        buffer of ``storage_scope``; from the first child of the loop that reads it on,
        they read the copy. The copy block (``<buffer>_<scope>``, annotated
        ``auto_copy``) goes right before that child.

        Parameters
        ----------
        loop : LoopRV
            A loop above the block.
        block : BlockRV or str
            A block under the loop reading the buffer.
        read_buffer_index : int
            The position of the buffer in the block's reads.
        storage_scope : str
            The scope of the copy (``"shared"``, ``"local"``, ...).

        Returns
        -------
        BlockRV
            The copy block.

        Raises
        ------
        ScheduleError
            When the index or the scope is invalid, the block is not under the loop, a
            block under the loop writes the buffer at or after its first read there, or
            the region may leave the buffer.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i0, k0, i1, j, k1 in T.grid(4, 8, 16, 64, 8):
                    with T.block("C"):
                        vi = T.axis.spatial(64, i0 * 16 + i1)
                        vj = T.axis.spatial(64, j)
                        vk = T.axis.reduce(64, k0 * 8 + k1)
                        T.reads(A[vi, vk], B[vk, vj])
                        T.writes(C[vi, vj])
                        with T.init():
                            C[vi, vj] = T.float32(0)
                        C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]

        Schedule::

            sch = tilelang.Schedule(before)
            i0, k0, i1, j, k1 = sch.get_loops("C")
            sch.read_at(k0, "C", 0, "shared")

        After::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
                T.func_attr({"global_symbol": "main"})
                A_shared = T.alloc_buffer((64, 64), "float32", scope="shared")
                for i0, k0 in T.grid(4, 8):
                    with T.block("A_shared"):
                        v0, v1 = T.axis.remap("SS", [i0, k0])
                        T.reads(A[v0 * 16:v0 * 16 + 16, v1 * 8:v1 * 8 + 8])
                        T.writes(A_shared[v0 * 16:v0 * 16 + 16, v1 * 8:v1 * 8 + 8])
                        T.block_attr({"auto_copy": True})
                        for ax0, ax1 in T.grid(16, 8):
                            A_shared[v0 * 16 + ax0, v1 * 8 + ax1] = A[v0 * 16 + ax0, v1 * 8 + ax1]
                    for i1, j, k1 in T.grid(16, 64, 8):
                        with T.block("C"):
                            vi = T.axis.spatial(64, i0 * 16 + i1)
                            vj = T.axis.spatial(64, j)
                            vk = T.axis.reduce(64, k0 * 8 + k1)
                            T.reads(A_shared[vi, vk], B[vk, vj])
                            T.writes(C[vi, vj])
                            with T.init():
                                C[vi, vj] = T.float32(0)
                            C[vi, vj] = C[vi, vj] + A_shared[vi, vk] * B[vk, vj]
        """
        return self._stage("read_at", loop, block, read_buffer_index, storage_scope)

    def write_at(self, loop, block, write_buffer_index: int, storage_scope: str) -> BlockRV:
        """Makes the blocks under ``loop`` write the buffer ``block`` writes
        (``writes[write_buffer_index]``) into a buffer of ``storage_scope``, and copies
        the region they wrote back after the last child of the loop that writes it, in
        each iteration. The copy block is named ``<buffer>_<scope>`` and annotated
        ``auto_copy``.

        Parameters
        ----------
        loop : LoopRV
            A loop above the block.
        block : BlockRV or str
            A block under the loop writing the buffer.
        write_buffer_index : int
            The position of the buffer in the block's writes.
        storage_scope : str
            The scope of the copy.

        Returns
        -------
        BlockRV
            The copy-back block.

        Raises
        ------
        ScheduleError
            When the index or the scope is invalid, the block is not under the loop, the
            buffer is read after its last write under the loop, the region may leave the
            buffer, the writes do not cover their region densely or differ between
            blocks, or a block reads the buffer before the copy back other than as a
            reduction starting from its init in each iteration of the loop.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i0, k0, i1, j, k1 in T.grid(4, 8, 16, 64, 8):
                    with T.block("C"):
                        vi = T.axis.spatial(64, i0 * 16 + i1)
                        vj = T.axis.spatial(64, j)
                        vk = T.axis.reduce(64, k0 * 8 + k1)
                        T.reads(A[vi, vk], B[vk, vj])
                        T.writes(C[vi, vj])
                        with T.init():
                            C[vi, vj] = T.float32(0)
                        C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]

        Schedule::

            sch = tilelang.Schedule(before)
            i0, k0, i1, j, k1 = sch.get_loops("C")
            sch.write_at(i0, "C", 0, "local")

        After::

            @T.prim_func
            def main(A: T.Buffer((64, 64), "float32"), B: T.Buffer((64, 64), "float32"), C: T.Buffer((64, 64), "float32")):
                T.func_attr({"global_symbol": "main"})
                C_local = T.alloc_buffer((64, 64), "float32", scope="local")
                for i0 in range(4):
                    for k0, i1, j, k1 in T.grid(8, 16, 64, 8):
                        with T.block("C"):
                            vi = T.axis.spatial(64, i0 * 16 + i1)
                            vj = T.axis.spatial(64, j)
                            vk = T.axis.reduce(64, k0 * 8 + k1)
                            T.reads(A[vi, vk], B[vk, vj])
                            T.writes(C_local[vi, vj])
                            with T.init():
                                C_local[vi, vj] = T.float32(0)
                            C_local[vi, vj] = C_local[vi, vj] + A[vi, vk] * B[vk, vj]
                    with T.block("C_local"):
                        v0 = T.axis.remap("S", [i0])
                        T.reads(C_local[v0 * 16:v0 * 16 + 16, 0:64])
                        T.writes(C[v0 * 16:v0 * 16 + 16, 0:64])
                        T.block_attr({"auto_copy": True})
                        for ax0, ax1 in T.grid(16, 64):
                            C[v0 * 16 + ax0, ax1] = C_local[v0 * 16 + ax0, ax1]
        """
        return self._stage("write_at", loop, block, write_buffer_index, storage_scope)

    def _stage(self, primitive, loop, block, index, storage_scope):
        block, func_name, name = self._block_target(block, primitive)
        _, var = self._loop(loop, primitive)
        rewrite = getattr(read_write_at, primitive)
        func, copy = rewrite(self._mod[func_name], var, name, index, storage_scope)
        key = "read_buffer_index" if primitive == "read_at" else "write_buffer_index"
        args = [("loop", loop), ("block", block), (key, index), ("storage_scope", storage_scope)]
        (rv,) = self._apply(primitive, args, func_name, func, blocks=[copy])
        return rv

    def cache_index(self, block, storage_scope: str, cse_thresh: int = 0) -> list[BlockRV]:
        """Precomputes the index computations ``block`` repeats: each becomes a buffer
        ``index_var_<k>`` (one value per value of the iterators it uses) filled by a
        block ``index_<k>`` placed before the block's statement, and the block loads it.

        A computation is a pure, non-leaf expression of the block's iterators; one
        seen fewer than ``cse_thresh`` times hands its count on to its parts, and those
        seen at least ``cse_thresh`` times are cached, the largest first.

        Parameters
        ----------
        block : BlockRV or str
            The block whose stores compute indices.
        storage_scope : str
            The scope of the index buffers.
        cse_thresh : int
            How often a computation must occur to be cached (0: every maximal one).

        Returns
        -------
        list of BlockRV
            The index blocks, in the order of their buffers.

        Raises
        ------
        ScheduleError
            When the scope is invalid or ``cse_thresh`` is not an integer >= 0.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((2, 12, 10), "float32"), B: T.Buffer((2, 24, 20), "float32")):
                T.func_attr({"global_symbol": "main"})
                for c, i, j in T.grid(2, 24, 20):
                    with T.block("B"):
                        vc, vi, vj = T.axis.remap("SSS", [c, i, j])
                        T.reads(A[vc, vi // 4 + vj // 4, vj // 2])
                        T.writes(B[vc, vi, vj])
                        B[vc, vi, vj] = A[vc, vi // 4 + vj // 4, vj // 2]

        Schedule::

            sch = tilelang.Schedule(before)
            sch.cache_index("B", "global")

        After::

            @T.prim_func
            def main(A: T.Buffer((2, 12, 10), "float32"), B: T.Buffer((2, 24, 20), "float32")):
                T.func_attr({"global_symbol": "main"})
                index_var_0 = T.alloc_buffer((24, 20), "int32", strides=(20, 1))
                index_var_1 = T.alloc_buffer((20,), "int32", strides=(1,))
                for ax0, ax1 in T.grid(24, 20):
                    with T.block("index_0"):
                        v0, v1 = T.axis.remap("SS", [ax0, ax1])
                        T.reads()
                        T.writes(index_var_0[v0, v1])
                        index_var_0[v0, v1] = v0 // 4 + v1 // 4
                for ax0 in range(20):
                    with T.block("index_1"):
                        v0 = T.axis.remap("S", [ax0])
                        T.reads()
                        T.writes(index_var_1[v0])
                        index_var_1[v0] = v0 // 2
                for c, i, j in T.grid(2, 24, 20):
                    with T.block("B"):
                        vc, vi, vj = T.axis.remap("SSS", [c, i, j])
                        T.reads(A[vc, vi // 4 + vj // 4, vj // 2])
                        T.writes(B[vc, vi, vj])
                        B[vc, vi, vj] = A[vc, index_var_0[vi, vj], index_var_1[vj]]
        """
        block, func_name, name = self._block_target(block, "cache_index")
        func, names = index_cache.cache_index(self._mod[func_name], name, storage_scope, cse_thresh)
        args = [("block", block), ("storage_scope", storage_scope), ("cse_thresh", cse_thresh)]
        return self._apply("cache_index", args, func_name, func, blocks=names)

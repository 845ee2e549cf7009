"""Reindexing cache primitives of :class:`~tilelang.schedule.Schedule`:
reindex_cache_read, reindex_cache_write (the rewrites are in :mod:`.reindex_cache`)."""

from __future__ import annotations

from tilelang.schedule import reindex_cache
from tilelang.schedule.index_map import IndexMap


class ReindexPrimitives:
    """reindex_cache_read, reindex_cache_write (a mixin of
    :class:`~tilelang.schedule.Schedule`)."""

    def reindex_cache_read(self, block, read_buffer_index: int, storage_scope: str, index_map):
        """Makes ``block`` read buffer ``reads[read_buffer_index]`` through a cache in
        ``storage_scope`` whose indices are ``index_map`` of the block's iterators.

        The copy block runs over the block's own iterators (those the indices use),
        in the lowest loop shared with the buffer's producer, right before the block;
        only this block reads the cache.

        Parameters
        ----------
        block : BlockRV or str
            A block that reads the buffer at one point per iteration.
        read_buffer_index : int
            The position of the buffer in the block's reads.
        storage_scope : str
            The cache's storage scope (``"shared"``, ``"local"``, ...).
        index_map : callable or IndexMap
            A function of the block's iterators giving the cache's indices, e.g.
            ``lambda i, j: (j, i)``. It must use exactly the iterators the old indices
            use.

        Returns
        -------
        BlockRV
            The copy block (named after the buffer and the scope).

        Raises
        ------
        ScheduleError
            When the index is out of range, the access is not a single point, the
            index map uses other iterators than the access, the buffer has several
            producers or the block writes it too, or the scope is invalid.

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
            sch.reindex_cache_read("B", 0, "shared", lambda i, j: (j, i))

        After::

            @T.prim_func
            def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
                T.func_attr({"global_symbol": "main"})
                A_shared = T.alloc_buffer((8, 4), "float32", scope="shared")
                for i, j in T.grid(4, 8):
                    with T.block("A_shared"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        T.reads(A[vi, vj])
                        T.writes(A_shared[vj, vi])
                        A_shared[vj, vi] = A[vi, vj]
                for i, j in T.grid(4, 8):
                    with T.block("B"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        T.reads(A_shared[vj, vi])
                        T.writes(B[vi, vj])
                        B[vi, vj] = A_shared[vj, vi] * T.float32(2)
        """
        return self._reindex(
            "reindex_cache_read",
            "read_buffer_index",
            block,
            read_buffer_index,
            storage_scope,
            index_map,
        )

    def reindex_cache_write(self, block, write_buffer_index: int, storage_scope: str, index_map):
        """Makes ``block`` write buffer ``writes[write_buffer_index]`` into a cache in
        ``storage_scope`` whose indices are ``index_map`` of the block's iterators, and
        adds a block copying the cache back.

        The copy block runs over the block's own iterators (those the indices use), in
        the lowest loop shared with the buffer's consumers, right before the first of
        them (at the end of the scope when nothing reads the buffer there).

        Parameters
        ----------
        block : BlockRV or str
            The only block writing the buffer in its scope, at one point per iteration.
        write_buffer_index : int
            The position of the buffer in the block's writes.
        storage_scope : str
            The cache's storage scope (``"shared"``, ``"local"``, ...).
        index_map : callable or IndexMap
            A function of the block's iterators giving the cache's indices. It must use
            exactly the iterators the old indices use.

        Returns
        -------
        BlockRV
            The copy-back block (named after the buffer and the scope).

        Raises
        ------
        ScheduleError
            When the index is out of range, the access is not a single point, the
            index map uses other iterators than the access, another block writes the
            buffer, or the scope is invalid.

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
            sch.reindex_cache_write("B", 0, "local", lambda i, j: (j, i))

        After::

            @T.prim_func
            def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4, 8), "float32")):
                T.func_attr({"global_symbol": "main"})
                B_local = T.alloc_buffer((8, 4), "float32", scope="local")
                for i, j in T.grid(4, 8):
                    with T.block("B"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        T.reads(A[vi, vj])
                        T.writes(B_local[vj, vi])
                        B_local[vj, vi] = A[vi, vj] * T.float32(2)
                for i, j in T.grid(4, 8):
                    with T.block("B_local"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        T.reads(B_local[vj, vi])
                        T.writes(B[vi, vj])
                        B[vi, vj] = B_local[vj, vi]
        """
        return self._reindex(
            "reindex_cache_write",
            "write_buffer_index",
            block,
            write_buffer_index,
            storage_scope,
            index_map,
        )

    def _reindex(self, primitive, index_key, block, index, scope, index_map):
        block, func_name, name = self._block_target(block, primitive)
        rewrite = getattr(reindex_cache, primitive)
        func, new_name = rewrite(self._mod[func_name], name, index, scope, index_map)
        # the trace holds the map itself, which prints as a lambda (replayable text)
        imap = IndexMap.from_func(index_map, len(self.get(block).iter_vars))
        args = [("block", block), (index_key, index), ("storage_scope", scope), ("index_map", imap)]
        (rv,) = self._apply(primitive, args, func_name, func, blocks=[new_name])
        return rv

"""Primitives of :class:`~tilelang.schedule.Schedule` that change where a buffer
lives: cache_read, cache_write, set_scope. The rewrites are in :mod:`.cache` and :mod:`.set_scope`."""

from __future__ import annotations

from tilelang.schedule import cache
from tilelang.schedule.set_scope import set_scope as _set_scope
from tilelang.schedule.state import BlockRV


class CachePrimitives:
    """cache_read, cache_write, set_scope (a mixin of
    :class:`~tilelang.schedule.Schedule`, which provides the handle resolution and
    ``_apply``)."""

    def cache_read(
        self, block, read_buffer_index: int | str, storage_scope: str, consumer_blocks=None
    ) -> BlockRV:
        """Reads buffer ``reads[read_buffer_index]`` of ``block`` through a copy in
        ``storage_scope``.

        A new block ``<buffer>_<scope>`` copies the buffer into the cache, as TVM places
        it: in the innermost statement sequence holding the buffer's one writer and
        the first consumer after it, right before that consumer (inside a loop the two
        share, copying the writer's region for the current iteration), or first in
        the scope for an input (after a plain loop that stores to it). The consumers
        (``consumer_blocks``, or every block reading the buffer on the same side of
        its writer as ``block``), nested blocks included, read the cache; so do their
        ``match_buffer`` sources and ``access_ptr`` uses. Consumers reading before the
        writer get the copy first (the old values). A copy at the scope block (not in a loop) makes a cache
        of the copied region's shape, read at indices shifted by its start; the whole
        buffer is cached when a read may leave that region or it may pass the
        buffer's end. Move the copy with :meth:`compute_at`.

        Parameters
        ----------
        block : BlockRV or str
            The reading block.
        read_buffer_index : int or str
            The position of the buffer in the block's ``T.reads``, or its name.
        storage_scope : str
            The scope of the cache, e.g. ``"shared"``, ``"local"`` or ``"global.A_reg"``:
            one of TVM's ranks (global, shared, warp, local, wmma, metal, texture) or
            ``m16n8k16`` (mma.sync register fragments) with an optional ``.tag``.
        consumer_blocks : list of BlockRV or str, optional
            The blocks that read the cache (the others keep reading the buffer); by
            default the blocks reading it on the same side of its writer as
            ``block``. They must all read it after the writer, or all before it.

        Returns
        -------
        BlockRV
            The copy block.

        Raises
        ------
        ScheduleError
            When the index is out of range, the scope is not a valid scope, the buffer
            has several producer blocks, a plain loop stores to it after the block, or
            a consumer is outside the scope or on the wrong side of the writer.

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
            A_shared = sch.cache_read(sch.get_block("B"), 0, "shared")

        After::

            @T.prim_func
            def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
                T.func_attr({"global_symbol": "main"})
                A_shared = T.alloc_buffer((8,), "float32", scope="shared")
                for ax0 in range(8):
                    with T.block("A_shared"):
                        v0 = T.axis.remap("S", [ax0])
                        T.reads(A[v0])
                        T.writes(A_shared[v0])
                        A_shared[v0] = A[v0]
                for i in range(8):
                    with T.block("B"):
                        vi = T.axis.remap("S", [i])
                        T.reads(A_shared[vi])
                        T.writes(B[vi])
                        B[vi] = A_shared[vi] * T.float32(2)
        """
        return self._cache("cache_read", block, read_buffer_index, storage_scope, consumer_blocks)

    def cache_write(
        self, block, write_buffer_index: int | str, storage_scope: str, consumer_blocks=None
    ) -> BlockRV:
        """Writes buffer ``writes[write_buffer_index]`` of ``block`` through a cache in
        ``storage_scope``.

        The block writes a new buffer ``<buffer>_<scope>``, and a new block of the same
        name copies it into the original buffer, placed as cache_read places its copy:
        before the first block that reads the buffer (not one of ``consumer_blocks``,
        which read the cache instead), possibly inside a loop the two share, else at
        the end of the scope. It copies the region the block writes (under its nested
        blocks' ``T.where``) over the loops below that place. When the block reads
        the buffer before writing it (no ``T.init``), or a predicate may skip part of
        that region, a block ``<buffer>_<scope>_in`` first copies the region into the
        cache, so the result is unchanged. A copy at the scope block makes a cache of
        the region's shape, accessed at shifted indices (TVM's form), unless that
        region may pass the buffer's end. Move the copy with
        :meth:`reverse_compute_at`.

        Parameters
        ----------
        block : BlockRV or str
            The writing block.
        write_buffer_index : int or str
            The position of the buffer in the block's ``T.writes``, or its name.
        storage_scope : str
            The scope of the cache, e.g. ``"local"`` or ``"shared"`` (as cache_read).
        consumer_blocks : list of BlockRV or str, optional
            Blocks that read the cache instead of the buffer (the copy goes before
            the other readers only).

        Returns
        -------
        BlockRV
            The copy block.

        Raises
        ------
        ScheduleError
            When the index is out of range, the scope is not a valid scope, another
            block of the scope writes the buffer, or a plain (block-less) statement of
            its loop nest accesses it.

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
            B_local = sch.cache_write(sch.get_block("B"), 0, "local")

        After::

            @T.prim_func
            def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
                T.func_attr({"global_symbol": "main"})
                B_local = T.alloc_buffer((8,), "float32", scope="local")
                for i in range(8):
                    with T.block("B"):
                        vi = T.axis.remap("S", [i])
                        T.reads(A[vi])
                        T.writes(B_local[vi])
                        B_local[vi] = A[vi] * T.float32(2)
                for ax0 in range(8):
                    with T.block("B_local"):
                        v0 = T.axis.remap("S", [ax0])
                        T.reads(B_local[v0])
                        T.writes(B[v0])
                        B[v0] = B_local[v0]
        """
        return self._cache("cache_write", block, write_buffer_index, storage_scope, consumer_blocks)

    def _cache(self, primitive, block, index, scope, consumer_blocks=None):
        block, func_name, name = self._block_target(block, primitive)
        consumers = [
            self._block_target(c, primitive) for c in (consumer_blocks or [])
        ]  # (handle, function, name) each
        names = [c[2] for c in consumers]
        func, new_name = getattr(cache, primitive)(self._mod[func_name], name, index, scope, names)
        key = "read_buffer_index" if primitive == "cache_read" else "write_buffer_index"
        args = [("block", block), (key, index), ("storage_scope", scope)]
        if consumers:
            args.append(("consumer_blocks", [c[0] for c in consumers]))
        (rv,) = self._apply(primitive, args, func_name, func, blocks=[new_name])
        return rv

    def set_scope(self, block, buffer_index: int | str, storage_scope: str) -> None:
        """Changes the storage scope of buffer ``writes[buffer_index]`` of ``block``.

        Parameters
        ----------
        block : BlockRV or str
            The writing block.
        buffer_index : int or str
            The position of the buffer in the block's ``T.writes``, or its name; it
            must be allocated in the function (``T.alloc_buffer``), not a parameter.
        storage_scope : str
            The new scope, e.g. ``"shared"`` or ``"local"`` (as cache_read).

        Returns
        -------
        None

        Raises
        ------
        ScheduleError
            When the index is out of range, the scope is not a valid name, or the
            buffer is a function parameter.

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
            sch.set_scope(sch.get_block("B"), 0, "shared")

        After::

            @T.prim_func
            def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
                T.func_attr({"global_symbol": "main"})
                B = T.alloc_buffer((8,), "float32", scope="shared")
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
        """
        block, func_name, name = self._block_target(block, "set_scope")
        func = _set_scope(self._mod[func_name], name, buffer_index, storage_scope)
        args = [("block", block), ("buffer_index", buffer_index), ("storage_scope", storage_scope)]
        self._apply("set_scope", args, func_name, func)

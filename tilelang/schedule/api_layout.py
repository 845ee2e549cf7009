"""Primitives of :class:`~tilelang.schedule.Schedule` that restage or re-lay out a
buffer: reindex (rewrite in :mod:`.reindex`), storage_align (:mod:`.storage_align`),
annotate_buffer_access (:mod:`.buffer_access`), transform_layout (:mod:`.transform_layout`)."""

from __future__ import annotations

from tilelang.schedule import buffer_access
from tilelang.schedule import reindex as reindex_mod
from tilelang.schedule import storage_align as storage_align_mod
from tilelang.schedule import transform_layout as layout_mod
from tilelang.schedule.state import BlockRV


class LayoutPrimitives:
    """reindex, storage_align, annotate_buffer_access, transform_layout (a mixin of
    :class:`~tilelang.schedule.Schedule`)."""

    def reindex(self, block, buffer) -> BlockRV:
        """Stages a buffer the block reads or writes through a new buffer indexed by the
        block's own iterators, with a copy block before (a read) or after (a write).

        The block must access the buffer with one set of indices; the iterators those
        indices use (after simplification under the iterators' domains) index the new
        buffer ``<name>_reindex``, in the block's order, each over its domain. The copy
        block iterates over them, all as spatial iterators, in its own loop nest placed
        next to the block's in the same scope.

        Parameters
        ----------
        block : BlockRV or str
            The block accessing the buffer (a handle or a block name).
        buffer : tuple or str
            ``("read", i)`` or ``("write", i)`` (the i-th region of the block's reads or
            writes), or the buffer's name.

        Returns
        -------
        BlockRV
            The copy block.

        Raises
        ------
        ScheduleError
            When the buffer index is out of range or names no buffer of the block, the
            block's body does not access the buffer, or accesses it with different
            indices.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((8, 4), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i, j in T.grid(8, 4):
                    with T.block("B"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        T.reads(A[vj, vi])
                        T.writes(B[vi, vj])
                        B[vi, vj] = A[vj, vi] * T.float32(2)

        Schedule::

            sch = tilelang.Schedule(before)
            A_reindex = sch.reindex("B", ("read", 0))

        After::

            @T.prim_func
            def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((8, 4), "float32")):
                T.func_attr({"global_symbol": "main"})
                A_reindex = T.alloc_buffer((8, 4), "float32")
                for ax0, ax1 in T.grid(8, 4):
                    with T.block("A_reindex"):
                        vi, vj = T.axis.remap("SS", [ax0, ax1])
                        T.reads(A[vj, vi])
                        T.writes(A_reindex[vi, vj])
                        A_reindex[vi, vj] = A[vj, vi]
                for i, j in T.grid(8, 4):
                    with T.block("B"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        T.reads(A_reindex[vi, vj])
                        T.writes(B[vi, vj])
                        B[vi, vj] = A_reindex[vi, vj] * T.float32(2)
        """
        block, func_name, name = self._block_target(block, "reindex")
        func, copy = reindex_mod.reindex(self._mod[func_name], name, buffer)
        args = [("block", block), ("buffer", buffer)]
        (rv,) = self._apply("reindex", args, func_name, func, blocks=[copy])
        return rv

    def storage_align(self, block, buffer_index: int, axis: int, factor: int, offset: int):
        """Pads the strides of a buffer the block writes so that ``stride[axis] % factor
        == offset`` once allocations are compacted (e.g. an odd row stride of a shared
        tile, against bank conflicts).

        The request is kept as the block annotation ``buffer_dim_align`` (a list of
        ``[buffer_index, axis, factor, offset]``); a later request for the same buffer
        and axis replaces the earlier one. Lowering gives the buffer those strides.

        Parameters
        ----------
        block : BlockRV or str
            The block writing the buffer.
        buffer_index : int
            The index of the buffer in the block's writes.
        axis : int
            The dimension whose stride is padded (negative counts from the end).
        factor : int
            The alignment factor, positive.
        offset : int
            The wanted remainder of the stride modulo ``factor``.

        Returns
        -------
        None
            The block handle stays valid.

        Raises
        ------
        ScheduleError
            When the buffer index or the axis is out of range, the factor is not
            positive or the offset negative, the buffer is a function parameter, or
            the block's existing ``buffer_dim_align`` annotation is malformed.

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
            sch.storage_align("B", 0, axis=0, factor=16, offset=1)

        After::

            @T.prim_func
            def main(A: T.Buffer((4, 8), "float32"), C: T.Buffer((4, 8), "float32")):
                T.func_attr({"global_symbol": "main"})
                B = T.alloc_buffer((4, 8), "float32")
                for i, j in T.grid(4, 8):
                    with T.block("B"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        T.reads(A[vi, vj])
                        T.writes(B[vi, vj])
                        T.block_attr({"buffer_dim_align": [[0, 0, 16, 1]]})
                        B[vi, vj] = A[vi, vj] * T.float32(2)
                for i, j in T.grid(4, 8):
                    with T.block("C"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        T.reads(B[vi, vj])
                        T.writes(C[vi, vj])
                        C[vi, vj] = B[vi, vj] + T.float32(1)
        """
        block, func_name, name = self._block_target(block, "storage_align")
        func = storage_align_mod.storage_align(
            self._mod[func_name], name, buffer_index, axis, factor, offset
        )
        args = [("block", block), ("buffer_index", buffer_index), ("axis", axis),
                ("factor", factor), ("offset", offset)]  # fmt: skip
        self._apply("storage_align", args, func_name, func)

    def annotate_buffer_access(self, block, buffer_index: int, buf_type: str, gen_new_ranges):
        """Declares the region of a buffer the block reads or writes, replacing the one
        inferred from its body, and records it in the annotation
        ``explicit_read_region`` / ``explicit_write_region`` (the indices declared).

        The computation is unchanged; the region is what later primitives (compute_at,
        cache_read) see, e.g. the halo a stencil needs. Declaring a region smaller
        than what the body touches is the caller's error, as in TVM.

        Parameters
        ----------
        block : BlockRV or str
            The block.
        buffer_index : int
            The index of the buffer in the block's reads (or writes).
        buf_type : str
            ``"read"`` or ``"write"``.
        gen_new_ranges : callable
            Called with the block's iterators, returns one ``(begin, end)`` pair (end
            exclusive) per dimension of the buffer.

        Returns
        -------
        None
            The block handle stays valid.

        Raises
        ------
        ScheduleError
            When ``buf_type`` is neither, the index is out of range, or the function
            fails or does not give one pair per dimension.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i, j in T.grid(8, 8):
                    with T.block("B"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        T.reads(A[vi, vj])
                        T.writes(B[vi, vj])
                        B[vi, vj] = A[vi, vj] * T.float32(2)

        Schedule::

            sch = tilelang.Schedule(before)
            sch.annotate_buffer_access("B", 0, "read", lambda vi, vj: ((vi, vi + 2), (vj, vj + 1)))

        After::

            @T.prim_func
            def main(A: T.Buffer((8, 8), "float32"), B: T.Buffer((8, 8), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i, j in T.grid(8, 8):
                    with T.block("B"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        T.reads(A[vi:vi + 2, vj])
                        T.writes(B[vi, vj])
                        T.block_attr({"explicit_read_region": [0]})
                        B[vi, vj] = A[vi, vj] * T.float32(2)
        """
        block, func_name, name = self._block_target(block, "annotate_buffer_access")
        region_map = buffer_access.RegionMap(gen_new_ranges)
        func = buffer_access.annotate_buffer_access(
            self._mod[func_name], name, buffer_index, buf_type, region_map
        )
        args = [("block", block), ("buffer_index", buffer_index), ("buf_type", buf_type),
                ("gen_new_ranges", region_map)]  # fmt: skip
        self._apply("annotate_buffer_access", args, func_name, func)

    def transform_layout(self, block, buffer, index_map, pad_value=None) -> None:
        """Stores a buffer in a new layout: ``index_map`` takes one index per dimension
        and returns the new indices; every access (loads, stores, regions, the
        allocation or the parameter) is rewritten through it.

        The new shape is the range of each new index (each starts at 0). The map must
        be one-to-one, which is checked over every element of the buffer. When the new
        shape has more elements, the extra ones are padding: ``pad_value`` (a number,
        or a function of the new indices) is required and a block writing it into the
        padding (``T.where`` of the inverted map; the whole buffer when the map does
        not invert) runs first where the buffer is allocated.

        Parameters
        ----------
        block : BlockRV or str
            A block accessing the buffer.
        buffer : tuple or str
            ``("read", i)``, ``("write", i)`` or the buffer's name.
        index_map : callable
            ``lambda i, j: (i // 4, j, i % 4)``: old indices to new ones.
        pad_value : number, PrimExpr or callable, optional
            The value of padding elements.

        Returns
        -------
        None
            Every handle stays valid.

        Raises
        ------
        ScheduleError
            When the buffer is not found, the map fails, a new index cannot be bounded
            or does not start at 0, the map is not one-to-one (or cannot be checked:
            symbolic or huge shapes), there is padding without ``pad_value`` or on a
            function parameter, or a ``T.match_buffer`` views the buffer.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((8, 4), "float32"), C: T.Buffer((8, 4), "float32")):
                T.func_attr({"global_symbol": "main"})
                B = T.alloc_buffer((8, 4), "float32")
                for i, j in T.grid(8, 4):
                    with T.block("B"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        T.reads(A[vi, vj])
                        T.writes(B[vi, vj])
                        B[vi, vj] = A[vi, vj] * T.float32(2)
                for i, j in T.grid(8, 4):
                    with T.block("C"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        T.reads(B[vi, vj])
                        T.writes(C[vi, vj])
                        C[vi, vj] = B[vi, vj] + T.float32(1)

        Schedule::

            sch = tilelang.Schedule(before)
            sch.transform_layout("B", ("write", 0), lambda i, j: (i // 4, j, i % 4))

        After::

            @T.prim_func
            def main(A: T.Buffer((8, 4), "float32"), C: T.Buffer((8, 4), "float32")):
                T.func_attr({"global_symbol": "main"})
                B = T.alloc_buffer((2, 4, 4), "float32")
                for i, j in T.grid(8, 4):
                    with T.block("B"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        T.reads(A[vi, vj])
                        T.writes(B[vi // 4, vj, vi % 4])
                        B[vi // 4, vj, vi % 4] = A[vi, vj] * T.float32(2)
                for i, j in T.grid(8, 4):
                    with T.block("C"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        T.reads(B[vi // 4, vj, vi % 4])
                        T.writes(C[vi, vj])
                        C[vi, vj] = B[vi // 4, vj, vi % 4] + T.float32(1)
        """
        block, func_name, name = self._block_target(block, "transform_layout")
        region_map = buffer_access.RegionMap(index_map)
        func = layout_mod.transform_layout(
            self._mod[func_name], name, buffer, region_map, pad_value
        )
        args = [("block", block), ("buffer", buffer), ("index_map", region_map),
                ("pad_value", pad_value)]  # fmt: skip
        self._apply("transform_layout", args, func_name, func)

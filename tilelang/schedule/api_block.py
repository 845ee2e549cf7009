"""Primitives of :class:`~tilelang.schedule.Schedule` that rewrite one block's
signature: reorder_block_iter_var, unsafe_set_dtype (rewrites in
:mod:`.block_iters`), unsafe_hide_buffer_access (:mod:`.unit_loop`),
transform_block_layout (:mod:`.transform_block_layout`)."""

from __future__ import annotations

from tilelang.schedule import block_iters, unit_loop
from tilelang.schedule import transform_block_layout as block_layout
from tilelang.schedule.index_map import IndexMap


class BlockPrimitives:
    """reorder_block_iter_var, unsafe_set_dtype, unsafe_hide_buffer_access,
    transform_block_layout (a mixin of :class:`~tilelang.schedule.Schedule`)."""

    def reorder_block_iter_var(self, block, new_order) -> None:
        """Reorders the iterators of a block (with their bindings); the computation
        is unchanged.

        Parameters
        ----------
        block : BlockRV or str
            The block.
        new_order : list of int
            The new order as positions of the current iterators: a permutation of
            ``0 .. n - 1``.

        Returns
        -------
        None
            The block handle stays valid.

        Raises
        ------
        ScheduleError
            When ``new_order`` is not a permutation of the iterators' positions
            (too short, out of range, or repeated).

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4,), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i, k in T.grid(4, 8):
                    with T.block("B"):
                        vi, vk = T.axis.remap("SR", [i, k])
                        T.reads(B[vi], A[vi, vk])
                        T.writes(B[vi])
                        B[vi] = B[vi] + A[vi, vk]

        Schedule::

            sch = tilelang.Schedule(before)
            sch.reorder_block_iter_var("B", [1, 0])

        After::

            @T.prim_func
            def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4,), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i, k in T.grid(4, 8):
                    with T.block("B"):
                        vk, vi = T.axis.remap("RS", [k, i])
                        T.reads(B[vi], A[vi, vk])
                        T.writes(B[vi])
                        B[vi] = B[vi] + A[vi, vk]
        """
        block, func_name, name = self._block_target(block, "reorder_block_iter_var")
        func = block_iters.reorder_block_iter_var(self._mod[func_name], name, new_order)
        args = [("block", block), ("new_order", list(new_order))]
        self._apply("reorder_block_iter_var", args, func_name, func)

    def unsafe_set_dtype(self, block, buffer_index: int, dtype: str) -> None:
        """Changes the element type of an intermediate buffer the block writes: values
        stored into it are cast to ``dtype`` and values loaded from it cast back to
        the old type. It is unsafe as precision may be lost (the caller decides).

        Parameters
        ----------
        block : BlockRV or str
            The block writing the buffer.
        buffer_index : int
            The index of the buffer in the block's writes.
        dtype : str
            The new element type.

        Returns
        -------
        None
            The block handle stays valid.

        Raises
        ------
        ScheduleError
            When the buffer index is out of range, the buffer is a function parameter
            (its type is the caller's), or ``dtype`` is not a type.

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
            sch.unsafe_set_dtype("B", 0, "float16")

        After::

            @T.prim_func
            def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
                T.func_attr({"global_symbol": "main"})
                B = T.alloc_buffer((8,), "float16")
                for i in range(8):
                    with T.block("B"):
                        vi = T.axis.remap("S", [i])
                        T.reads(A[vi])
                        T.writes(B[vi])
                        B[vi] = T.Cast("float16", A[vi] * T.float32(2))
                for i in range(8):
                    with T.block("C"):
                        vi = T.axis.remap("S", [i])
                        T.reads(B[vi])
                        T.writes(C[vi])
                        C[vi] = T.Cast("float32", B[vi]) + T.float32(1)
        """
        block, func_name, name = self._block_target(block, "unsafe_set_dtype")
        func = block_iters.unsafe_set_dtype(self._mod[func_name], name, buffer_index, dtype)
        args = [("block", block), ("buffer_index", buffer_index), ("dtype", str(dtype))]
        self._apply("unsafe_set_dtype", args, func_name, func)

    def unsafe_hide_buffer_access(self, block, buf_type: str, buf_index_array) -> None:
        """Removes regions from a block's reads or writes (its body is unchanged), e.g.
        an index buffer of a sparse kernel that would stop tensorize from matching.

        Unsafe: dependence analysis no longer sees the hidden accesses, so later
        primitives may reorder what depends on them; the caller answers for it.

        Parameters
        ----------
        block : BlockRV or str
            The block.
        buf_type : str
            ``"read"`` or ``"write"``.
        buf_index_array : list of int
            The indices, in the block's reads (or writes), of the regions to hide.

        Returns
        -------
        None
            The block handle stays valid.

        Raises
        ------
        ScheduleError
            When ``buf_type`` is neither or an index is out of range.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((8,), "float32"), idx: T.Buffer((8,), "int32"), B: T.Buffer((8,), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i in range(8):
                    with T.block("B"):
                        vi = T.axis.remap("S", [i])
                        T.reads(A[0:8], idx[vi])
                        T.writes(B[vi])
                        B[vi] = A[idx[vi]]

        Schedule::

            sch = tilelang.Schedule(before)
            sch.unsafe_hide_buffer_access("B", "read", [1])

        After::

            @T.prim_func
            def main(A: T.Buffer((8,), "float32"), idx: T.Buffer((8,), "int32"), B: T.Buffer((8,), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i in range(8):
                    with T.block("B"):
                        vi = T.axis.remap("S", [i])
                        T.reads(A[0:8])
                        T.writes(B[vi])
                        B[vi] = A[idx[vi]]
        """
        block, func_name, name = self._block_target(block, "unsafe_hide_buffer_access")
        func = unit_loop.unsafe_hide_buffer_access(
            self._mod[func_name], name, buf_type, list(buf_index_array)
        )
        args = [("block", block), ("buf_type", buf_type),
                ("buf_index_array", list(buf_index_array))]  # fmt: skip
        self._apply("unsafe_hide_buffer_access", args, func_name, func)

    def transform_block_layout(self, block, index_map) -> None:
        """Remaps the block's iteration space by ``index_map``: one new iterator (and
        one new loop) per output of the map, the body reading the old iterators
        through the inverse map. The loops above the block are replaced.

        Parameters
        ----------
        block : BlockRV or str
            A block whose bindings are its loops' variables, one each, in order, under
            loops that start at 0 and hold only the block's nest.
        index_map : callable or IndexMap
            A bijection of the block's iterators, e.g. ``lambda i, j: (i * 8 + j,)``.

        Returns
        -------
        None

        Raises
        ------
        ScheduleError
            When the block has no loops, a loop holds more than the nest or does not
            start at 0, the bindings are not the loops' variables in order, the block
            has a predicate, the map does not apply, a new iterator does not range
            from 0, the map is not a bijection, or a new iterator mixes spatial and
            reduction iterators.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((8, 4), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i, j in T.grid(4, 8):
                    with T.block("B"):
                        vi, vj = T.axis.remap("SS", [i, j])
                        T.reads(A[vi, vj])
                        T.writes(B[vj, vi])
                        B[vj, vi] = A[vi, vj] * T.float32(2)

        Schedule::

            sch = tilelang.Schedule(before)
            sch.transform_block_layout("B", lambda i, j: (j, i))

        After::

            @T.prim_func
            def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((8, 4), "float32")):
                T.func_attr({"global_symbol": "main"})
                for ax0, ax1 in T.grid(8, 4):
                    with T.block("B"):
                        v0, v1 = T.axis.remap("SS", [ax0, ax1])
                        T.reads(A[v1, v0])
                        T.writes(B[v0, v1])
                        B[v0, v1] = A[v1, v0] * T.float32(2)
        """
        block, func_name, name = self._block_target(block, "transform_block_layout")
        func = block_layout.transform_block_layout(self._mod[func_name], name, index_map)
        ivs = self.get(block).iter_vars
        imap = IndexMap.from_func(index_map, len(ivs), ivs[0].var.dtype if ivs else "int32")
        args = [("block", block), ("index_map", imap)]
        self._apply("transform_block_layout", args, func_name, func)

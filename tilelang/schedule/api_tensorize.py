"""The tensorization primitive of :class:`~tilelang.schedule.Schedule`: tensorize
(match in :mod:`.tensorize_match`, rewrite in :mod:`.tensorize`; intrinsics are
registered with :class:`~tilelang.schedule.tensor_intrin.TensorIntrin`)."""

from __future__ import annotations

from tilelang.schedule import tensorize as tensorize_mod
from tilelang.schedule.state import LoopRV


class TensorizePrimitives:
    """tensorize (a mixin of :class:`~tilelang.schedule.Schedule`)."""

    def tensorize(self, block_or_loop, tensor_intrin: str, preserve_unit_iters: bool = True):
        r"""Replaces a block, or the subtree under a loop (blockized first), by the
        implementation of the registered tensor intrinsic ``tensor_intrin``.

        The block must match the intrinsic's description: the same loops, iterator
        kinds, bindings and computation, with each region of the block having the
        extents of the description's region (buffers may differ in shape, strides,
        offsets, but not in dtype or scope). The block keeps its iterators, regions
        and init; its body becomes the implementation's, whose buffers become
        ``T.match_buffer`` views of the matched regions (their strides and element
        offsets are bound when lowering, so they reach ``T.call_extern`` arguments
        and ``access_ptr``s).

        Parameters
        ----------
        block_or_loop : BlockRV or LoopRV
            The block to replace, or the loop whose subtree is blockized and replaced.
        tensor_intrin : str
            The name under which the intrinsic was registered
            (``tilelang.tir.TensorIntrin.register``).
        preserve_unit_iters : bool
            Passed to the blockize of a loop; it does not change the result.

        Returns
        -------
        None
            The handle of a tensorized block stays valid.

        Raises
        ------
        ScheduleError
            When the intrinsic is not registered, or the block does not match its
            description (the message says which part differs: a loop extent, a
            buffer's dtype or scope, an index, an expression), or a view cannot
            stand for its region (a dense view over a strided region, an element
            offset that is not a multiple of the view's ``offset_factor``).

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((2, 16), "float32"), B: T.Buffer((16,), "float32"), C: T.Buffer((2,), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i, k in T.grid(2, 16):
                    with T.block("dot"):
                        vi, vk = T.axis.remap("SR", [i, k])
                        T.reads(C[vi], A[vi, vk], B[vk])
                        T.writes(C[vi])
                        C[vi] = C[vi] + A[vi, vk] * B[vk]

        Schedule::

            sch = tilelang.Schedule(before)
            from tilelang.intrinsics.reference import DOT16_F32_INTRIN
            i, k = sch.get_loops("dot")
            sch.tensorize(k, DOT16_F32_INTRIN)

        After::

            @T.prim_func
            def main(A: T.Buffer((2, 16), "float32"), B: T.Buffer((16,), "float32"), C: T.Buffer((2,), "float32")):
                T.func_attr({"global_symbol": "main"})
                for i in range(2):
                    with T.block("dot_o"):
                        vi_o = T.axis.spatial(2, i)
                        vk_o = T.axis.reduce(1, 0)
                        T.reads(C[vi_o], A[vi_o, 0:16], B[0:16])
                        T.writes(C[vi_o])
                        T.block_attr({"pragma_import_c": "int tl_dot16_f32(float *c, const float *a, const float *b) {\n  float s = c[0];\n  for (int k = 0; k < 16; ++k) s += a[k] * b[k];\n  c[0] = s;\n  return 0;\n}\n"})
                        A_1 = T.match_buffer(A[vi_o, 0:16], (16,), "float32", offset_factor=1)
                        B_1 = T.match_buffer(B[0:16], (16,), "float32", offset_factor=1)
                        C_1 = T.match_buffer(C[vi_o], (1,), "float32", offset_factor=1)
                        T.evaluate(T.call_extern("int32", "tl_dot16_f32", T.tvm_access_ptr(T.type_annotation("float32"), C_1.data, C_1.elem_offset, 1, 3), T.tvm_access_ptr(T.type_annotation("float32"), A_1.data, A_1.elem_offset, 16, 1), T.tvm_access_ptr(T.type_annotation("float32"), B_1.data, B_1.elem_offset, 16, 1)))
        """
        if isinstance(block_or_loop, str):
            block_or_loop = self.get_block(block_or_loop)
        if isinstance(block_or_loop, LoopRV):
            func_name, target = self._loop(block_or_loop, "tensorize")
        else:
            func_name, target = self._block(block_or_loop, "tensorize")
        func, name = tensorize_mod.tensorize(
            self._mod[func_name], target, tensor_intrin, preserve_unit_iters
        )
        args = [
            ("block_or_loop", block_or_loop),
            ("tensor_intrin", tensor_intrin),
            ("preserve_unit_iters", preserve_unit_iters),
        ]
        self._apply("tensorize", args, func_name, func)

"""Primitives of :class:`~tilelang.schedule.Schedule` that fuse two blocks into one:
fuse_reduction_epilogue (rewrite in :mod:`.epilogue_fusion`)."""

from __future__ import annotations

from tilelang.schedule import epilogue_fusion


class FusionPrimitives:
    """fuse_reduction_epilogue (a mixin of :class:`~tilelang.schedule.Schedule`)."""

    def fuse_reduction_epilogue(self, reduction_block, epilogue_block) -> None:
        """Folds a bias addition that follows a reduction into the reduction: its init
        becomes the bias and it writes the epilogue's output; the epilogue block goes.

        Only ``out = temp + bias`` is folded (for floating point the bias is then
        added first, a reassociation). ReLU or clipping epilogues, which TVM applies
        after every reduction step, are refused: that computes something else.

        Parameters
        ----------
        reduction_block : BlockRV or str
            The reduction ``temp[x] = temp[x] + value`` with init 0.
        epilogue_block : BlockRV or str
            The block ``out[y] = temp[y] + bias``, the only reader of ``temp``.

        Returns
        -------
        None
            The reduction's handle stays valid; the epilogue's is gone.

        Raises
        ------
        ScheduleError
            When the reduction or the epilogue does not have that form, ``temp`` has
            another reader, the epilogue's iterators do not index ``temp`` directly or
            read it elsewhere than the reduction writes, the dtypes differ, or a block
            between them uses the output or writes what the epilogue reads.

        Example
        -------
        Before::

            @T.prim_func
            def main(A: T.Buffer((4, 8), "float32"), C: T.Buffer((4,), "float32"), D: T.Buffer((4,), "float32")):
                T.func_attr({"global_symbol": "main"})
                temp = T.alloc_buffer((4,), "float32")
                for i, k in T.grid(4, 8):
                    with T.block("sum"):
                        vi, vk = T.axis.remap("SR", [i, k])
                        T.reads(temp[vi], A[vi, vk])
                        T.writes(temp[vi])
                        with T.init():
                            temp[vi] = T.float32(0)
                        temp[vi] = temp[vi] + A[vi, vk]
                for i in range(4):
                    with T.block("bias"):
                        vi = T.axis.remap("S", [i])
                        T.reads(temp[vi], C[vi])
                        T.writes(D[vi])
                        D[vi] = temp[vi] + C[vi]

        Schedule::

            sch = tilelang.Schedule(before)
            sch.fuse_reduction_epilogue("sum", "bias")

        After::

            @T.prim_func
            def main(A: T.Buffer((4, 8), "float32"), C: T.Buffer((4,), "float32"), D: T.Buffer((4,), "float32")):
                T.func_attr({"global_symbol": "main"})
                temp = T.alloc_buffer((4,), "float32")
                for i, k in T.grid(4, 8):
                    with T.block("sum"):
                        vi, vk = T.axis.remap("SR", [i, k])
                        T.reads(C[vi], A[vi, vk])
                        T.writes(D[vi])
                        with T.init():
                            D[vi] = C[vi]
                        D[vi] = D[vi] + A[vi, vk]
        """
        reduction_block, func_name, red = self._block_target(
            reduction_block, "fuse_reduction_epilogue"
        )
        epilogue_block, _, epi = self._block_target(epilogue_block, "fuse_reduction_epilogue")
        func = epilogue_fusion.fuse_reduction_epilogue(self._mod[func_name], red, epi)
        args = [("reduction_block", reduction_block), ("epilogue_block", epilogue_block)]
        self._apply("fuse_reduction_epilogue", args, func_name, func)

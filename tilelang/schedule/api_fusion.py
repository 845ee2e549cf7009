"""Primitives of :class:`~tilelang.schedule.Schedule` that fuse two blocks into one:
fuse_reduction_epilogue (rewrite in :mod:`.epilogue_fusion`)."""

from __future__ import annotations

from tilelang.schedule import epilogue_fusion


class FusionPrimitives:
    """fuse_reduction_epilogue (a mixin of :class:`~tilelang.schedule.Schedule`)."""

    def fuse_reduction_epilogue(self, reduction_block, epilogue_block) -> None:
        """Fuses an epilogue into the reduction it follows: the reduction writes the
        epilogue's output directly, and the epilogue block goes.

        A bias the epilogue adds to the sum becomes the reduction's init (for floating
        point the bias is then added first, a reassociation). The rest of the epilogue
        (ReLU ``max(x, 0)``, clipping ``min(max(x, lo), hi)``, any expression of the
        one load of ``temp``) acts on the finished sum, on the reduction's last step:
        ``out = T.if_then_else(vk == last, f(out + value), out + value)``. TVM applies
        ReLU and clipping after every step instead, which computes something else
        than the two blocks did, so tilelang keeps the result.

        Parameters
        ----------
        reduction_block : BlockRV or str
            The reduction ``temp[x] = temp[x] + value`` with init 0.
        epilogue_block : BlockRV or str
            The block ``out[y] = f(temp[y] + bias)`` (or ``f(temp[y])``), the only
            reader of ``temp``, reading it once.

        Returns
        -------
        None
            The reduction's handle stays valid; the epilogue's is gone.

        Raises
        ------
        ScheduleError
            When the reduction or the epilogue does not have that form, ``temp`` has
            another reader, the epilogue's iterators do not index ``temp`` directly or
            read it elsewhere than the reduction writes, the epilogue reads its own
            output, the dtypes differ, a reduction iterator's last value may not be its
            last step (a binding such as ``7 - k``), or a block between them uses the
            output or writes what the epilogue reads.

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

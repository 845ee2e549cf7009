"""``tvm_thread_allreduce`` in CUDA: warp shuffles, then one exchange through shared memory.

:mod:`tilelang.transform.lower_cross_thread_reduction` leaves, for each cross-thread
reduction, ``T.attr(reducer, "reduce_scope", 0)`` over ``T.tvm_thread_allreduce(1,
value, True, dest, tx)``. It prints as ::

    dest = tl_block_allreduce<T>(value, [](float x, float y) { return (x + y); }, 0.0f);

with the reducer's combiner as the lambda and its identity, ``T`` the extent of the
``threadIdx.x`` loop, which must be the whole block (``blockDim.x == T``, no
``threadIdx.y``/``z``): the helper synchronises every thread of the block. It combines
within each warp by ``__shfl_down_sync`` (halving offsets 16..1; lanes past the last
thread of a partial warp take no part), then, for more than one warp, lane 0 of each
warp leaves its value in a 32-entry shared array, warp 0 combines those the same way
and every thread reads the result back; a closing barrier lets the next reduction reuse
the array. Values narrower than 32 bits are shuffled as the bits of a word.
"""

from __future__ import annotations

from tilelang.errors import BuildError
from tilelang.ir import expr as E
from tilelang.ir.comm_reducer import CommReducer

HELPER = r"""// a value narrower than 32 bits (int8, bool, half...) moves as the bits of a word
// DOWN: __shfl_down_sync (arg: the offset), else __shfl_sync (arg: the source lane)
template <bool DOWN, typename T>
static __device__ __forceinline__ T tl_shfl(unsigned mask, T value, int arg) {
  if constexpr (sizeof(T) < 4) {
    unsigned bits = 0;
    memcpy(&bits, &value, sizeof(T));
    bits = DOWN ? __shfl_down_sync(mask, bits, arg, 32) : __shfl_sync(mask, bits, arg, 32);
    memcpy(&value, &bits, sizeof(T));
    return value;
  } else {
    return DOWN ? __shfl_down_sync(mask, value, arg, 32) : __shfl_sync(mask, value, arg, 32);
  }
}
// the combination of `value` over the `count` lanes of a warp starting at lane 0
template <typename T, typename F>
static __device__ __forceinline__ T tl_warp_reduce(T value, F combine, int count) {
  unsigned mask = count >= 32 ? 0xffffffffu : ((1u << count) - 1u);
  int lane = (int)threadIdx.x % 32;
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) {
    T other = tl_shfl<true>(mask, value, offset);
    if (lane + offset < count) value = combine(value, other);
  }
  return value;  // complete in lane 0
}
// `value` of every thread of the block (THREADS == blockDim.x) combined; every
// thread gets the result
template <int THREADS, typename T, typename F>
static __device__ __forceinline__ T tl_block_allreduce(T value, F combine, T identity) {
  int lane = (int)threadIdx.x % 32, warp = (int)threadIdx.x / 32;
  int in_warp = THREADS - warp * 32 < 32 ? THREADS - warp * 32 : 32;
  value = tl_warp_reduce(value, combine, in_warp);
  if constexpr (THREADS <= 32) {
    return tl_shfl<false>(THREADS >= 32 ? 0xffffffffu : ((1u << THREADS) - 1u), value, 0);
  } else {
    constexpr int WARPS = (THREADS + 31) / 32;
    __shared__ T partial[32];
    if (lane == 0) partial[warp] = value;
    __syncthreads();
    if (warp == 0) {
      value = tl_warp_reduce(lane < WARPS ? partial[lane] : identity, combine, 32);
      __syncwarp();
      if (lane == 0) partial[0] = value;
    }
    __syncthreads();
    T result = partial[0];
    __syncthreads();  // the array is free for the next reduction
    return result;
  }
}"""


def print_allreduce(printer, call: E.Call, reducer: CommReducer | None, block) -> str:
    """The statement one ``tvm_thread_allreduce`` prints as (``block``: the kernel's
    ``(x, y, z)`` thread counts; the loop extents by loop variable are the printer's)."""
    if reducer is None:
        raise BuildError("T.tvm_thread_allreduce outside T.attr(..., 'reduce_scope', ...)")
    count, value, condition, dest, *threads = call.args
    if not (isinstance(count, E.IntImm) and count.value == 1 and len(reducer.lhs) == 1):
        raise BuildError("the CUDA backend lowers allreduces of one value only")
    if not (isinstance(condition, E.IntImm) and condition.value == 1):
        raise BuildError("the CUDA backend lowers allreduces whose condition is True only")
    if len(threads) != 1 or not isinstance(threads[0], E.Var):
        raise BuildError("the CUDA backend lowers allreduces over one threadIdx.x loop only")
    bound = printer.thread_loops.get(id(threads[0]))
    if bound is None or bound[0] != "threadIdx.x":
        raise BuildError(
            f"T.tvm_thread_allreduce over {threads[0].name}: not a loop bound to threadIdx.x"
        )
    extent = bound[1]
    if not isinstance(extent, int) or tuple(block) != (extent, 1, 1):
        raise BuildError(
            f"T.tvm_thread_allreduce over {threads[0].name} ({extent} threads) needs the "
            f"whole thread block to take part: the kernel's block is {tuple(block)}, "
            "not (threads, 1, 1)"
        )
    if not isinstance(dest, E.BufferLoad):
        raise BuildError("T.tvm_thread_allreduce: the result must go to a buffer element")
    printer.uses_allreduce = True
    kind = printer.type_name(reducer.lhs[0].dtype)
    x, y = (printer.names.define(v) for v in (reducer.lhs[0], reducer.rhs[0]))
    combine = printer._strip(printer.expr(reducer.result[0]))
    identity = printer.expr(reducer.identity_element[0])
    lam = f"[](const {kind} {x}, const {kind} {y}) {{ return {combine}; }}"
    return (
        f"{printer.expr(dest)} = tl_block_allreduce<{extent}>("
        f"({kind}){printer._strip(printer.expr(value))}, {lam}, ({kind}){identity});"
    )


__all__ = ["HELPER", "print_allreduce"]

"""The C++ the host emulation (:mod:`tilelang.testing.cuda_emulation`) puts around
generated CUDA: host stand-ins for CUDA's words, bfloat16 and half, the threaded
block (barriers, warp shuffles) and the tensor-core helpers.

The tensor-core stand-ins (:data:`TENSOR_CORES`) replace the backend's helpers whose
bodies are inline PTX (``backends/cuda/mma.py``, ``async_copy.py``) with what the
instructions do, written from PTX's definitions: ``cp.async`` copies at once (a
valid schedule of an asynchronous copy: the commits and waits then have nothing to
wait for); ``ldmatrix.x4`` gives lane ``l``, in register ``q``, elements ``(l / 4,
2 (l % 4) + e)`` of 8x8 matrix ``q`` (``(2 (l % 4) + e, l / 4)`` with ``.trans``), whose
row ``r`` lane ``8 q + r`` addressed; ``mma.m16n8k16`` computes each lane's
accumulator values from the warp's A and B registers located by the fragment layouts
(A ``(i, k)``: lane ``4 (i % 8) + (k % 8) / 2``, register ``k % 2 + 2 (i / 8) + 4 (k / 8)``;
B ``(k, j)``: lane ``4 (j % 8) + (k % 8) / 2``, register ``k % 2 + 2 (k / 8) + 4 (j / 8)``;
C ``(g + 8 ((r % 4) / 2), 8 (r / 4) + 2 t + r % 2)``). The lanes read one another's
registers between two warp barriers.
"""

from __future__ import annotations

import re

PRELUDE = r"""
#include <stdint.h>
#include <string.h>
struct tl_dim3 { unsigned int x, y, z; };
static tl_dim3 threadIdx, blockIdx;
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(n)
#define __syncthreads() do {} while (0)
#define __popcll __builtin_popcountll
#define __align__(n) __attribute__((aligned(n)))
struct alignas(8) uint2 { unsigned int x, y; };
struct alignas(16) uint4 { unsigned int x, y, z, w; };
struct alignas(8) int2 { int x, y; };
struct alignas(16) int4 { int x, y, z, w; };
struct alignas(8) float2 { float x, y; };
struct alignas(16) float4 { float x, y, z, w; };
static void tl_set_index(unsigned bx, unsigned by, unsigned bz,
                             unsigned tx, unsigned ty, unsigned tz) {
  blockIdx.x = bx; blockIdx.y = by; blockIdx.z = bz;
  threadIdx.x = tx; threadIdx.y = ty; threadIdx.z = tz;
}
"""

BF16 = r"""
#include <string.h>
#define TL_HOST_BF16
struct __nv_bfloat16 { uint16_t bits; };
static inline float __bfloat162float(__nv_bfloat16 h) {
  uint32_t word = (uint32_t)h.bits << 16; float f; memcpy(&f, &word, 4); return f;
}
static inline __nv_bfloat16 __float2bfloat16_rn(float f) {
  uint32_t word; memcpy(&word, &f, 4); __nv_bfloat16 h;
  if ((word & 0x7fffffffu) > 0x7f800000u) { h.bits = (uint16_t)((word >> 16) | 0x40u); return h; }
  word += 0x7fffu + ((word >> 16) & 1u);
  h.bits = (uint16_t)(word >> 16); return h;
}
"""

THREADED = r"""
#include <barrier>
#include <memory>
#include <thread>
#include <vector>
#undef __syncthreads
#define __shared__ static
#define __syncthreads() tl_block->arrive_and_wait()
static thread_local tl_dim3 tl_thread_index, tl_block_index;
#define threadIdx tl_thread_index
#define blockIdx tl_block_index
static tl_dim3 blockDim;
static std::barrier<>* tl_block;
static std::barrier<>* tl_warps[32];
static unsigned char tl_slots[32][32][8];
static inline int tl_linear_thread() {
  return (int)(threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z));
}
static inline void __syncwarp(unsigned mask = 0xffffffffu) {
  (void)mask;
  tl_warps[tl_linear_thread() / 32]->arrive_and_wait();
}
template <typename T>
static T tl_exchange(T value, int from) {
  static_assert(sizeof(T) <= 8, "a shuffle moves at most 8 bytes");
  int warp = tl_linear_thread() / 32, lane = tl_linear_thread() % 32;
  memcpy(tl_slots[warp][lane], &value, sizeof(T));
  __syncwarp();
  memcpy(&value, tl_slots[warp][from], sizeof(T));
  __syncwarp();
  return value;
}
template <typename T>
static T __shfl_down_sync(unsigned, T value, int offset, int width = 32) {
  int lane = tl_linear_thread() % 32;
  return tl_exchange(value, lane % width + offset < width ? lane + offset : lane);
}
template <typename T>
static T __shfl_sync(unsigned, T value, int from, int width = 32) {
  int lane = tl_linear_thread() % 32;
  return tl_exchange(value, lane - lane % width + from % width);
}
// the threads of one block, each a host thread, with the block's barriers
template <typename F>
static void tl_run_block(unsigned bx, unsigned by, unsigned bz, tl_dim3 block, F kernel) {
  blockDim = block;
  int count = (int)(block.x * block.y * block.z);
  std::barrier<> all(count);
  tl_block = &all;
  std::vector<std::unique_ptr<std::barrier<>>> warps;
  for (int w = 0; w * 32 < count; ++w) {
    warps.push_back(std::make_unique<std::barrier<>>(count - 32 * w < 32 ? count - 32 * w : 32));
    tl_warps[w] = warps.back().get();
  }
  std::vector<std::thread> threads;
  for (unsigned tz = 0; tz < block.z; ++tz)
    for (unsigned ty = 0; ty < block.y; ++ty)
      for (unsigned tx = 0; tx < block.x; ++tx)
        threads.emplace_back([=] {
          tl_block_index = {bx, by, bz};
          tl_thread_index = {tx, ty, tz};
          kernel();
        });
  for (auto& t : threads) t.join();
}
"""


HALF = r"""
#define TL_HOST_HALF
typedef _Float16 half;
static inline half __float2half(float f) { return (half)f; }
static inline float __half2float(half h) { return (float)h; }
static inline bool __hisnan(half h) { return h != h; }
"""

#: ``nvcuda::wmma`` on the host: the distribution of a fragment over the lanes is the
#: implementation's (CUDA leaves it unspecified), so here every thread of the warp
#: holds the whole tile; loads, stores and products are the whole tile's
WMMA = r"""
#include <type_traits>
namespace nvcuda { namespace wmma {
struct matrix_a {}; struct matrix_b {}; struct accumulator {};
struct row_major {}; struct col_major {};
enum layout_t { mem_row_major, mem_col_major };
template <typename Use, int M, int N, int K> struct tl_shape;
template <int M, int N, int K> struct tl_shape<matrix_a, M, N, K> { enum { R = M, C = K }; };
template <int M, int N, int K> struct tl_shape<matrix_b, M, N, K> { enum { R = K, C = N }; };
template <int M, int N, int K> struct tl_shape<accumulator, M, N, K> { enum { R = M, C = N }; };
template <typename Use, int M, int N, int K, typename T, typename Layout = void>
struct fragment {
  enum { R = tl_shape<Use, M, N, K>::R, C = tl_shape<Use, M, N, K>::C };
  T x[R * C];  // row-major, the whole tile
};
template <typename Use, int M, int N, int K, typename T, typename L, typename V>
static void fill_fragment(fragment<Use, M, N, K, T, L>& f, V value) {
  for (int i = 0; i < f.R * f.C; ++i) f.x[i] = (T)value;
}
template <typename Use, int M, int N, int K, typename T, typename L>
static void load_matrix_sync(fragment<Use, M, N, K, T, L>& f, const T* p, unsigned ldm) {
  bool col = std::is_same<L, col_major>::value;
  for (int i = 0; i < f.R; ++i)
    for (int j = 0; j < f.C; ++j) f.x[i * f.C + j] = col ? p[j * ldm + i] : p[i * ldm + j];
  __syncwarp();  // the warp-wide operation: every lane has read before any writes
}
template <int M, int N, int K, typename T, typename L>
static void load_matrix_sync(fragment<accumulator, M, N, K, T, L>& f, const T* p, unsigned ldm,
                             layout_t layout) {
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j)
      f.x[i * N + j] = layout == mem_col_major ? p[j * ldm + i] : p[i * ldm + j];
  __syncwarp();
}
template <int M, int N, int K, typename T, typename L>
static void store_matrix_sync(T* p, const fragment<accumulator, M, N, K, T, L>& f,
                              unsigned ldm, layout_t layout) {
  __syncwarp();
  if (tl_linear_thread() % 32 == 0)  // one lane writes the tile every lane holds
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j)
        (layout == mem_col_major ? p[j * ldm + i] : p[i * ldm + j]) = f.x[i * N + j];
  __syncwarp();
}
template <int M, int N, int K, typename D, typename H, typename LA, typename LB, typename C>
static void mma_sync(fragment<accumulator, M, N, K, D, void>& d,
                     const fragment<matrix_a, M, N, K, H, LA>& a,
                     const fragment<matrix_b, M, N, K, H, LB>& b,
                     const fragment<accumulator, M, N, K, C, void>& c) {
  D out[M * N];
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      float sum = 0.0f;
      for (int k = 0; k < K; ++k) sum += (float)a.x[i * K + k] * (float)b.x[k * N + j];
      out[i * N + j] = (D)((float)c.x[i * N + j] + sum);
    }
  for (int i = 0; i < M * N; ++i) d.x[i] = out[i];
}
} }
"""

#: host definitions of the helpers whose CUDA bodies are inline PTX, by name
TENSOR_CORES = {
    "tl_lane": r"""
static inline unsigned tl_lane() { return (unsigned)(tl_linear_thread() % 32); }
static const void* tl_pointer_slots[32][32][2];
// every lane's two pointers, `mine[0..1]`, into all[lane][0..1] (two warp barriers
// around the reads: call tl_gather_done() after using them)
static inline void tl_gather(const void* a, const void* b, const void* (*all)[2]) {
  int warp = tl_linear_thread() / 32, lane = tl_linear_thread() % 32;
  tl_pointer_slots[warp][lane][0] = a;
  tl_pointer_slots[warp][lane][1] = b;
  __syncwarp();
  memcpy(all, tl_pointer_slots[warp], sizeof(tl_pointer_slots[warp]));
}
static inline void tl_gather_done() { __syncwarp(); }
static inline float tl_to_float(float x) { return x; }
#ifdef TL_HOST_HALF
static inline float tl_to_float(half x) { return (float)x; }
#endif
#ifdef TL_HOST_BF16
static inline float tl_to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
#endif""",
    "tl_cp_async_4": r"""
static inline void tl_cp_async_4(void* shared, const void* global) {
  memcpy(shared, global, 4);
}""",
    "tl_cp_async_8": r"""
static inline void tl_cp_async_8(void* shared, const void* global) {
  memcpy(shared, global, 8);
}""",
    "tl_cp_async_16": r"""
static inline void tl_cp_async_16(void* shared, const void* global) {
  memcpy(shared, global, 16);
}""",
    "tl_ldmatrix_x4": r"""
template <typename H>
static void tl_ldmatrix_host(H* regs, const H* row, bool trans) {
  const void* rows[32][2];
  tl_gather(row, nullptr, rows);
  int lane = tl_linear_thread() % 32;
  for (int q = 0; q < 4; ++q)
    for (int e = 0; e < 2; ++e) {
      int r = trans ? 2 * (lane % 4) + e : lane / 4, c = trans ? lane / 4 : 2 * (lane % 4) + e;
      regs[2 * q + e] = ((const H*)rows[8 * q + r][0])[c];
    }
  tl_gather_done();
}
template <typename H>
static void tl_ldmatrix_x4(H* regs, const H* row) { tl_ldmatrix_host(regs, row, false); }""",
    "tl_ldmatrix_x4_trans": r"""
template <typename H>
static void tl_ldmatrix_x4_trans(H* regs, const H* row) { tl_ldmatrix_host(regs, row, true); }""",
    "tl_mma_16x16x16": r"""
// D = A B + C on a 16x16x16 tile of the warp's registers (the module docstring)
template <typename D, typename H, typename C>
static void tl_mma_host(D* d, const H* a, const H* b, const C* c) {
  const void* regs[32][2];
  tl_gather(a, b, regs);
  int lane = tl_linear_thread() % 32, g = lane / 4, t = lane % 4;
  D out[8];
  for (int r = 0; r < 8; ++r) {
    int i = g + 8 * (r % 4 / 2), j = 8 * (r / 4) + 2 * t + r % 2;
    float sum = 0.0f;
    for (int k = 0; k < 16; ++k) {
      H x = ((const H*)regs[4 * (i % 8) + k % 8 / 2][0])[k % 2 + 2 * (i / 8) + 4 * (k / 8)];
      H y = ((const H*)regs[4 * (j % 8) + k % 8 / 2][1])[k % 2 + 2 * (k / 8) + 4 * (j / 8)];
      sum += tl_to_float(x) * tl_to_float(y);
    }
    out[r] = (D)(tl_to_float(c[r]) + sum);
  }
  tl_gather_done();
  for (int r = 0; r < 8; ++r) d[r] = out[r];
}
#ifdef TL_HOST_HALF
static void tl_mma_16x16x16_f16_f32(float* d, const half* a, const half* b, const float* c) {
  tl_mma_host(d, a, b, c);
}
static void tl_mma_16x16x16_f16_f16(half* d, const half* a, const half* b, const half* c) {
  tl_mma_host(d, a, b, c);
}
#endif
#ifdef TL_HOST_BF16
static void tl_mma_16x16x16_bf16_f32(float* d, const __nv_bfloat16* a,
                                     const __nv_bfloat16* b, const float* c) {
  tl_mma_host(d, a, b, c);
}
#endif""",
}

#: the inline PTX statements of kernel bodies that have nothing to do on the host
_ASYNC_STATEMENT = re.compile(
    r'asm volatile\("cp\.async\.(?:commit_group|wait_group \d+|wait_all);\\n" ::: "memory"\);'
)
_DEFINES = re.compile(r"__forceinline__[\w\s\*]*?\b(tl_\w+)\(")


def host_helpers(source: str) -> str:
    """``source`` with the helpers whose bodies are inline PTX replaced by
    :data:`TENSOR_CORES` and the ``cp.async`` commit / wait statements removed."""
    parts, done = [], set()
    for chunk in source.split("\n\n"):
        found = _DEFINES.search(chunk)
        name = found.group(1) if found and "asm" in chunk else None
        if name is not None:
            key = "tl_mma_16x16x16" if name.startswith("tl_mma_16x16x16") else name
            if key not in TENSOR_CORES:
                raise ValueError(f"the host emulation has no stand-in for {name}")
            if key not in done:
                parts.append(TENSOR_CORES[key])
                done.add(key)
            continue
        parts.append(chunk)
    return _ASYNC_STATEMENT.sub("", "\n\n".join(parts))

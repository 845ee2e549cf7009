/* The loop nest of benchmarks/matmul_tiled.tir written by hand: the yardstick for the
 * generated C (same compiler, same flags). */
#include <stdint.h>

void hand_matmul(const float* restrict A, const float* restrict B, float* restrict C) {
  #pragma omp parallel for
  for (int32_t i0 = 0; i0 < 64; ++i0) {
    for (int32_t j0 = 0; j0 < 16; ++j0) {
      for (int32_t i1 = 0; i1 < 16; ++i1) {
        float* c = C + (i0 * 16 + i1) * 1024 + j0 * 64;
        #pragma omp simd
        for (int32_t j1 = 0; j1 < 64; ++j1) c[j1] = 0.0f;
      }
      for (int32_t k = 0; k < 1024; ++k) {
        const float* b = B + k * 1024 + j0 * 64;
        for (int32_t i1 = 0; i1 < 16; ++i1) {
          float* c = C + (i0 * 16 + i1) * 1024 + j0 * 64;
          const float a = A[(i0 * 16 + i1) * 1024 + k];
          #pragma omp simd
          for (int32_t j1 = 0; j1 < 64; ++j1) c[j1] += a * b[j1];
        }
      }
    }
  }
}

/* The fp32 FMA throughput one core really sustains: 12 independent chains of vector
 * fused multiply-adds, the widest the compiler targets (-march=native). Used by the
 * benchmarks to say what fraction of the machine's peak a kernel reaches, because a
 * nominal peak can be wrong for the CPU at hand (AMD Zen 4 executes an AVX-512 FMA as
 * two 256-bit halves: half the nominal rate of a two-unit Intel core). */
#include <stdio.h>
#include <time.h>
#if defined(__AVX512F__)
#include <immintrin.h>
typedef __m512 vec;
#define LANES 16
#define FMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define SET(x) _mm512_set1_ps(x)
#define FIRST(v) _mm512_cvtss_f32(v)
#elif defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
typedef __m256 vec;
#define LANES 8
#define FMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define SET(x) _mm256_set1_ps(x)
#define FIRST(v) _mm256_cvtss_f32(v)
#else
typedef float vec;
#define LANES 1
#define FMA(a, b, c) ((a) * (b) + (c))
#define SET(x) (x)
#define FIRST(v) (v)
#endif

int main(void) {
    vec acc[12];
    for (int i = 0; i < 12; i++) acc[i] = SET(i * 0.001f);
    vec a = SET(0.999f), b = SET(0.0001f);
    long n = 100000000;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long k = 0; k < n; k++) {
#pragma GCC unroll 12
        for (int i = 0; i < 12; i++) acc[i] = FMA(acc[i], a, b);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double seconds = (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec);
    float sum = 0;
    for (int i = 0; i < 12; i++) sum += FIRST(acc[i]);
    /* the sum keeps the chains alive; it is printed so the compiler cannot drop them */
    printf("%.3f %g\n", n * 12.0 * LANES * 2 / seconds / 1e9, sum);
    return 0;
}

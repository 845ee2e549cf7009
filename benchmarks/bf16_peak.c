/* The bfloat16 dot-product throughput one core really sustains with AVX-512 BF16: 16
 * independent chains of vdpbf16ps (32 bfloat16 x bfloat16 products summed in pairs
 * into 16 float32 lanes each), kept in registers (named variables: an array would be
 * spilled). The best of many short runs is reported, so time slices lost to other
 * processes on a shared machine do not count against the peak. Prints GFLOP/s (a
 * product and its addition count as 2), the figure benchmarks/bench_bf16.py states its
 * fraction of. Prints 0 when the compiler does not target AVX-512 BF16. */
#include <stdio.h>
#include <time.h>
#if defined(__AVX512BF16__)
#include <immintrin.h>

#define CHAINS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) \
                  X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15)
#define DECLARE(i) __m512 acc##i = _mm512_set1_ps((float)i);
#define STEP(i) acc##i = _mm512_dpbf16_ps(acc##i, a, b);
#define FOLD(i) sum += _mm512_cvtss_f32(acc##i);

int main(void) {
    CHAINS(DECLARE)
    volatile float seed = 1e-3f;  /* a run-time value: the chains cannot be folded */
    __m512bh a = _mm512_cvtne2ps_pbh(_mm512_set1_ps(seed), _mm512_set1_ps(seed));
    __m512bh b = _mm512_cvtne2ps_pbh(_mm512_set1_ps(-seed), _mm512_set1_ps(seed));
    long n = 25000;
    double seconds = 1e30;
    for (int run = 0; run < 300; run++) {
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (long k = 0; k < n; k++) {
            CHAINS(STEP) CHAINS(STEP) CHAINS(STEP) CHAINS(STEP)
        }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double t = (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec);
        if (t < seconds) seconds = t;
    }
    float sum = 0;
    CHAINS(FOLD)
    /* the sum keeps the chains alive; it is printed so the compiler cannot drop them */
    printf("%.3f %g\n", n * 4 * 16.0 * 32 * 2 / seconds / 1e9, sum);
    return 0;
}
#else
int main(void) {
    printf("0 0\n");
    return 0;
}
#endif

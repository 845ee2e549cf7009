/* The int8 dot-product throughput one core really sustains with AVX-512 VNNI: 16
 * independent chains of vpdpbusd (64 uint8 x int8 multiply-adds into 16 int32 lanes
 * each), kept in registers (named variables: an array would be spilled). The best of
 * many short runs is reported, so time slices lost to other processes on a shared
 * machine do not count against the peak. Prints giga
 * int8 operations per second (a multiply-add counts as 2), the figure
 * benchmarks/bench_int8.py states its fraction of. Prints 0 when the compiler does not
 * target VNNI (-march=native on a CPU without it). */
#include <stdio.h>
#include <time.h>
#if defined(__AVX512VNNI__)
#include <immintrin.h>

#define CHAINS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) \
                  X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15)
#define DECLARE(i) __m512i acc##i = _mm512_set1_epi32(i);
#define STEP(i) acc##i = _mm512_dpbusd_epi32(acc##i, a, b);
#define FOLD(i) sum += _mm_cvtsi128_si32(_mm512_castsi512_si128(acc##i));

int main(void) {
    CHAINS(DECLARE)
    volatile char seed = 3;  /* a run-time value: the chains cannot be folded */
    __m512i a = _mm512_set1_epi8(seed), b = _mm512_set1_epi8(-1);
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
    int sum = 0;
    CHAINS(FOLD)
    /* the sum keeps the chains alive; it is printed so the compiler cannot drop them */
    printf("%.3f %d\n", n * 4 * 16.0 * 64 * 2 / seconds / 1e9, sum);
    return 0;
}
#else
int main(void) {
    printf("0 0\n");
    return 0;
}
#endif

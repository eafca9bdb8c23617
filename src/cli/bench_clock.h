/* The monotonic clock the bench commands time with. */
#ifndef TGL_CLI_BENCH_CLOCK_H
#define TGL_CLI_BENCH_CLOCK_H
#include <time.h>

static inline double tgl_bench_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
#endif

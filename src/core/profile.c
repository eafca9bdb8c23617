/* The profiler: times each call alone (the device is idle before it starts and waited for after
 * it ends) and sums the times per call kind. Device time comes from the backend's timer (GL
 * timer queries) where it has one that measures compute work, wall time otherwise. */
#include "trace.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct profile_row {
    uint64_t calls, errors;
    double seconds, flops, bytes;
} profile_row;

struct tgl__profile {
    profile_row rows[TGL__FN_COUNT];
    int device_timer; /* the backend's timer is in use */
    double t0;
};

double tgl__seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

tgl_status tgl__profile_begin(tgl_backend *b)
{
    tgl__profile *p = calloc(1, sizeof *p);
    if (!p)
        return tgl__fail(b, TGL_ERR_OUT_OF_MEMORY, "tgl_profile_start: no host memory");
    p->device_timer = b->vt->timer_begin && b->vt->timer_end;
    free(b->profile);
    b->profile = p;
    return TGL_OK;
}

void tgl__profile_call_start(tgl_backend *b)
{
    tgl__profile *p = b->profile;
    if (!b->lost)
        tgl_synchronize(b); /* earlier work must not be charged to this call */
    if (p->device_timer && !b->lost && b->vt->timer_begin(b) != TGL_OK)
        p->device_timer = 0; /* the driver refused: wall time from here on */
    p->t0 = tgl__seconds();
}

void tgl__profile_call_end(tgl_backend *b, const tgl__call *c, tgl_status st)
{
    tgl__profile *p = b->profile;
    profile_row *r = &p->rows[c->fn];
    double seconds = -1.0;
    if (p->device_timer && !b->lost && b->vt->timer_end(b, &seconds) != TGL_OK) {
        p->device_timer = 0;
        seconds = -1.0;
    }
    if (!b->lost)
        tgl_synchronize(b);
    double wall = tgl__seconds() - p->t0;
    /* A timer that reads under a microsecond for a call that took milliseconds does not time
     * compute work (llvmpipe's reads ~0 ns for a 40 ms GEMM): wall time from here on. (A GPU's
     * reads microseconds for any dispatch; a first call's kernel compile is wall time only.) */
    if (p->device_timer && seconds >= 0.0 && seconds < 1e-6 && wall > 5e-3)
        p->device_timer = 0;
    if (seconds < 0.0 || !p->device_timer)
        seconds = wall;
    r->calls++;
    if (st != TGL_OK) {
        r->errors++;
        return; /* a rejected call did no work worth timing */
    }
    double flops, bytes;
    tgl__call_cost(c, &flops, &bytes);
    r->seconds += seconds;
    r->flops += flops;
    r->bytes += bytes;
}

void tgl__profile_print(tgl_backend *b, FILE *out)
{
    const tgl__profile *p = b->profile;
    struct tgl_device_info info;
    tgl_device_info(b, &info);
    double total = 0.0;
    uint64_t calls = 0;
    for (int i = 0; i < TGL__FN_COUNT; i++) {
        total += p->rows[i].seconds;
        calls += p->rows[i].calls;
    }
    fprintf(out, "tensorgl profile: %s backend, %s; %s; %llu calls, %.3f ms in all\n", info.backend, info.renderer,
            p->device_timer ? "device time from GL timer queries" : "wall time, each call synchronized",
            (unsigned long long)calls, total * 1e3);
    fprintf(out, "%-22s %8s %6s %11s %10s %6s %9s %9s\n", "call", "calls", "errors", "total ms", "mean us", "share",
            "GFLOP/s", "GB/s");
    /* Largest share first. */
    int order[TGL__FN_COUNT];
    for (int i = 0; i < TGL__FN_COUNT; i++)
        order[i] = i;
    for (int i = 1; i < TGL__FN_COUNT; i++)
        for (int k = i; k > 0 && p->rows[order[k]].seconds > p->rows[order[k - 1]].seconds; k--) {
            int t = order[k];
            order[k] = order[k - 1];
            order[k - 1] = t;
        }
    for (int k = 0; k < TGL__FN_COUNT; k++) {
        const profile_row *r = &p->rows[order[k]];
        if (!r->calls)
            continue;
        uint64_t ok = r->calls - r->errors;
        double mean_us = ok ? r->seconds / (double)ok * 1e6 : 0.0;
        char gflops[16] = "-", gbs[16] = "-";
        if (r->seconds > 0 && r->flops > 0)
            snprintf(gflops, sizeof gflops, "%.2f", r->flops / r->seconds * 1e-9);
        if (r->seconds > 0 && r->bytes > 0)
            snprintf(gbs, sizeof gbs, "%.2f", r->bytes / r->seconds * 1e-9);
        fprintf(out, "%-22s %8llu %6llu %11.3f %10.1f %5.1f%% %9s %9s\n", tgl__fn_name((tgl__fn)order[k]),
                (unsigned long long)r->calls, (unsigned long long)r->errors, r->seconds * 1e3, mean_us,
                total > 0 ? 100.0 * r->seconds / total : 0.0, gflops, gbs);
    }
    fflush(out);
}

void tgl__profile_end(tgl_backend *b, int print)
{
    if (print && b->profile)
        tgl__profile_print(b, stderr);
    free(b->profile);
    b->profile = NULL;
}

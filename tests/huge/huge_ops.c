/* `make check-huge`: ops on tensors of 2^LOG2 floats (default 2^29: 2 GiB per array, 6 GiB in
 * all) on the GL backend, far past GL_MAX_SHADER_STORAGE_BLOCK_SIZE (128 MiB on llvmpipe) and
 * past one dispatch's workgroup limit, so each runs in windows, pieces or boxes: an add, a sum
 * of everything and column sums, argmax/argmin over lines of up to 2^30, a broadcast add and a transpose of the whole
 * array, and a gather from it as an embedding table. Every output element is read back and
 * checked against its closed form; each op is timed on its second run (the first compiles its
 * kernels). Not in `make check`: it needs ~6.5 GiB of RAM (llvmpipe)
 * or device memory.
 * Usage: huge_ops [LOG2]   Exit 0 when every check passes. */
#include "tensorgl.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define COLS 4096 /* x[i] = i mod COLS: as a [n / COLS, COLS] matrix, every row is 0 .. COLS-1 */
#define CHUNK ((size_t)1 << 20)

static tgl_backend *b;
static float *h;      /* CHUNK floats of host buffer */
static int failures;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Runs `calls` once untimed (kernels compile on first use), then timed into dt. */
#define TIMED(calls)                                                                     \
    do {                                                                                 \
        calls;                                                                           \
        TRY(tgl_synchronize(b));                                                         \
        double t0_ = now();                                                              \
        calls;                                                                           \
        TRY(tgl_synchronize(b));                                                         \
        dt = now() - t0_;                                                                \
    } while (0)

#define TRY(call)                                                                        \
    do {                                                                                 \
        if ((call) != TGL_OK) {                                                          \
            fprintf(stderr, "huge_ops: %s: %s\n", #call, tgl_last_error(b));             \
            exit(1);                                                                     \
        }                                                                                \
    } while (0)

/* Reads n floats at p back and counts those unlike want(i). */
static size_t count_wrong(tgl_ptr p, size_t n, float (*want)(size_t i, size_t n), size_t total)
{
    size_t wrong = 0;
    for (size_t off = 0; off < n; off += CHUNK) {
        size_t m = n - off < CHUNK ? n - off : CHUNK;
        TRY(tgl_copy_dtoh(b, h, p + off * sizeof(float), m * sizeof(float)));
        for (size_t i = 0; i < m; i++)
            wrong += h[i] != want(off + i, total);
    }
    return wrong;
}

static float want_sum(size_t i, size_t n) { (void)n; return (float)(i % COLS) + 0.5f; }
static float want_zero(size_t i, size_t n) { (void)i, (void)n; return 0.0f; }
static float want_transposed(size_t i, size_t n)
{
    size_t row = i / (n / COLS); /* x^T is [COLS, n / COLS]: row j holds j everywhere */
    return (float)row;
}
static float want_row(size_t i, size_t n) { (void)n; return (float)(i % COLS); }

static void report(const char *what, double seconds, double gbytes, size_t wrong)
{
    printf("  %-40s %7.2f s %7.1f GB/s  %s\n", what, seconds, gbytes / seconds, wrong ? "WRONG" : "ok");
    if (wrong) {
        printf("    %zu wrong elements\n", wrong);
        failures++;
    }
}

static void check_close(const char *what, double seconds, double gbytes, double got, double want, double rel)
{
    int bad = !(fabs(got - want) <= rel * fabs(want));
    printf("  %-40s %7.2f s %7.1f GB/s  %s (%.9g, closed form %.9g)\n", what, seconds, gbytes / seconds,
           bad ? "WRONG" : "ok", got, want);
    failures += bad;
}

int main(int argc, char **argv)
{
    int log2n = argc > 1 ? atoi(argv[1]) : 29;
    if (log2n < 24 || log2n > 34) { /* the gather writes 4096 x 4096 floats into z */
        fprintf(stderr, "usage: huge_ops [LOG2 in 24..34]\n");
        return 2;
    }
    size_t n = (size_t)1 << log2n, rows = n / COLS;
    tgl_options o = {.kind = TGL_BACKEND_GL};
    if (tgl_open(&o, &b)) {
        fprintf(stderr, "huge_ops: %s\n", tgl_last_error(NULL));
        return 1;
    }
    struct tgl_device_info info;
    tgl_device_info(b, &info);
    printf("huge_ops on %s: 2^%d floats (%.2f GiB per array, max SSBO block %.0f MiB)\n", info.renderer, log2n,
           (double)n * 4.0 / (1 << 30), (double)info.max_ssbo_block_size / (1 << 20));
    tgl_ptr x, y, z, small;
    TRY(tgl_alloc(b, n * sizeof(float), &x));
    TRY(tgl_alloc(b, n * sizeof(float), &y));
    TRY(tgl_alloc(b, n * sizeof(float), &z));
    TRY(tgl_alloc(b, 2 * COLS * sizeof(float), &small));
    h = malloc(CHUNK * sizeof(float));
    if (!h)
        return 1;
    for (size_t i = 0; i < CHUNK; i++)
        h[i] = (float)(i % COLS);
    for (size_t off = 0; off < n; off += CHUNK)
        TRY(tgl_copy_htod(b, x + off * sizeof(float), h, CHUNK * sizeof(float)));
    TRY(tgl_fill(b, y, 0.5f, n));
    TRY(tgl_synchronize(b));
    double gb = (double)n * 4e-9, dt;

    TIMED(TRY(tgl_binary(b, TGL_BINARY_ADD, x, y, z, n)));
    report("add z = x + 0.5", dt, 3 * gb, count_wrong(z, n, want_sum, n));

    /* sum of (i mod COLS) + 0.5 over n = n * COLS / 2 */
    float s[COLS];
    TIMED(TRY(tgl_reduce(b, TGL_REDUCE_SUM, z, small, &n, 1, 0)));
    TRY(tgl_copy_dtoh(b, s, small, sizeof(float)));
    check_close("sum of z (one line of n)", dt, gb, s[0], (double)n * COLS / 2, 1e-6);

    size_t shape[2] = {rows, COLS};
    TIMED(TRY(tgl_reduce(b, TGL_REDUCE_SUM, x, small, shape, 2, 0)));
    TRY(tgl_copy_dtoh(b, s, small, sizeof s));
    double worst = 0;
    for (size_t j = 0; j < COLS; j++) {
        double want = (double)rows * (double)j, e = j ? fabs(s[j] - want) / want : fabs(s[j]);
        worst = e > worst ? e : worst;
    }
    printf("  %-40s %7.2f s %7.1f GB/s  %s (worst relative error %.3g)\n", "column sums of x [n/4096, 4096]", dt,
           gb / dt, worst <= 1e-6 ? "ok" : "WRONG", worst);
    failures += !(worst <= 1e-6);

    /* lines of up to 2^30 (indices are int32): argmax 4095, argmin 0 on every line */
    size_t line = n < ((size_t)1 << 30) ? n : (size_t)1 << 30, lines[2] = {n / line, line};
    int32_t idx[2 * 8];
    TIMED(TRY(tgl_argmax(b, x, small, lines, 2, 1)); TRY(tgl_argmin(b, x, small + lines[0] * 4, lines, 2, 1)));
    TRY(tgl_copy_dtoh(b, idx, small, 2 * lines[0] * sizeof(int32_t)));
    int arg_ok = 1;
    for (size_t i = 0; i < lines[0]; i++)
        arg_ok &= idx[i] == COLS - 1 && idx[lines[0] + i] == 0;
    printf("  %-40s %7.2f s %7.1f GB/s  %s (%d, %d; %zu lines)\n", "argmax, argmin of x", dt, 2 * gb / dt,
           arg_ok ? "ok" : "WRONG", idx[0], idx[lines[0]], lines[0]);
    failures += !arg_ok;

    /* bias[j] = -j: every row of x + bias is zero */
    for (size_t j = 0; j < COLS; j++)
        s[j] = -(float)j;
    TRY(tgl_copy_htod(b, small, s, sizeof s));
    size_t bias_shape[1] = {COLS};
    TIMED(TRY(tgl_binary_broadcast(b, TGL_BINARY_ADD, x, shape, 2, small, bias_shape, 1, z)));
    report("broadcast z = x [n/4096, 4096] + bias", dt, 2 * gb, count_wrong(z, n, want_zero, n));

    size_t perm[2] = {1, 0};
    TIMED(TRY(tgl_permute(b, x, z, shape, 2, perm)));
    report("transpose z = x^T [4096, n/4096]", dt, 2 * gb, count_wrong(z, n, want_transposed, n));

    /* a gather of COLS rows from x as a [n/4096, 4096] table, spread over all of it */
    int32_t *ids = malloc(COLS * sizeof(int32_t));
    for (size_t k = 0; k < COLS; k++)
        ids[k] = (int32_t)((k * 7919u + rows / 2) % rows);
    ids[0] = (int32_t)rows - 1;
    TRY(tgl_copy_htod(b, y, ids, COLS * sizeof(int32_t)));
    TIMED(TRY(tgl_gather_rows(b, x, y, z, rows, COLS, COLS)));
    report("gather 4096 rows of x as a table", dt, 2.0 * COLS * COLS * 4e-9,
           count_wrong(z, (size_t)COLS * COLS, want_row, n));
    free(ids);

    free(h);
    tgl_close(b);
    printf("huge_ops: %s\n", failures ? "FAILED" : "all checks passed");
    return failures != 0;
}

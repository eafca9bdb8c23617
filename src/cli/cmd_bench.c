/* `tensorgl bench ops`: times element-wise add, a 1-D sum and row softmax on the default backend
 * (TGL_BACKEND picks it), each against a plain single-threaded C loop doing the same work on the
 * host in the same run, and prints both figures and their ratio; then the fused expression
 * sqrt(a*b + c) through tgl_map against the same three ops run separately, on the backend. Each figure is the best of a
 * few repetitions of `iters` back-to-back calls followed by one tgl_synchronize. */
#include "commands.h"
#include "tensorgl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

#define TRY(call)                                                                                 \
    do {                                                                                          \
        tgl_status st_ = (call);                                                                  \
        if (st_) {                                                                                \
            fprintf(stderr, "tensorgl bench: %s: %s: %s\n", #call, tgl_status_string(st_),       \
                    tgl_last_error(b));                                                           \
            return 1;                                                                             \
        }                                                                                         \
    } while (0)

typedef struct cfg {
    size_t add_n, sum_n, sm_rows, sm_cols;
    int iters, reps;
} cfg;

/* Host references: the same arithmetic as a plain loop. */
static double host_add(const float *a, const float *x, float *y, size_t n, int reps)
{
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        double t0 = now_s();
        for (size_t i = 0; i < n; i++)
            y[i] = a[i] + x[i];
        double t = now_s() - t0;
        best = t < best ? t : best;
    }
    return best;
}

static volatile float sink;
static double host_sum(const float *a, size_t n, int reps)
{
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        double t0 = now_s();
        float s = 0;
        for (size_t i = 0; i < n; i++)
            s += a[i];
        sink = s;
        double t = now_s() - t0;
        best = t < best ? t : best;
    }
    return best;
}

static double host_softmax(const float *a, float *y, size_t rows, size_t cols, int reps)
{
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        double t0 = now_s();
        for (size_t i = 0; i < rows; i++) {
            const float *x = a + i * cols;
            float *o = y + i * cols, m = -INFINITY, s = 0;
            for (size_t j = 0; j < cols; j++)
                m = x[j] > m ? x[j] : m;
            for (size_t j = 0; j < cols; j++)
                s += (o[j] = expf(x[j] - m));
            for (size_t j = 0; j < cols; j++)
                o[j] /= s;
        }
        double t = now_s() - t0;
        best = t < best ? t : best;
    }
    return best;
}

static int parse_args(int argc, char **argv, cfg *c)
{
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--add") && i + 1 < argc)
            c->add_n = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--sum") && i + 1 < argc)
            c->sum_n = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--softmax") && i + 1 < argc &&
                 sscanf(argv[i + 1], "%zux%zu", &c->sm_rows, &c->sm_cols) == 2)
            i++;
        else if (!strcmp(argv[i], "--iters") && i + 1 < argc)
            c->iters = atoi(argv[++i]);
        else
            return 0;
    }
    return c->add_n && c->sum_n && c->sm_rows && c->sm_cols && c->iters > 0;
}

static void report(const char *what, double t_dev, double t_host, double bytes, const char *backend)
{
    printf("%-28s %10.3f ms %9.2f GB/s   host loop %10.3f ms %9.2f GB/s   %s/host %.2fx\n", what, t_dev * 1e3,
           bytes / t_dev / 1e9, t_host * 1e3, bytes / t_host / 1e9, backend, t_host / t_dev);
}

int tgl_cmd_bench(int argc, char **argv)
{
    cfg c = {4u << 20, 16u << 20, 4096, 1024, 20, 5};
    if (argc < 2 || strcmp(argv[1], "ops") || !parse_args(argc, argv, &c)) {
        fprintf(stderr, "usage: tensorgl bench ops [--add N] [--sum N] [--softmax ROWSxCOLS] [--iters N]\n");
        return 2;
    }
    tgl_backend *b = NULL;
    tgl_status st = tgl_open(NULL, &b);
    if (st) {
        fprintf(stderr, "tensorgl bench: no device: %s\n", tgl_last_error(NULL));
        return 1;
    }
    struct tgl_device_info info;
    tgl_device_info(b, &info);
    printf("tensorgl bench ops: %s (%s, %s); host reference: one C loop on this machine's CPU\n", info.backend,
           info.renderer, info.version);

    size_t big = c.add_n > c.sum_n ? c.add_n : c.sum_n;
    if (c.sm_rows * c.sm_cols > big)
        big = c.sm_rows * c.sm_cols;
    float *h = malloc(big * sizeof(float)), *h2 = malloc(big * sizeof(float)), *h3 = malloc(big * sizeof(float));
    for (size_t i = 0; i < big; i++)
        h[i] = (float)(i % 1000) * 0.001f, h2[i] = 1.0f - h[i];
    tgl_ptr a, x, y;
    TRY(tgl_alloc(b, big * sizeof(float), &a));
    TRY(tgl_alloc(b, big * sizeof(float), &x));
    TRY(tgl_alloc(b, big * sizeof(float), &y));
    TRY(tgl_copy_htod(b, a, h, big * sizeof(float)));
    TRY(tgl_copy_htod(b, x, h2, big * sizeof(float)));

    double best;
    /* add: 3 arrays of add_n floats move per call */
    best = 1e30;
    TRY(tgl_binary(b, TGL_BINARY_ADD, a, x, y, c.add_n));
    for (int r = 0; r < c.reps; r++) {
        TRY(tgl_synchronize(b));
        double t0 = now_s();
        for (int i = 0; i < c.iters; i++)
            TRY(tgl_binary(b, TGL_BINARY_ADD, a, x, y, c.add_n));
        TRY(tgl_synchronize(b));
        double t = (now_s() - t0) / c.iters;
        best = t < best ? t : best;
    }
    char what[64];
    snprintf(what, sizeof what, "add %zu floats", c.add_n);
    report(what, best, host_add(h, h2, h3, c.add_n, c.reps), 3.0 * c.add_n * sizeof(float), info.backend);

    best = 1e30;
    TRY(tgl_reduce(b, TGL_REDUCE_SUM, a, y, &c.sum_n, 1, 0));
    for (int r = 0; r < c.reps; r++) {
        TRY(tgl_synchronize(b));
        double t0 = now_s();
        for (int i = 0; i < c.iters; i++)
            TRY(tgl_reduce(b, TGL_REDUCE_SUM, a, y, &c.sum_n, 1, 0));
        TRY(tgl_synchronize(b));
        double t = (now_s() - t0) / c.iters;
        best = t < best ? t : best;
    }
    snprintf(what, sizeof what, "sum %zu floats", c.sum_n);
    report(what, best, host_sum(h, c.sum_n, c.reps), (double)c.sum_n * sizeof(float), info.backend);

    best = 1e30;
    TRY(tgl_softmax(b, a, y, c.sm_rows, c.sm_cols));
    for (int r = 0; r < c.reps; r++) {
        TRY(tgl_synchronize(b));
        double t0 = now_s();
        for (int i = 0; i < c.iters; i++)
            TRY(tgl_softmax(b, a, y, c.sm_rows, c.sm_cols));
        TRY(tgl_synchronize(b));
        double t = (now_s() - t0) / c.iters;
        best = t < best ? t : best;
    }
    snprintf(what, sizeof what, "softmax %zux%zu", c.sm_rows, c.sm_cols);
    report(what, best, host_softmax(h, h3, c.sm_rows, c.sm_cols, c.reps < 3 ? c.reps : 3),
           2.0 * c.sm_rows * c.sm_cols * sizeof(float), info.backend);

    /* Fused vs separate: sqrt(a*b + c) on add_n elements (c = y from the add above). */
    tgl_ptr t;
    TRY(tgl_alloc(b, c.add_n * sizeof(float), &t));
    const tgl_ptr args[3] = {a, x, y};
    double fused = 1e30, separate = 1e30;
    TRY(tgl_map(b, "sqrt(a*b + c)", args, 3, t, c.add_n));
    TRY(tgl_binary(b, TGL_BINARY_MUL, a, x, t, c.add_n));
    for (int r = 0; r < c.reps; r++) {
        TRY(tgl_synchronize(b));
        double t0 = now_s();
        for (int i = 0; i < c.iters; i++)
            TRY(tgl_map(b, "sqrt(a*b + c)", args, 3, t, c.add_n));
        TRY(tgl_synchronize(b));
        double t1 = now_s();
        for (int i = 0; i < c.iters; i++) {
            TRY(tgl_binary(b, TGL_BINARY_MUL, a, x, t, c.add_n));
            TRY(tgl_binary(b, TGL_BINARY_ADD, t, y, t, c.add_n));
            TRY(tgl_unary(b, TGL_UNARY_SQRT, t, t, c.add_n));
        }
        TRY(tgl_synchronize(b));
        double t2 = now_s();
        fused = (t1 - t0) / c.iters < fused ? (t1 - t0) / c.iters : fused;
        separate = (t2 - t1) / c.iters < separate ? (t2 - t1) / c.iters : separate;
    }
    snprintf(what, sizeof what, "sqrt(a*b+c), %zu floats", c.add_n);
    printf("%-28s %10.3f ms fused (tgl_map)   %10.3f ms as mul, add, sqrt   fused %.2fx faster\n", what,
           fused * 1e3, separate * 1e3, separate / fused);
    tgl_free(b, t);
    tgl_free(b, a);
    tgl_free(b, x);
    tgl_free(b, y);
    tgl_close(b);
    free(h), free(h2), free(h3);
    return 0;
}

/* `tensorgl bench` dispatch (no subcommand: the standard set, cmd_bench_suite.c) and
 * `tensorgl bench ops`: times element-wise add, a 1-D sum and row softmax on the default backend
 * (TGL_BACKEND picks it), each against a plain single-threaded C loop doing the same work on the
 * host in the same run, and prints both figures and their ratio; then the fused expression
 * sqrt(a*b + c) through tgl_map against the same three ops run separately, on the backend, two
 * ways: in place (the product's buffer reused, the fewest bytes the three can move) and into new
 * tensors (what an unfused ((a*b)+c).sqrt() of a tensor library runs). Each figure is the best of
 * `reps` rounds (5) of `iters` back-to-back calls (20) followed by one tgl_synchronize; a round times every
 * workload once, each device figure next to its host loop (time_rounds). */
#include "bench_clock.h"
#include "cli_args.h"
#include "commands.h"
#include "tensorgl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Host references: the same arithmetic as a plain loop; each returns the seconds of one run. */
static double host_add(const float *a, const float *x, float *y, size_t n)
{
    double t0 = tgl_bench_now();
    for (size_t i = 0; i < n; i++)
        y[i] = a[i] + x[i];
    return tgl_bench_now() - t0;
}

static volatile float sink;
static double host_sum(const float *a, size_t n)
{
    double t0 = tgl_bench_now();
    float s = 0;
    for (size_t i = 0; i < n; i++)
        s += a[i];
    sink = s;
    return tgl_bench_now() - t0;
}

static double host_softmax(const float *a, float *y, size_t rows, size_t cols)
{
    double t0 = tgl_bench_now();
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
    return tgl_bench_now() - t0;
}

enum { ADD, SUM, SOFTMAX, FUSED, SEPARATE, SEPARATE_NEW, WORKLOADS };

typedef struct bufs {
    tgl_ptr a, x, y, t, t2, t3;
} bufs;

/* Queues one call (or, for SEPARATE and SEPARATE_NEW, the three calls the fused expression
 * replaces). */
static tgl_status issue(tgl_backend *b, int w, const bufs *u, const cfg *c)
{
    const tgl_ptr args[3] = {u->a, u->x, u->y};
    tgl_status st;
    switch (w) {
    case ADD: return tgl_binary(b, TGL_BINARY_ADD, u->a, u->x, u->y, c->add_n);
    case SUM: return tgl_reduce(b, TGL_REDUCE_SUM, u->a, u->y, &c->sum_n, 1, 0);
    case SOFTMAX: return tgl_softmax(b, u->a, u->y, c->sm_rows, c->sm_cols);
    case FUSED: return tgl_map(b, "sqrt(a*b + c)", args, 3, u->t, c->add_n);
    default: { /* SEPARATE: add and sqrt in place over the product; SEPARATE_NEW: new outputs */
        tgl_ptr sum = w == SEPARATE_NEW ? u->t2 : u->t, root = w == SEPARATE_NEW ? u->t3 : u->t;
        if ((st = tgl_binary(b, TGL_BINARY_MUL, u->a, u->x, u->t, c->add_n)) ||
            (st = tgl_binary(b, TGL_BINARY_ADD, u->t, u->y, sum, c->add_n)))
            return st;
        return tgl_unary(b, TGL_UNARY_SQRT, sum, root, c->add_n);
    }
    }
}

/* Seconds per call of workload w over one run of c->iters back-to-back calls closed by one
 * tgl_synchronize (the queue drained first). */
static tgl_status time_device(tgl_backend *b, int w, const bufs *u, const cfg *c, double *sec)
{
    tgl_status st = tgl_synchronize(b);
    double t0 = tgl_bench_now();
    for (int i = 0; !st && i < c->iters; i++)
        st = issue(b, w, u, c);
    if (!st && !(st = tgl_synchronize(b)))
        *sec = (tgl_bench_now() - t0) / c->iters;
    return st;
}

static void keep_least(double *best, double t)
{
    *best = t < *best ? t : *best;
}

/* The best of c->reps rounds for every workload on the device (dev) and its host loop (host;
 * the fused and separate cases have none), after one warm-up call of each (kernels compile).
 * Each round times every device workload once, each right before its host loop, so a slow
 * stretch of a shared machine lands on both sides of a ratio rather than on one. The host
 * softmax (20 ms or so) runs in the first 3 rounds only. */
static tgl_status time_rounds(tgl_backend *b, const bufs *u, const cfg *c, const float *h, const float *h2, float *h3,
                              double dev[WORKLOADS], double host[WORKLOADS])
{
    tgl_status st = TGL_OK;
    for (int w = 0; w < WORKLOADS; w++) {
        dev[w] = host[w] = 1e30;
        if (!st)
            st = issue(b, w, u, c);
    }
    for (int r = 0; !st && r < c->reps; r++) {
        for (int w = 0; !st && w < WORKLOADS; w++) {
            double t;
            if ((st = time_device(b, w, u, c, &t)))
                break;
            keep_least(&dev[w], t);
            if (w == ADD)
                keep_least(&host[w], host_add(h, h2, h3, c->add_n));
            else if (w == SUM)
                keep_least(&host[w], host_sum(h, c->sum_n));
            else if (w == SOFTMAX && r < 3)
                keep_least(&host[w], host_softmax(h, h3, c->sm_rows, c->sm_cols));
        }
    }
    return st;
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
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            c->reps = atoi(argv[++i]);
        else
            return 0;
    }
    return c->add_n && c->sum_n && c->sm_rows && c->sm_cols && c->iters > 0 && c->reps > 0;
}

static void report(const char *what, double t_dev, double t_host, double bytes, const char *backend)
{
    printf("%-28s %10.3f ms %9.2f GB/s   host loop %10.3f ms %9.2f GB/s   %s/host %.2fx\n", what, t_dev * 1e3,
           bytes / t_dev / 1e9, t_host * 1e3, bytes / t_host / 1e9, backend, t_host / t_dev);
}

/* The ops workloads on b with host arrays h, h2, h3 of `big` floats (h, h2 filled here). */
static int run_ops(tgl_backend *b, const cfg *cp, const struct tgl_device_info *infop, float *h, float *h2, float *h3,
                   size_t big)
{
    cfg c = *cp;
    const struct tgl_device_info info = *infop;
    tgl_status st;
    for (size_t i = 0; i < big; i++)
        h[i] = (float)(i % 1000) * 0.001f, h2[i] = 1.0f - h[i];
    tgl_ptr a, x, y;
    TRY(tgl_alloc(b, big * sizeof(float), &a));
    TRY(tgl_alloc(b, big * sizeof(float), &x));
    TRY(tgl_alloc(b, big * sizeof(float), &y));
    TRY(tgl_copy_htod(b, a, h, big * sizeof(float)));
    TRY(tgl_copy_htod(b, x, h2, big * sizeof(float)));

    /* The fused case's output, also the separate cases' product; c = y (what the add writes) in
     * sqrt(a*b + c); t2 and t3 the sum and the root when the separate ops write new tensors. */
    tgl_ptr t, t2, t3;
    TRY(tgl_alloc(b, c.add_n * sizeof(float), &t));
    TRY(tgl_alloc(b, c.add_n * sizeof(float), &t2));
    TRY(tgl_alloc(b, c.add_n * sizeof(float), &t3));
    const bufs bu = {a, x, y, t, t2, t3};
    double dev[WORKLOADS], host[WORKLOADS];
    if ((st = time_rounds(b, &bu, &c, h, h2, h3, dev, host))) {
        fprintf(stderr, "tensorgl bench: %s: %s\n", tgl_status_string(st), tgl_last_error(b));
        return 1;
    }
    char what[64];
    snprintf(what, sizeof what, "add %zu floats", c.add_n);
    report(what, dev[ADD], host[ADD], 3.0 * c.add_n * sizeof(float), info.backend);
    snprintf(what, sizeof what, "sum %zu floats", c.sum_n);
    report(what, dev[SUM], host[SUM], (double)c.sum_n * sizeof(float), info.backend);
    snprintf(what, sizeof what, "softmax %zux%zu", c.sm_rows, c.sm_cols);
    report(what, dev[SOFTMAX], host[SOFTMAX],
           2.0 * c.sm_rows * c.sm_cols * sizeof(float), info.backend);
    static const char *const how[2] = {"in place", "into new tensors"}; /* SEPARATE, SEPARATE_NEW */
    snprintf(what, sizeof what, "sqrt(a*b+c), %zu floats", c.add_n);
    for (int k = 0; k < 2; k++)
        printf("%-28s %10.3f ms fused (tgl_map)   %10.3f ms as mul, add, sqrt %s   fused %.2fx faster\n", what,
               dev[FUSED] * 1e3, dev[SEPARATE + k] * 1e3, how[k], dev[SEPARATE + k] / dev[FUSED]);
    tgl_free(b, t3);
    tgl_free(b, t2);
    tgl_free(b, t);
    tgl_free(b, a);
    tgl_free(b, x);
    tgl_free(b, y);
    return 0;
}

/* The subcommands and their options ('=' after a name: it takes a value). */
#define MAX_OPTIONS 16
static const struct {
    const char *name, *options[MAX_OPTIONS];
} subcommands[] = {
    {"ops", {"--add=", "--sum=", "--softmax=", "--iters=", "--reps="}},
    {"gemm", {"--sizes=", "--matvec=", "--batched=", "--no-cpu"}},
    {"attention", {"--shape=", "--causal=", "--decode=", "--window=", "--softcap="}},
    {"conv2d", {"--shape="}},
    {"engine", {"--round-trips=", "--chain=", "--transfer-mib=", "--allocs=", "--no-cache"}},
    {"models", {"--models=", "--backend=", "--format=", "--shape=", "--gguf=", "--save-gguf=", "--prompt=", "--steps=",
                "--kv-f16", "--resnet=", "--input=", "--batch=", "--size=", "--runs=", "--json="}},
};
#define N_SUB (sizeof subcommands / sizeof subcommands[0])

void tgl_cmd_bench_usage(FILE *f)
{
    fprintf(f, "usage: tensorgl bench [--ops LIST] [--sizes LIST] [--backend LIST] [--repeat N] [--json FILE]\n"
               "                      (the standard set, one table; tensorgl bench --help lists the ops)\n"
               "       tensorgl bench ops [--add N] [--sum N] [--softmax ROWSxCOLS] [--iters N] [--reps N]\n"
               "       tensorgl bench gemm [--sizes N|MxNxK,...] [--matvec ROWSxCOLS] [--batched BxN]\n"
               "                           [--no-cpu]\n"
               "       tensorgl bench attention [--shape B,H,S,D] [--causal B,H,S,D] [--decode B,H,KV,D]\n"
               "                                [--window N] [--softcap X]\n"
               "       tensorgl bench conv2d [--shape N,C,H,W,O,K,PAD]\n"
               "       tensorgl bench engine [--round-trips N] [--chain N] [--transfer-mib N] [--allocs N]\n"
               "                             [--no-cache]\n"
               "       tensorgl bench models [--models llama,resnet] [--backend gl|cpu] [--json FILE]\n"
               "                             [--format f32|f16|bf16|q8_0|q4_0] [--shape L,DIM,HEADS,KV,FFN,VOCAB,CTX]\n"
               "                             [--gguf FILE | --save-gguf FILE] [--prompt N] [--steps N] [--kv-f16]\n"
               "                             [--resnet WEIGHTS] [--input IMAGES] [--batch N] [--size S] [--runs R]\n");
}

/* Before a subcommand opens a device: --help prints the usage (exit 0); an option it does not
 * take, or one without its value, is named (exit 2). -1: go on. */
static int check_subcommand(size_t k, int argc, char **argv)
{
    const char *names[MAX_OPTIONS];
    size_t n = 0;
    for (; n < MAX_OPTIONS && subcommands[k].options[n]; n++)
        names[n] = subcommands[k].options[n];
    char cmd[32];
    snprintf(cmd, sizeof cmd, "bench %s", subcommands[k].name);
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            tgl_cmd_bench_usage(stdout);
            return 0;
        }
        size_t len = strlen(argv[i]), j = 0;
        for (; j < n; j++)
            if (!strncmp(names[j], argv[i], len) && (names[j][len] == '=' || !names[j][len]))
                break;
        if (j == n) {
            /* the names without their '=' for the message */
            char plain[MAX_OPTIONS][24];
            const char *valid[MAX_OPTIONS];
            for (size_t m = 0; m < n; m++) {
                snprintf(plain[m], sizeof plain[m], "%.*s", (int)strcspn(names[m], "="), names[m]);
                valid[m] = plain[m];
            }
            return tgl_cli_bad_choice(cmd, "option", argv[i], len, valid, n);
        }
        if (names[j][len] == '=') {
            if (i + 1 >= argc)
                return tgl_cli_missing_value(cmd, argv[i]);
            i++;
        }
    }
    return -1;
}

int tgl_cmd_bench(int argc, char **argv)
{
    cfg c = {4u << 20, 16u << 20, 4096, 1024, 20, 5};
    if (argc < 2 || !strncmp(argv[1], "--", 2) || !strcmp(argv[1], "-h"))
        return tgl_cmd_bench_suite(argc, argv);
    size_t k = 0;
    while (k < N_SUB && strcmp(argv[1], subcommands[k].name))
        k++;
    if (k == N_SUB) {
        const char *names[N_SUB];
        for (size_t j = 0; j < N_SUB; j++)
            names[j] = subcommands[j].name;
        return tgl_cli_bad_choice("bench", "subcommand", argv[1], strlen(argv[1]), names, N_SUB);
    }
    int rc = check_subcommand(k, argc, argv);
    if (rc >= 0)
        return rc;
    if (!strcmp(argv[1], "gemm"))
        return tgl_cmd_bench_gemm(argc, argv);
    if (!strcmp(argv[1], "attention") || !strcmp(argv[1], "conv2d"))
        return tgl_cmd_bench_model(argc, argv);
    if (!strcmp(argv[1], "engine"))
        return tgl_cmd_bench_engine(argc, argv);
    if (!strcmp(argv[1], "models"))
        return tgl_cmd_bench_models(argc, argv);
    if (!parse_args(argc, argv, &c)) {
        fprintf(stderr, "tensorgl bench ops: a value is not a positive number (or ROWSxCOLS for --softmax)\n");
        tgl_cmd_bench_usage(stderr);
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
    rc = 1;
    if (h && h2 && h3)
        rc = run_ops(b, &c, &info, h, h2, h3, big);
    else
        fprintf(stderr, "tensorgl bench: no host memory for 3 x %zu floats\n", big);
    tgl_close(b);
    free(h), free(h2), free(h3);
    return rc;
}

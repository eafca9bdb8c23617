/* `tensorgl bench [--ops LIST] [--sizes LIST] [--backend LIST] [--repeat N] [--json FILE]`:
 * the standard set (bench_ops.c) on every available backend, plus OpenBLAS for the gemm family
 * and plain C loops (bench_host.c) for the indexing, scan, sort and random ops, in one table. Per case and backend: one warm-up call (kernels compile), one timed call to
 * size the runs, then `repeat` runs of as many back-to-back calls as fill ~50 ms, each closed
 * by one tgl_synchronize; the table shows the median and the min-max of the runs' per-call
 * times. Progress goes to stderr. */
#include "bench_clock.h"
#include "bench_suite.h"
#include "cli_args.h"
#include "commands.h"

#include "cpu/cpu_half.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { B_GL, B_CPU, B_BLAS, B_HOST, B_COUNT };
static const char *const backend_names[B_COUNT] = {"gl", "cpu", "openblas", "host"};

typedef struct args {
    const char *ops, *json;
    int sizes[BENCH_SIZES], backends[B_COUNT], repeat;
} args;

/* 1 when `name` (or, for ops, its family) is an item of the comma-separated list. */
static int listed(const char *list, const char *name)
{
    size_t len = strlen(name);
    for (const char *p = list; *p;) {
        size_t item = strcspn(p, ",");
        if (item == len && !strncmp(p, name, len))
            return 1;
        p += item + (p[item] == ',');
    }
    return 0;
}

/* Every item of the list names one of `names`; else the message naming the first that does not
 * (and 2). */
static int list_check(const char *option_what, const char *list, const char *const *names, size_t n)
{
    for (const char *p = list;;) {
        size_t item = strcspn(p, ","), ok = 0;
        for (size_t i = 0; i < n && !ok; i++)
            ok = strlen(names[i]) == item && !strncmp(p, names[i], item);
        if (!ok)
            return tgl_cli_bad_choice("bench", option_what, p, item, names, n);
        if (!p[item])
            return 0;
        p += item + 1;
    }
}

#define MAX_NAMES 256 /* op names and families */
#define USAGE "tensorgl bench [--ops LIST] [--sizes LIST] [--backend LIST] [--repeat N] [--json FILE] (bench --help)"

static int parse(int argc, char **argv, args *a)
{
    const char *sizes = "small,medium,large", *backends = "gl,cpu,openblas,host";
    a->repeat = 5;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int known = !strcmp(o, "--ops") || !strcmp(o, "--sizes") || !strcmp(o, "--backend") || !strcmp(o, "--json") ||
                    !strcmp(o, "--repeat");
        if (!known)
            return tgl_cli_bad_option("bench", o, USAGE);
        if (!v)
            return tgl_cli_missing_value("bench", o);
        if (!strcmp(o, "--ops")) {
            a->ops = v;
        } else if (!strcmp(o, "--sizes")) {
            sizes = v;
        } else if (!strcmp(o, "--backend")) {
            backends = v;
        } else if (!strcmp(o, "--json")) {
            a->json = v;
        } else {
            char *end;
            long r = strtol(v, &end, 10);
            if (*end || end == v || r < 1 || r > 1000)
                return tgl_cli_bad_value("bench", o, v, "takes a whole number from 1 to 1000");
            a->repeat = (int)r;
        }
        i++;
    }
    /* ops: the op names, then each family once */
    const char *names[MAX_NAMES];
    size_t n = 0;
    for (size_t i = 0; i < tgl_bench_op_count && n < MAX_NAMES; i++)
        names[n++] = tgl_bench_ops[i].name;
    for (size_t i = 0; i < tgl_bench_op_count && n < MAX_NAMES; i++) {
        int seen = 0;
        for (size_t j = 0; j < i; j++)
            seen |= !strcmp(tgl_bench_ops[j].family, tgl_bench_ops[i].family);
        if (!seen)
            names[n++] = tgl_bench_ops[i].family;
    }
    int rc = a->ops ? list_check("op or family", a->ops, names, n) : 0;
    if (!rc)
        rc = list_check("size", sizes, tgl_bench_size_names, BENCH_SIZES);
    if (!rc)
        rc = list_check("backend", backends, backend_names, B_COUNT);
    if (rc)
        return rc;
    for (int s = 0; s < BENCH_SIZES; s++)
        a->sizes[s] = listed(sizes, tgl_bench_size_names[s]);
    for (int k = 0; k < B_COUNT; k++)
        a->backends[k] = listed(backends, backend_names[k]);
    return 0;
}

/* Who runs a case: a backend (b != NULL, device buffers), OpenBLAS (blas) or a host loop (host,
 * bench_host.c) on host buffers. */
typedef struct runner {
    tgl_backend *b;
    const tgl_blas *blas;
    bench_host_fn loop;
    const bench_op *op;
    const size_t *p;
    tgl_ptr dev[BENCH_MAX_BUFS];
    float *host[BENCH_MAX_BUFS];
} runner;

static tgl_status call(const runner *r)
{
    if (r->b)
        return r->op->transfer ? r->op->transfer(r->b, r->p, r->dev, r->host) : r->op->issue(r->b, r->p, r->dev);
    if (r->loop) {
        r->loop(r->p, r->host);
        return TGL_OK;
    }
    return r->op->blas(r->blas, r->p, r->host) ? TGL_OK : TGL_ERR_UNSUPPORTED;
}

static tgl_status finish(const runner *r)
{
    return r->b ? tgl_synchronize(r->b) : TGL_OK;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static tgl_status measure(const runner *r, int repeat, bench_result *out)
{
    tgl_status st;
    if ((st = call(r)) || (st = finish(r))) /* warm-up: compiles, faults pages in */
        return st;
    double t0 = tgl_bench_now();
    if ((st = call(r)) || (st = finish(r)))
        return st;
    double once = tgl_bench_now() - t0;
    int iters = once > 0 ? (int)(0.05 / once) : 1000;
    iters = iters < 1 ? 1 : iters > 1000 ? 1000 : iters;
    if (once > 1.0 && repeat > 3) /* the CPU backend on large cases: keep the run in minutes */
        repeat = 3;
    double t[1000] = {0};
    for (int k = 0; k < repeat; k++) {
        t0 = tgl_bench_now();
        for (int i = 0; i < iters; i++)
            if ((st = call(r)))
                return st;
        if ((st = finish(r)))
            return st;
        t[k] = (tgl_bench_now() - t0) / iters;
    }
    qsort(t, (size_t)repeat, sizeof t[0], cmp_double);
    out->median = repeat % 2 ? t[repeat / 2] : 0.5 * (t[repeat / 2 - 1] + t[repeat / 2]);
    out->min = t[0];
    out->max = t[repeat - 1];
    out->repeats = repeat;
    out->iters = iters;
    return TGL_OK;
}

/* Deterministic inputs: uniform in [-1, 1], or row ids in [0, range). */
static void fill_host(float *h, const bench_buf *u, unsigned *seed)
{
    for (size_t i = 0; i < u->count; i++) {
        *seed = *seed * 1664525u + 1013904223u;
        if (u->fill == BENCH_IDS) {
            int32_t id = (int32_t)((*seed >> 8) % u->range);
            memcpy(&h[i], &id, sizeof id); /* the buffer holds int32 ids, not floats */
        } else
            h[i] = (float)(*seed >> 8) / 8388608.0f - 1.0f;
    }
}

/* Allocates and fills the case's buffers on r->b (f16 ones through tgl_cast_f32_f16), or on the
 * host for OpenBLAS. */
tgl_status tgl_bench_upload(tgl_backend *b, tgl_ptr dst, const float *h, size_t n, int f16)
{
    if (!f16)
        return tgl_copy_htod(b, dst, h, n * sizeof(float));
    tgl_ptr tmp = 0;
    tgl_status st = tgl_alloc(b, n * sizeof(float), &tmp);
    if (!st && !(st = tgl_copy_htod(b, tmp, h, n * sizeof(float))))
        st = tgl_cast_f32_f16(b, tmp, dst, n);
    if (!st)
        st = tgl_synchronize(b);
    tgl_free(b, tmp);
    return st;
}

static int is_blocks(const bench_buf *u)
{
    return u->fill == BENCH_Q8_0 || u->fill == BENCH_Q4_0;
}

static tgl_dtype block_dtype(const bench_buf *u)
{
    return u->fill == BENCH_Q8_0 ? TGL_DTYPE_Q8_0 : TGL_DTYPE_Q4_0;
}

/* Device bytes of a buffer of count elements. */
static size_t device_bytes(const bench_buf *u, size_t count)
{
    return is_blocks(u) ? count / 32 * (u->fill == BENCH_Q8_0 ? 34 : 18) : count * (u->fill == BENCH_F16 ? 2 : 4);
}

/* With tgl_dequantize (into f32) or tgl_quantize (from f32), between the block buffer blocks of
 * count elements and a temporary f32 copy; to_host: read the floats into h, else write them from h. */
static tgl_status block_transfer(tgl_backend *b, const bench_buf *u, tgl_ptr blocks, float *h, size_t count,
                                 int to_host)
{
    tgl_ptr tmp = 0;
    tgl_status st = tgl_alloc(b, count * sizeof(float), &tmp);
    tgl_tensor f = tgl_tensor_contiguous(tmp, TGL_DTYPE_F32, 1, &count);
    tgl_tensor q = tgl_tensor_contiguous(blocks, block_dtype(u), 1, &count);
    if (!st && to_host && !(st = tgl_dequantize(b, &q, &f)))
        st = tgl_copy_dtoh(b, h, tmp, count * sizeof(float));
    if (!st && !to_host && !(st = tgl_copy_htod(b, tmp, h, count * sizeof(float))) && !(st = tgl_quantize(b, &f, &q)))
        st = tgl_synchronize(b);
    if (tmp)
        tgl_free(b, tmp);
    return st;
}

static tgl_status setup(runner *r, const bench_spec *s)
{
    unsigned seed = 12345;
    for (int i = 0; i < s->n_bufs; i++) {
        const bench_buf *u = &s->bufs[i];
        size_t count = u->count ? u->count : 1;
        float *h = malloc(count * sizeof(float));
        if (!h)
            return TGL_ERR_OUT_OF_MEMORY;
        fill_host(h, u, &seed);
        r->host[i] = h; /* OpenBLAS's operands, or the transfer ops' host side */
        if (!r->b)
            continue;
        int f16 = u->fill == BENCH_F16;
        tgl_status st = tgl_alloc(r->b, device_bytes(u, count), &r->dev[i]);
        if (!st)
            st = is_blocks(u) ? block_transfer(r->b, u, r->dev[i], h, count, 0)
                              : tgl_bench_upload(r->b, r->dev[i], h, count, f16);
        if (st)
            return st;
    }
    return TGL_OK;
}

static void teardown(runner *r)
{
    for (int i = 0; i < BENCH_MAX_BUFS; i++) {
        if (r->b && r->dev[i])
            tgl_free(r->b, r->dev[i]);
        free(r->host[i]);
        r->dev[i] = 0;
        r->host[i] = NULL;
    }
}

int tgl_bench_first_use(tgl_backend *b, int size, double *seconds)
{
    int failed = 0;
    for (size_t i = 0; i < tgl_bench_op_count; i++) {
        const bench_op *op = &tgl_bench_ops[i];
        double t0 = tgl_bench_now();
        runner r = {b, NULL, NULL, op, op->sizes[size], {0}, {NULL}};
        bench_spec spec = {0};
        op->spec(r.p, &spec);
        tgl_status st = setup(&r, &spec);
        if (!st && !(st = call(&r)))
            st = finish(&r);
        teardown(&r);
        if (st) {
            fprintf(stderr, "tensorgl bench: %s %s: %s: %s\n", op->name, tgl_bench_size_names[size],
                    tgl_status_string(st), tgl_last_error(b));
            failed++;
        }
        seconds[i] = tgl_bench_now() - t0;
    }
    return failed;
}

/* Buffer i of a case, read back from r as floats (f16 ones widened; ids and other int32
 * contents keep their bits), into *out (malloc'd); its element count in *n. */
static tgl_status read_back(const runner *r, const bench_buf *u, int i, float **out, size_t *n)
{
    size_t count = u->count ? u->count : 1;
    int f16 = u->fill == BENCH_F16;
    float *h = malloc(count * sizeof(float));
    if (!h)
        return TGL_ERR_OUT_OF_MEMORY;
    *out = h;
    *n = count;
    if (is_blocks(u)) /* compared as the floats they hold */
        return block_transfer(r->b, u, r->dev[i], h, count, 1);
    tgl_status st = tgl_copy_dtoh(r->b, h, r->dev[i], count * (f16 ? 2 : 4));
    for (size_t k = count; f16 && k-- > 0;) { /* widened back to front, in place */
        uint16_t half;
        memcpy(&half, (const char *)h + 2 * k, 2);
        uint32_t bits = tgl_f16_to_f32_bits(half);
        memcpy(&h[k], &bits, 4);
    }
    *out = h;
    *n = count;
    return st;
}

/* Bit-identical, or the normalized squared error of got against want within `tol` (NaN where
 * want has none fails). */
static double compare(const float *got, const float *want, size_t n)
{
    if (!memcmp(got, want, n * sizeof(float)))
        return 0.0;
    double err = 0.0, ref = 0.0;
    for (size_t i = 0; i < n; i++) {
        if (isnan(got[i]) != isnan(want[i]))
            return INFINITY;
        if (isnan(got[i]) || (isinf(got[i]) && got[i] == want[i]))
            continue;
        double d = (double)got[i] - (double)want[i];
        err += d * d;
        ref += (double)want[i] * want[i];
    }
    return ref > 0.0 ? err / ref : err > 0.0 ? INFINITY : 0.0;
}

int tgl_bench_check(tgl_backend *b, tgl_backend *ref, int size, double tol, FILE *out)
{
    int failed = 0;
    for (size_t i = 0; i < tgl_bench_op_count; i++) {
        const bench_op *op = &tgl_bench_ops[i];
        double t0 = tgl_bench_now();
        runner r[2] = {{b, NULL, NULL, op, op->sizes[size], {0}, {NULL}},
                       {ref, NULL, NULL, op, op->sizes[size], {0}, {NULL}}};
        bench_spec spec = {0};
        op->spec(r[0].p, &spec);
        tgl_status st = TGL_OK;
        int side = 0;
        for (; side < 2 && !st; side++)
            if (!(st = setup(&r[side], &spec)) && !(st = call(&r[side])))
                st = finish(&r[side]);
        side--; /* the side that failed, when st */
        double worst = 0.0;
        int worst_buf = -1;
        for (int k = 0; k < spec.n_bufs && !st; k++) {
            float *got = NULL, *want = NULL;
            size_t n = 0;
            side = 0;
            if (!(st = read_back(&r[0], &spec.bufs[k], k, &got, &n)) &&
                (side = 1, !(st = read_back(&r[1], &spec.bufs[k], k, &want, &n)))) {
                double e = compare(got, want, n);
                if (op->transfer && r[0].host[k] && r[1].host[k]) /* what a download wrote */
                    e = fmax(e, compare(r[0].host[k], r[1].host[k], n));
                if (!(e <= worst)) {
                    worst = e;
                    worst_buf = k;
                }
            }
            free(got);
            free(want);
        }
        teardown(&r[0]);
        teardown(&r[1]);
        double ms = (tgl_bench_now() - t0) * 1e3;
        if (st) {
            fprintf(out, "  FAILED %-16s %s (%s): %s: %s\n", op->name, spec.shape, side ? "cpu" : "device",
                    tgl_status_string(st), tgl_last_error(side ? ref : b));
            failed++;
        } else if (!(worst <= tol)) {
            fprintf(out, "  FAILED %-16s %s: buffer %d differs from the CPU backend's, NMSE %.3g (at most %.0e)\n",
                    op->name, spec.shape, worst_buf, worst, tol);
            failed++;
        } else {
            fprintf(out, "  ok     %-16s %-20s NMSE %-9.2g %7.1f ms\n", op->name, spec.shape, worst, ms);
        }
        fflush(out);
    }
    return failed;
}

static void describe(tgl_backend *b, char *out, size_t len)
{
    struct tgl_device_info info;
    if (!tgl_device_info(b, &info))
        snprintf(out, len, "%s (%s %s)", info.renderer, info.api, info.version);
}

static void usage(FILE *f)
{
    fprintf(f, "usage: tensorgl bench [--ops LIST] [--sizes LIST] [--backend LIST] [--repeat N] [--json FILE]\n"
                    "  --ops      ops or families, comma-separated (default: all):\n            ");
    for (size_t i = 0; i < tgl_bench_op_count; i++)
        fprintf(f, "%s%s", tgl_bench_ops[i].name, i + 1 < tgl_bench_op_count ? "," : "\n");
    fprintf(f, "  --sizes    small,medium,large (default: all)\n"
                    "  --backend  gl,cpu,openblas,host (default: all available; openblas runs the gemm family, host\n"
                    "             a plain C loop of scatter_add (both kinds), sort, topk, cumsum, gather and random_normal)\n"
                    "  --repeat   timed runs per case, 1..1000 (default 5)\n"
                    "  --json     also write the raw figures to FILE\n\n");
    tgl_cmd_bench_usage(f);
}

int tgl_cmd_bench_suite(int argc, char **argv)
{
    args a = {0};
    if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        usage(stdout);
        return 0;
    }
    int rc = parse(argc, argv, &a);
    if (rc)
        return rc;
    bench_context ctx = {0};
    snprintf(ctx.version, sizeof ctx.version, "%d.%d.%d", TGL_VERSION_MAJOR, TGL_VERSION_MINOR, TGL_VERSION_PATCH);
    time_t now = time(NULL);
    strftime(ctx.date, sizeof ctx.date, "%Y-%m-%d %H:%M UTC", gmtime(&now));

    tgl_backend *be[2] = {NULL, NULL};
    for (int k = B_GL; k <= B_CPU; k++) {
        tgl_options o = {.kind = k == B_GL ? TGL_BACKEND_GL : TGL_BACKEND_CPU};
        if (a.backends[k] && tgl_open(&o, &be[k])) {
            fprintf(stderr, "tensorgl bench: no %s backend: %s\n", backend_names[k], tgl_last_error(NULL));
            be[k] = NULL;
        }
        if (be[k])
            describe(be[k], ctx.renderer[k], sizeof ctx.renderer[k]);
    }
    tgl_blas blas = a.backends[B_BLAS] ? tgl_blas_load() : (tgl_blas){0};
    ctx.blas = blas.sgemm != NULL;

    size_t total = 0, runs = 0, done = 0, n = 0; /* cases; (case, backend) runs */
    for (size_t i = 0; i < tgl_bench_op_count; i++) {
        const bench_op *op = &tgl_bench_ops[i];
        for (int s = 0; s < BENCH_SIZES; s++) {
            if ((a.ops && !listed(a.ops, op->name) && !listed(a.ops, op->family)) || !a.sizes[s])
                continue;
            total++;
            runs += (be[B_GL] != NULL) + (be[B_CPU] != NULL) + (ctx.blas && op->blas) +
                    (a.backends[B_HOST] && tgl_bench_host_loop(op->name));
        }
    }
    bench_result *res = calloc(total * B_COUNT + 1, sizeof *res);
    if (!res) {
        fprintf(stderr, "tensorgl bench: out of memory\n");
        return 1;
    }
    /* Backend by backend, not case by case: a GPU left idle while the CPU backend runs a long
     * case clocks down, and the next GL case would be timed at the lower clock (seen on the
     * H100: GL figures up to 3x slower when interleaved). Results go to their (case, backend)
     * slot and are compacted in case order for the table. */
    rc = 0;
    for (int k = 0; k < B_COUNT; k++) {
        size_t c = 0;
        for (size_t i = 0; i < tgl_bench_op_count; i++) {
            const bench_op *op = &tgl_bench_ops[i];
            if (a.ops && !listed(a.ops, op->name) && !listed(a.ops, op->family))
                continue;
            for (int s = 0; s < BENCH_SIZES; s++) {
                if (!a.sizes[s])
                    continue;
                bench_result *x = &res[c++ * B_COUNT + (size_t)k];
                bench_host_fn loop = k == B_HOST ? tgl_bench_host_loop(op->name) : NULL;
                if ((k < B_BLAS && !be[k]) || (k == B_BLAS && (!ctx.blas || !op->blas)) || (k == B_HOST && !loop))
                    continue;
                fprintf(stderr, "[%zu/%zu] %s %s %s\n", ++done, runs, backend_names[k], op->name,
                        tgl_bench_size_names[s]);
                runner r = {k < B_BLAS ? be[k] : NULL, &blas, loop, op, op->sizes[s], {0}, {NULL}};
                *x = (bench_result){.op = op, .size = s, .backend = backend_names[k]};
                op->spec(r.p, &x->spec);
                tgl_status st = setup(&r, &x->spec);
                if (!st)
                    st = measure(&r, a.repeat, x);
                teardown(&r);
                if (st == TGL_ERR_UNSUPPORTED) {
                    x->error = "unsupported";
                } else if (st) {
                    x->error = tgl_status_string(st);
                    fprintf(stderr, "tensorgl bench: %s %s on %s: %s: %s\n", op->name, tgl_bench_size_names[s],
                            backend_names[k], tgl_status_string(st), r.b ? tgl_last_error(r.b) : "");
                    rc = 1;
                }
            }
        }
    }
    for (size_t i = 0; i < total * B_COUNT; i++)
        if (res[i].op)
            res[n++] = res[i];
    tgl_bench_print_table(&ctx, res, n);
    if (a.json && tgl_bench_write_json(a.json, &ctx, res, n)) {
        fprintf(stderr, "tensorgl bench: cannot write %s\n", a.json);
        rc = 1;
    }
    free(res);
    tgl_blas_unload(&blas);
    tgl_close(be[B_GL]);
    tgl_close(be[B_CPU]);
    return rc;
}

/* `tensorgl bench gemm`: GFLOP/s of tgl_gemm (f32) per size, of tgl_gemm_f16 and
 * tgl_gemm_batched, and GB/s of weights streamed by tgl_matvec, on the default backend
 * (TGL_BACKEND picks it), against the CPU backend and OpenBLAS measured in the same run.
 * OpenBLAS (the CPU's own limit, all cores) is loaded at run time when installed
 * (libopenblas0), so the library and the command do not depend on it. Device figures are the
 * best of 3 runs of back-to-back calls closed by one tgl_synchronize, after a warm-up call;
 * every device job runs before the first reference, so none follows seconds of CPU work. */
#include "bench_blas.h"
#include "bench_clock.h"
#include "bench_suite.h"
#include "commands.h"
#include "tensorgl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { SGEMM, HGEMM, BATCHED, MATVEC };
static const char *kind_names[] = {"sgemm", "gemm_f16", "gemm_batched", "matvec"};

typedef struct job {
    int kind;
    size_t m, n, k, batch;
} job;

static double flops(const job *j)
{
    return j->kind == MATVEC ? 2.0 * j->m * j->k : 2.0 * j->m * j->n * j->k * j->batch;
}

/* The figure the table shows: GFLOP/s, or GB/s of W for matvec. */
static double rate(const job *j, double sec)
{
    return j->kind == MATVEC ? (double)j->m * j->k * sizeof(float) / sec / 1e9 : flops(j) / sec / 1e9;
}

static size_t elems_a(const job *j)
{
    return j->m * j->k * j->batch;
}

static size_t elems_b(const job *j)
{
    return j->kind == MATVEC ? j->k : j->k * j->n * j->batch;
}

static size_t elems_c(const job *j)
{
    return j->kind == MATVEC ? j->m : j->m * j->n * j->batch;
}

static tgl_status issue(tgl_backend *b, const job *j, tgl_ptr a, tgl_ptr bm, tgl_ptr c)
{
    switch (j->kind) {
    case SGEMM: return tgl_gemm(b, TGL_NO_TRANS, TGL_NO_TRANS, j->m, j->n, j->k, 1, a, j->k, bm, j->n, 0, c, j->n);
    case HGEMM:
        return tgl_gemm_f16(b, TGL_NO_TRANS, TGL_NO_TRANS, j->m, j->n, j->k, 1, a, j->k, bm, j->n, 0, c, j->n);
    case BATCHED:
        return tgl_gemm_batched(b, TGL_NO_TRANS, TGL_NO_TRANS, j->m, j->n, j->k, 1, a, j->k, j->m * j->k, bm, j->n,
                                j->k * j->n, 0, c, j->n, j->m * j->n, j->batch);
    default: return tgl_matvec(b, j->m, j->k, a, bm, c);
    }
}

/* Seconds per call on b (0 when b lacks the op); `quick`: a single timed call, for the CPU
 * backend's reference loops. Operands hold values in [0, 1), f16 ones too (converted with
 * tgl_cast_f32_f16), not f32 bit patterns read as halves: NaNs and subnormals among those
 * would send the f16 kernels' conversions down paths a model's numbers do not take. */
static tgl_status time_backend(tgl_backend *b, const job *j, int quick, double *sec)
{
    size_t es = j->kind == HGEMM ? 2 : sizeof(float);
    size_t na = elems_a(j), nb = elems_b(j), nc = elems_c(j), most = na > nb ? (na > nc ? na : nc) : nb;
    float *h = malloc(most * sizeof(float));
    tgl_ptr a = 0, bm = 0, c = 0;
    tgl_status st = h ? TGL_OK : TGL_ERR_OUT_OF_MEMORY;
    for (size_t i = 0; h && i < most; i++)
        h[i] = (float)(i % 97) / 97.0f;
    if (!st && !(st = tgl_alloc(b, na * es, &a)) && !(st = tgl_alloc(b, nb * es, &bm)) &&
        !(st = tgl_alloc(b, nc * es, &c)) && !(st = tgl_bench_upload(b, a, h, na, es == 2)) &&
        !(st = tgl_bench_upload(b, bm, h, nb, es == 2)) &&
        !(st = issue(b, j, a, bm, c)) && !(st = tgl_synchronize(b))) {
        double t0 = tgl_bench_now();
        st = issue(b, j, a, bm, c);
        if (!st)
            st = tgl_synchronize(b);
        *sec = tgl_bench_now() - t0;
        int iters = *sec > 0 ? (int)(0.25 / *sec) : 100;
        iters = iters < 1 ? 1 : iters > 100 ? 100 : iters;
        for (int r = 0; !quick && !st && r < 3; r++) {
            t0 = tgl_bench_now();
            for (int i = 0; !st && i < iters; i++)
                st = issue(b, j, a, bm, c);
            if (!st && !(st = tgl_synchronize(b))) {
                double t = (tgl_bench_now() - t0) / iters;
                *sec = t < *sec ? t : *sec;
            }
        }
    }
    if (st == TGL_ERR_UNSUPPORTED)
        *sec = 0, st = TGL_OK;
    tgl_free(b, a);
    tgl_free(b, bm);
    tgl_free(b, c);
    free(h);
    return st;
}

/* Seconds per call of the same work through OpenBLAS (0 when it is missing or has no f16). */
static double time_blas(const tgl_blas *o, const job *j)
{
    if (!o->sgemm || !o->sgemv || j->kind == HGEMM)
        return 0;
    size_t na = elems_a(j), nb = elems_b(j), nc = elems_c(j);
    float *a = malloc(na * sizeof *a), *bm = malloc(nb * sizeof *bm), *c = calloc(nc, sizeof *c);
    double best = 0;
    for (size_t i = 0; a && i < na; i++)
        a[i] = (float)(i % 97) / 97.0f;
    for (size_t i = 0; bm && i < nb; i++)
        bm[i] = (float)(i % 89) / 89.0f;
    for (int r = 0; a && bm && c && r < 4; r++) { /* run 0 warms the thread pool */
        double t0 = tgl_bench_now();
        for (size_t t = 0; t < (j->kind == MATVEC ? 1 : j->batch); t++) {
            if (j->kind == MATVEC)
                o->sgemv(TGL_CBLAS_ROW_MAJOR, TGL_CBLAS_NO_TRANS, (int)j->m, (int)j->k, 1, a, (int)j->k, bm, 1, 0, c, 1);
            else
                o->sgemm(TGL_CBLAS_ROW_MAJOR, TGL_CBLAS_NO_TRANS, TGL_CBLAS_NO_TRANS, (int)j->m, (int)j->n, (int)j->k, 1,
                         a + t * j->m * j->k, (int)j->k, bm + t * j->k * j->n, (int)j->n, 0, c + t * j->m * j->n,
                         (int)j->n);
        }
        double s = tgl_bench_now() - t0;
        if (r > 0)
            best = best == 0 || s < best ? s : best;
    }
    free(a);
    free(bm);
    free(c);
    return best;
}

static void print_cell(double v)
{
    if (v > 0)
        printf(" %12.2f", v);
    else
        printf(" %12s", "-");
}

static void print_ratio(double num, double den)
{
    if (num > 0 && den > 0)
        printf(" %9.2fx", num / den);
    else
        printf(" %10s", "-");
}

typedef struct args {
    size_t sizes[16][3], n_sizes, mv_rows, mv_cols, batch, batch_n; /* sizes: m, n, k */
    int no_cpu;
} args;

static int parse(int argc, char **argv, args *a)
{
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--sizes") && i + 1 < argc) {
            a->n_sizes = 0;
            /* N (N^3) or MxNxK */
            for (char *p = argv[++i]; *p && a->n_sizes < 16;) {
                size_t *mnk = a->sizes[a->n_sizes++];
                for (int d = 0; d < 3; d++) {
                    char *end;
                    mnk[d] = strtoull(p, &end, 10);
                    if (end == p || !mnk[d])
                        return 0;
                    p = end;
                    if (d == 0 && *p != 'x') {
                        mnk[1] = mnk[2] = mnk[0];
                        break;
                    }
                    if (d < 2 && *p++ != 'x')
                        return 0;
                }
                if (*p && *p != ',')
                    return 0;
                p += *p == ',';
            }
        } else if (!strcmp(argv[i], "--matvec") && i + 1 < argc &&
                   sscanf(argv[i + 1], "%zux%zu", &a->mv_rows, &a->mv_cols) == 2) {
            i++;
        } else if (!strcmp(argv[i], "--batched") && i + 1 < argc &&
                   sscanf(argv[i + 1], "%zux%zu", &a->batch, &a->batch_n) == 2) {
            i++;
        } else if (!strcmp(argv[i], "--no-cpu")) {
            a->no_cpu = 1;
        } else {
            return 0;
        }
    }
    return a->n_sizes && a->mv_rows && a->mv_cols && a->batch && a->batch_n;
}

int tgl_cmd_bench_gemm(int argc, char **argv)
{
    args a = {{{256, 256, 256}, {512, 512, 512}, {1024, 1024, 1024}}, 3, 4096, 4096, 64, 256, 0};
    if (!parse(argc, argv, &a)) {
        fprintf(stderr, "usage: tensorgl bench gemm [--sizes N|MxNxK,...] [--matvec ROWSxCOLS] [--batched BxN] "
                        "[--no-cpu]\n");
        return 2;
    }
    tgl_backend *dev = NULL, *cpu = NULL;
    tgl_options cpu_opts = {.kind = TGL_BACKEND_CPU};
    if (tgl_open(NULL, &dev) || (!a.no_cpu && tgl_open(&cpu_opts, &cpu))) {
        fprintf(stderr, "tensorgl bench: cannot open a backend: %s\n", tgl_last_error(NULL));
        tgl_close(dev);
        return 1;
    }
    tgl_blas o = tgl_blas_load();
    struct tgl_device_info info;
    tgl_device_info(dev, &info);
    printf("tensorgl bench gemm: %s (%s, %s); references: the CPU backend%s, %s\n", info.backend, info.renderer,
           info.version, a.no_cpu ? " (skipped: --no-cpu)" : "",
           o.sgemm ? "OpenBLAS (libopenblas.so.0, all cores)" : "no OpenBLAS (apt-get install libopenblas0)");
    printf("%-13s %-16s %12s %12s %12s %10s %10s   (GFLOP/s; matvec: GB/s of W)\n", "op", "size", info.backend,
           "cpu", "OpenBLAS", "vs cpu", "vs BLAS");

    job jobs[24];
    size_t n_jobs = 0;
    for (size_t i = 0; i < a.n_sizes; i++)
        jobs[n_jobs++] = (job){SGEMM, a.sizes[i][0], a.sizes[i][1], a.sizes[i][2], 1};
    const size_t *last = a.sizes[a.n_sizes - 1];
    jobs[n_jobs++] = (job){HGEMM, last[0], last[1], last[2], 1};
    jobs[n_jobs++] = (job){BATCHED, a.batch_n, a.batch_n, a.batch_n, a.batch};
    jobs[n_jobs++] = (job){MATVEC, a.mv_rows, 1, a.mv_cols, 1};

    /* The device's jobs run back to back before any reference: a GPU left idle for seconds (as
     * during OpenBLAS's 4096^3) runs the next short products up to 5x slower for the first few
     * hundred milliseconds (measured on the H100 with the SM clock steady: commit b6ebabe). */
    int rc = 0;
    double t_devs[24] = {0};
    for (size_t i = 0; i < n_jobs && !rc; i++) {
        tgl_status st = time_backend(dev, &jobs[i], 0, &t_devs[i]);
        if (st) {
            fprintf(stderr, "tensorgl bench: %s: %s: %s\n", kind_names[jobs[i].kind], tgl_status_string(st),
                    tgl_last_error(dev));
            rc = 1;
        }
    }
    for (size_t i = 0; i < n_jobs && !rc; i++) {
        const job *j = &jobs[i];
        double t_dev = t_devs[i], t_cpu = 0;
        tgl_status st = TGL_OK;
        /* The CPU backend is the double-precision oracle, not a fast path: above 1024^3 it would
         * take minutes, so it sits those out. */
        if (cpu && flops(j) <= 2.2e9)
            st = time_backend(cpu, j, 1, &t_cpu);
        if (st) {
            fprintf(stderr, "tensorgl bench: %s: %s: %s\n", kind_names[j->kind], tgl_status_string(st),
                    tgl_last_error(cpu));
            rc = 1;
            break;
        }
        double t_blas = time_blas(&o, j);
        char size[48];
        if (j->kind == MATVEC)
            snprintf(size, sizeof size, "%zux%zu", j->m, j->k);
        else if (j->kind == BATCHED)
            snprintf(size, sizeof size, "%zu x %zu^3", j->batch, j->m);
        else if (j->m == j->n && j->n == j->k)
            snprintf(size, sizeof size, "%zu^3", j->m);
        else
            snprintf(size, sizeof size, "%zux%zux%zu", j->m, j->n, j->k);
        printf("%-13s %-16s", kind_names[j->kind], size);
        print_cell(t_dev > 0 ? rate(j, t_dev) : 0);
        print_cell(t_cpu > 0 ? rate(j, t_cpu) : 0);
        print_cell(t_blas > 0 ? rate(j, t_blas) : 0);
        print_ratio(t_cpu, t_dev);
        print_ratio(t_blas, t_dev);
        printf("\n");
        fflush(stdout);
    }
    tgl_close(cpu);
    tgl_close(dev);
    tgl_blas_unload(&o);
    return rc;
}

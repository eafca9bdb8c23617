/* GEMM tuning (`tensorgl tune`, tgl_tune): times every candidate kernel shape of the device's
 * kind on one square product, f32 and f16, checks each candidate's result against the current
 * choice's, and saves the fastest next to the program cache, in
 * <TGL_CACHE_DIR>/tune-<hash of the identity>.txt:
 *     # tensorgl tuning for <renderer> (<GL version>)
 *     gemm=tiled:128,128,8,8,8
 *     gemm_f16=tiled:64,128,16,4,8
 * Later backends on the same device, library and driver read it at open (tgl_gl_tune_load); its
 * contents are checked like any input: a line that does not parse, or a shape beyond the
 * device's limits, makes the whole file ignored (and logged). TGL_GEMM overrides both. */
#include "gl_internal.h"
#include "../core/files.h"
#include "../core/hash.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_TUNE_FILE 4096

/* Candidates: shared-memory tiles for GPUs (BM, BN, BK, TM, TN, and whether NVIDIA's compiler is
 * asked to unroll every loop; only shapes whose slabs split evenly over the invocations, which
 * gemm_tiled.comp needs), register blocks for llvmpipe
 * (WX, WY, TM, TN). Those a device cannot hold are skipped. */
static const char *const tiled_candidates[] = {
    "tiled:64,64,16,4,4",         "tiled:64,128,16,4,8",         "tiled:128,64,16,8,4",
    "tiled:128,128,8,8,8",        "tiled:128,128,16,8,8",        "tiled:64,64,16,4,4,unroll",
    "tiled:64,128,16,4,8,unroll", "tiled:128,64,16,8,4,unroll",  "tiled:128,128,8,8,8,unroll",
    "tiled:128,128,16,8,8,unroll", "tiled:128,256,16,8,8,unroll", "tiled:64,256,16,8,8,unroll",
    "tiled:64,128,16,8,4,unroll", "tiled:128,256,16,16,8,unroll", "tiled:128,256,16,16,8,unroll,double",
    "tiled:128,256,16,8,8,unroll,double", "tiled:128,128,8,8,8,unroll,double", "tiled:128,128,16,8,8,unroll,double",
};
static const char *const reg_candidates[] = {
    "reg:16,4,8,8", "reg:8,8,8,8", "reg:8,4,8,8", "reg:32,2,8,8", "reg:64,1,8,8",
    "reg:16,4,4,4", "reg:8,8,4,4", "reg:16,4,4,8", "reg:16,4,8,4", "reg:4,4,8,8",
};

static int tune_path(tgl_backend *b, char *out, size_t size)
{
    if (!b->config.cache_dir[0])
        return 0;
    char identity[640];
    tgl_gl_identity(b, identity, sizeof identity);
    static const uint64_t start[2];
    uint64_t h[2];
    tgl__hash128(identity, strlen(identity), start, h);
    int n = snprintf(out, size, "%s/tune-%016llx.txt", b->config.cache_dir, (unsigned long long)h[0]);
    return n > 0 && (size_t)n < size;
}

void tgl_gl_tune_load(tgl_backend *b, tgl_gl_limits *l)
{
    char path[1100], text[MAX_TUNE_FILE + 1];
    if (!tune_path(b, path, sizeof path))
        return;
    FILE *f = tgl__fopen_regular(path);
    if (!f) {
        if (errno == EINVAL)
            tgl__log(b, TGL__LOG_WARN, "ignoring %s: not a regular file", path);
        return; /* not tuned: the table's choice stands */
    }
    size_t n = fread(text, 1, sizeof text, f);
    int read_error = ferror(f);
    fclose(f);
    if (read_error || n > MAX_TUNE_FILE) {
        tgl__log(b, TGL__LOG_WARN, "ignoring %s: unreadable or larger than %d bytes", path, MAX_TUNE_FILE);
        return;
    }
    text[n] = '\0';
    tgl_gl_gemm_config gemm = l->gemm, gemm_f16 = l->gemm_f16;
    int line_no = 0;
    for (char *line = text, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        line_no++;
        if (line[0] == '#' || line[0] == '\0')
            continue;
        int ok = 0;
        if (!strncmp(line, "gemm=", 5))
            ok = tgl_gl_gemm_parse(line + 5, l, &gemm);
        else if (!strncmp(line, "gemm_f16=", 9))
            ok = tgl_gl_gemm_parse(line + 9, l, &gemm_f16);
        if (!ok) {
            tgl__log(b, TGL__LOG_WARN, "ignoring %s: line %d is not gemm= or gemm_f16= with a shape this device "
                     "runs; `tensorgl tune` writes it again", path, line_no);
            return;
        }
    }
    l->gemm = gemm;
    l->gemm_f16 = gemm_f16;
    tgl_gl_profile_mark(l, TGL_GL_TRAIT_gemm, TGL_GL_FROM_TUNE);
    tgl_gl_profile_mark(l, TGL_GL_TRAIT_gemm_f16, TGL_GL_FROM_TUNE);
    if (b->config.flags & TGL_FLAG_DEBUG)
        tgl__log(b, TGL__LOG_DEBUG, "GEMM shapes from %s", path);
}

typedef struct tune_run {
    tgl_backend *b;
    size_t n;
    int f16;
    tgl_ptr a, bm, c;
    float *ref, *got; /* host copies of C: the current choice's, a candidate's */
} tune_run;

static tgl_status product(const tune_run *r)
{
    return r->f16 ? tgl_gemm_f16(r->b, TGL_NO_TRANS, TGL_NO_TRANS, r->n, r->n, r->n, 1.0f, r->a, r->n, r->bm, r->n,
                                 0.0f, r->c, r->n)
                  : tgl_gemm(r->b, TGL_NO_TRANS, TGL_NO_TRANS, r->n, r->n, r->n, 1.0f, r->a, r->n, r->bm, r->n, 0.0f,
                             r->c, r->n);
}

/* C as f32 on the host (an f16 product is widened on the device first). */
static tgl_status read_c(const tune_run *r, float *out)
{
    size_t count = r->n * r->n;
    if (!r->f16)
        return tgl_copy_dtoh(r->b, out, r->c, count * sizeof(float));
    tgl_ptr wide = 0;
    tgl_status st = tgl_alloc(r->b, count * sizeof(float), &wide);
    if (!st && !(st = tgl_cast_f16_f32(r->b, r->c, wide, count)))
        st = tgl_copy_dtoh(r->b, out, wide, count * sizeof(float));
    tgl_free(r->b, wide);
    return st;
}

/* Seconds per product with the current l->gemm(_f16): the best of 3 runs of `calls` products. */
static tgl_status time_product(const tune_run *r, int calls, double *out)
{
    tgl_status st = product(r); /* builds the kernel */
    if (st || (st = tgl_synchronize(r->b)))
        return st;
    double best = 1e30;
    for (int rep = 0; rep < 3; rep++) {
        double t0 = tgl__seconds();
        for (int i = 0; i < calls && !st; i++)
            st = product(r);
        if (st || (st = tgl_synchronize(r->b)))
            return st;
        double t = (tgl__seconds() - t0) / calls;
        best = t < best ? t : best;
    }
    *out = best;
    return TGL_OK;
}

static double nmse(const float *x, const float *ref, size_t n)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        double d = (double)x[i] - (double)ref[i];
        num += d * d;
        den += (double)ref[i] * ref[i];
    }
    return den > 0 ? num / den : num;
}

/* Sets the candidate for every product size (see tune_one). */
static void set_candidate(tgl_gl_limits *l, tgl_gl_gemm_config *slot, const tgl_gl_gemm_config *g)
{
    *slot = l->gemm_medium = l->gemm_small = l->gemm_tiny = *g;
}

/* tune_one's work, with the candidate set for every product size. */
static tgl_status tune_one_shape(tune_run *r, tgl_gl_gemm_config *slot, FILE *report, tgl_gl_gemm_config *chosen)
{
    tgl_gl *gl = tgl_gl_of(r->b);
    const tgl_gl_gemm_config current = *slot;
    const char *const *list = current.tiled ? tiled_candidates : reg_candidates;
    size_t count = current.tiled ? sizeof tiled_candidates / sizeof *tiled_candidates
                                 : sizeof reg_candidates / sizeof *reg_candidates;
    double flops = 2.0 * (double)r->n * (double)r->n * (double)r->n;
    double base_t = 0;
    set_candidate(&gl->limits, slot, &current);
    tgl_status st = time_product(r, 2, &base_t); /* sizes the runs: ~50 ms each */
    int calls = base_t > 0 ? (int)(0.05 / base_t) : 4;
    calls = calls < 1 ? 1 : calls > 200 ? 200 : calls;
    if (st || (st = time_product(r, calls, &base_t)) || (st = read_c(r, r->ref)))
        return st;
    char name[64];
    tgl_gl_gemm_format(&current, name, sizeof name);
    if (report)
        fprintf(report, "%s %zu^3, current %s: %.1f GFLOP/s\n", r->f16 ? "gemm_f16" : "sgemm", r->n, name,
                flops / base_t * 1e-9);
    double best_t = base_t;
    *chosen = current;
    for (size_t i = 0; i < count; i++) {
        tgl_gl_gemm_config g;
        if (!tgl_gl_gemm_parse(list[i], &gl->limits, &g)) {
            if (report)
                fprintf(report, "  %-22s does not fit this device\n", list[i]);
            continue;
        }
        /* candidates differ in shape only: the slot keeps its matvec mode and its texture reads
         * (llvmpipe's register kernel; NVIDIA's large and medium tiles) */
        g.matvec_row_per_invocation = current.matvec_row_per_invocation;
        g.textures = current.textures;
        set_candidate(&gl->limits, slot, &g);
        double t = 0;
        st = time_product(r, calls, &t);
        if (!st)
            st = read_c(r, r->got);
        set_candidate(&gl->limits, slot, &current);
        if (st == TGL_ERR_SHADER || st == TGL_ERR_UNSUPPORTED) { /* this driver cannot build it */
            if (report)
                fprintf(report, "  %-22s not built: %s\n", list[i], tgl_last_error(r->b));
            continue;
        }
        if (st)
            return st;
        double err = nmse(r->got, r->ref, r->n * r->n);
        int right = err <= (r->f16 ? 1e-5 : 1e-9);
        if (report)
            fprintf(report, "  %-22s %9.1f GFLOP/s%s\n", list[i], flops / t * 1e-9,
                    right ? "" : "  (result differs from the current shape's: not taken)");
        if (right && t < best_t * 0.97) { /* a win must beat run-to-run noise */
            best_t = t;
            *chosen = g;
        }
    }
    tgl_gl_gemm_format(chosen, name, sizeof name);
    if (report)
        fprintf(report, "  -> %s (%.2fx the current shape's rate)\n", name, base_t / best_t);
    return TGL_OK;
}

/* Times every candidate for one precision; leaves the winner in *chosen (the current choice
 * when nothing beats it). What is tuned is the tile of large products; gl_gemm.c gives a
 * product whose grid of those tiles is short the renderer's medium or small tile instead, so
 * while timing, those are the candidate too (the tuning product is 2048^3: 128 workgroups of
 * 128 x 256 would otherwise run the medium tile, whatever the candidate). */
static tgl_status tune_one(tune_run *r, tgl_gl_gemm_config *slot, FILE *report, tgl_gl_gemm_config *chosen)
{
    tgl_gl_limits *l = &tgl_gl_of(r->b)->limits;
    const tgl_gl_gemm_config medium = l->gemm_medium, small = l->gemm_small, tiny = l->gemm_tiny;
    tgl_status st = tune_one_shape(r, slot, report, chosen);
    l->gemm_medium = medium;
    l->gemm_small = small;
    l->gemm_tiny = tiny;
    return st;
}

/* Writes the two winners to the tuning file: a temporary file renamed into place. */
static tgl_status save(tgl_backend *b, const tgl_gl_gemm_config *gemm, const tgl_gl_gemm_config *gemm_f16,
                       FILE *report)
{
    char path[1100], tmp[1200];
    if (!tune_path(b, path, sizeof path)) {
        if (report)
            fprintf(report, "not saved: no program cache directory (TGL_CACHE_DIR is empty)\n");
        return TGL_OK;
    }
    tgl_gl *gl = tgl_gl_of(b);
    char g32[64], g16[64];
    tgl_gl_gemm_format(gemm, g32, sizeof g32);
    tgl_gl_gemm_format(gemm_f16, g16, sizeof g16);
    snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
    FILE *f = tgl_gl_make_dirs(b->config.cache_dir) ? NULL : fopen(tmp, "w");
    int ok = f && fprintf(f, "# tensorgl tuning for %s (%s)\ngemm=%s\ngemm_f16=%s\n", gl->renderer, gl->gl_version,
                          g32, g16) > 0;
    if (f && fclose(f))
        ok = 0;
    if (ok && rename(tmp, path))
        ok = 0;
    if (!ok) {
        int err = errno;
        unlink(tmp);
        return tgl__fail(b, TGL_ERR_IO, "tgl_tune: cannot write %s: %s", path, strerror(err));
    }
    if (report)
        fprintf(report, "saved to %s\n", path);
    return TGL_OK;
}

tgl_status tgl_gl_tune(tgl_backend *b, size_t size, FILE *report)
{
    tgl_gl *gl = tgl_gl_of(b);
    if (b->config.gemm[0])
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "tgl_tune: TGL_GEMM=%s fixes the shape; unset it to tune",
                         b->config.gemm);
    size_t n = size ? size : gl->limits.gemm.tiled ? 2048 : 512;
    tune_run r = {b, n, 0, 0, 0, 0, malloc(n * n * sizeof(float)), malloc(n * n * sizeof(float))};
    tgl_status st = TGL_OK;
    if (!r.ref || !r.got)
        st = tgl__fail(b, TGL_ERR_OUT_OF_MEMORY, "tgl_tune: no host memory for two %zu x %zu results", n, n);
    if (!st && !(st = tgl_alloc(b, n * n * sizeof(float), &r.a)) && !(st = tgl_alloc(b, n * n * sizeof(float), &r.bm)))
        st = tgl_alloc(b, n * n * sizeof(float), &r.c);
    /* Inputs in [-1, 1) from a fixed sequence (the f16 runs narrow the same values). */
    if (!st) {
        unsigned seed = 12345;
        for (size_t i = 0; i < n * n; i++) {
            seed = seed * 1664525u + 1013904223u;
            r.got[i] = (float)(seed >> 8) / 8388608.0f - 1.0f;
        }
        if (!(st = tgl_copy_htod(b, r.a, r.got, n * n * sizeof(float))))
            st = tgl_copy_htod(b, r.bm, r.got, n * n * sizeof(float));
    }
    tgl_gl_gemm_config gemm = gl->limits.gemm, gemm_f16 = gl->limits.gemm_f16;
    if (!st)
        st = tune_one(&r, &gl->limits.gemm, report, &gemm);
    if (!st) {
        /* f16 operands: the same values, narrowed on the device, in place of A and B. */
        tgl_ptr a16 = 0, b16 = 0;
        if (!(st = tgl_alloc(b, n * n * 2, &a16)) && !(st = tgl_alloc(b, n * n * 2, &b16)) &&
            !(st = tgl_cast_f32_f16(b, r.a, a16, n * n)) && !(st = tgl_cast_f32_f16(b, r.bm, b16, n * n))) {
            tune_run h = r;
            h.f16 = 1;
            h.a = a16;
            h.bm = b16;
            st = tune_one(&h, &gl->limits.gemm_f16, report, &gemm_f16);
        }
        tgl_free(b, a16);
        tgl_free(b, b16);
    }
    tgl_free(b, r.a);
    tgl_free(b, r.bm);
    tgl_free(b, r.c);
    free(r.ref);
    free(r.got);
    if (st)
        return st;
    gl->limits.gemm = gemm; /* this backend uses the winners from now on, as later ones will */
    gl->limits.gemm_f16 = gemm_f16;
    return save(b, &gemm, &gemm_f16, report);
}

/* tgl_gemm_fused on GL against the CPU oracle and against the unfused chain (tgl_gemm, a
 * broadcast add of the bias, the activation as its unary op or tgl_map expression, a multiply
 * by C's old contents for a gate) on the same backend: every activation with and without a
 * bias, as a term (beta 0, NaN in C that must not leak, and beta != 0) and as a gate, at odd
 * shapes (m = 1 decode rows, primes, ld > cols with the gaps between C's rows checked), on each
 * kind of GEMM kernel, with split-K forced, under a 4 KiB SSBO limit (k sliced: the epilogue
 * once), k == 0, and the refusals with C left intact. */
#include "testing.h"
#include "gl/gl_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FRONT 3 /* floats before each operand inside its allocation */
#define GUARD 5 /* poisoned floats after C's span */

typedef tgt_pair pair;

static int setup(void **state)
{
    return tgt_pair_setup(state, 0x6E35);
}

static int teardown(void **state)
{
    return tgt_pair_teardown(state);
}

typedef struct fcase {
    int ta, tb;
    size_t m, n, k, lda, ldb, ldc;
    float alpha, beta;
    int bias, gate;
    tgl_activation act;
    float slope;
} fcase;

typedef struct operands {
    float *a, *b, *c, *bias;
    size_t na, nb, nc;
} operands;

static size_t span(size_t rows, size_t cols, size_t ld)
{
    return rows && cols ? (rows - 1) * ld + cols : 0;
}

static void describe(const fcase *c, char *out, size_t size)
{
    snprintf(out, size, "%c%c m=%zu n=%zu k=%zu lda=%zu ldb=%zu ldc=%zu alpha=%g beta=%g bias=%d act=%d gate=%d",
             c->ta ? 'T' : 'N', c->tb ? 'T' : 'N', c->m, c->n, c->k, c->lda, c->ldb, c->ldc, (double)c->alpha,
             (double)c->beta, c->bias, (int)c->act, c->gate);
}

static void random_floats(tgt_rng *r, float *p, size_t n, float lo, float hi)
{
    for (size_t i = 0; i < n; i++)
        p[i] = tgt_uniform(r, lo, hi);
}

/* A and B in [-1, 1], the bias in [-1, 1]; C's elements in [-2, 2] where they are read (a term
 * or a gate), a NaN otherwise (beta == 0: it must not leak); the gaps between C's rows poisoned. */
static operands make_operands(tgt_rng *r, const fcase *c)
{
    operands o = {0};
    o.na = c->ta ? span(c->k, c->m, c->lda) : span(c->m, c->k, c->lda);
    o.nb = c->tb ? span(c->n, c->k, c->ldb) : span(c->k, c->n, c->ldb);
    o.nc = span(c->m, c->n, c->ldc);
    o.a = malloc((o.na + 1) * sizeof(float));
    o.b = malloc((o.nb + 1) * sizeof(float));
    o.c = malloc((o.nc + 1) * sizeof(float));
    o.bias = malloc((c->n + 1) * sizeof(float));
    random_floats(r, o.a, o.na, -1, 1);
    random_floats(r, o.b, o.nb, -1, 1);
    random_floats(r, o.bias, c->n, -1, 1);
    tgt_poison(o.c, o.nc);
    for (size_t i = 0; i < c->m; i++)
        for (size_t j = 0; j < c->n; j++)
            o.c[i * c->ldc + j] = c->beta != 0.0f || c->gate ? tgt_uniform(r, -2, 2) : NAN;
    return o;
}

static void free_operands(operands *o)
{
    free(o->a), free(o->b), free(o->c), free(o->bias);
}

/* The fused call on b; returns C's span followed by GUARD floats (all FRONT-offset inside their
 * allocations). */
static float *run_fused(tgl_backend *b, const fcase *c, const operands *o, tgl_status want)
{
    size_t fr = FRONT * sizeof(float), total = o->nc + GUARD;
    float *host = malloc(total * sizeof(float));
    tgt_poison(host, total);
    memcpy(host, o->c, o->nc * sizeof(float));
    tgl_ptr a = tgt_upload(b, o->a, o->na, FRONT), bm = tgt_upload(b, o->b, o->nb, FRONT);
    tgl_ptr bias = c->bias ? tgt_upload(b, o->bias, c->n, FRONT) : 0, pc = tgt_upload(b, host, total, FRONT);
    TGT_EXPECT(b, tgl_gemm_fused(b, (tgl_transpose)c->ta, (tgl_transpose)c->tb, c->m, c->n, c->k, c->alpha, a + fr,
                                 c->lda, bm + fr, c->ldb, c->beta, pc + fr, c->ldc, bias ? bias + fr : 0, c->act,
                                 c->slope, c->gate),
               want);
    TGT_OK(b, tgl_copy_dtoh(b, host, pc + fr, total * sizeof(float)));
    TGT_OK(b, tgl_free(b, a));
    TGT_OK(b, tgl_free(b, bm));
    TGT_OK(b, tgl_free(b, bias));
    TGT_OK(b, tgl_free(b, pc));
    return host;
}

/* The same from unfused calls on b over a dense m x n copy of C; returns its m x n floats. */
static float *run_chain(tgl_backend *b, const fcase *c, const operands *o)
{
    size_t mn = c->m * c->n;
    float *dense = malloc((mn + 1) * sizeof(float));
    for (size_t i = 0; i < c->m; i++)
        memcpy(dense + i * c->n, o->c + i * c->ldc, c->n * sizeof(float));
    tgl_ptr a = tgt_upload(b, o->a, o->na, 0), bm = tgt_upload(b, o->b, o->nb, 0);
    tgl_ptr bias = tgt_upload(b, o->bias, c->n, 0), old = tgt_upload(b, dense, mn, 0), y;
    TGT_OK(b, tgl_alloc(b, mn * sizeof(float), &y));
    TGT_OK(b, tgl_copy_dtod(b, y, old, mn * sizeof(float)));
    TGT_OK(b, tgl_gemm(b, (tgl_transpose)c->ta, (tgl_transpose)c->tb, c->m, c->n, c->k, c->alpha, a, c->lda, bm,
                       c->ldb, c->gate ? 0.0f : c->beta, y, c->n));
    if (c->bias)
        TGT_OK(b, tgl_binary_broadcast(b, TGL_BINARY_ADD, y, (size_t[]){c->m, c->n}, 2, bias, (size_t[]){1, c->n}, 2,
                                       y));
    tgt_activate(b, c->act, c->slope, y, mn);
    if (c->gate)
        TGT_OK(b, tgl_binary(b, TGL_BINARY_MUL, y, old, y, mn));
    TGT_OK(b, tgl_copy_dtoh(b, dense, y, mn * sizeof(float)));
    TGT_OK(b, tgl_free(b, a));
    TGT_OK(b, tgl_free(b, bm));
    TGT_OK(b, tgl_free(b, bias));
    TGT_OK(b, tgl_free(b, old));
    TGT_OK(b, tgl_free(b, y));
    return dense;
}

/* NMSE (each reference element counted as at least 0.1) of C's m x n elements of `got` (rows
 * ldc apart) against those of `want` (rows ld_want apart). */
static double nmse_rows(const fcase *c, const float *got, const float *want, size_t ld_want)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < c->m; i++)
        for (size_t j = 0; j < c->n; j++) {
            double g = got[i * c->ldc + j], w = want[i * ld_want + j];
            if (isnan(g) != isnan(w))
                return INFINITY;
            if (isnan(w))
                continue;
            num += (g - w) * (g - w);
            den += fabs(w) < 0.1 ? 0.01 : w * w;
        }
    return den > 0 ? num / den : num;
}

/* c on gl: against the CPU backend's fused call (NMSE <= 1e-9: f32 sums against double) and
 * against gl's unfused chain (<= 1e-11: the same f32 steps, the bias added before the rounding
 * of the product on one side); the CPU's fused call against its own chain (<= 1e-12); the gaps
 * between C's rows and the guard untouched on both backends. */
static void check_case(pair *p, tgl_backend *gl, const fcase *c, const char *config)
{
    operands o = make_operands(&p->rng, c);
    float *got = run_fused(gl ? gl : p->gl, c, &o, TGL_OK), *want = run_fused(p->cpu, c, &o, TGL_OK);
    float *chain = run_chain(gl ? gl : p->gl, c, &o), *cpu_chain = run_chain(p->cpu, c, &o);
    char what[256];
    describe(c, what, sizeof what);
    for (size_t e = 0; e < o.nc + GUARD; e++) {
        int computed = e < o.nc && e % c->ldc < c->n;
        if (!computed && (tgt_first_unpoisoned(got + e, 1) == 0 || tgt_first_unpoisoned(want + e, 1) == 0))
            fail_msg("%s [%s]: element %zu outside C's m x n was written", what, config, e);
    }
    double d = nmse_rows(c, got, want, c->ldc), dc = nmse_rows(c, got, chain, c->n);
    double cc = nmse_rows(c, want, cpu_chain, c->n);
    if (!(d <= 1e-9))
        fail_msg("%s [%s]: NMSE %.3g against the CPU backend", what, config, d);
    if (!(dc <= 1e-11))
        fail_msg("%s [%s]: NMSE %.3g against the unfused chain", what, config, dc);
    if (!(cc <= 1e-12))
        fail_msg("%s [%s]: the CPU backend's NMSE %.3g against its unfused chain", what, config, cc);
    free(got), free(want), free(chain), free(cpu_chain);
    free_operands(&o);
}

static const float alphas[] = {1.0f, 0.5f, -1.25f}, betas[] = {0.0f, 1.0f, -0.5f};

static fcase random_case(tgt_rng *r, size_t max_dim, int i)
{
    fcase c = {.ta = (int)tgt_below(r, 2), .tb = (int)tgt_below(r, 2)};
    c.m = i % 3 == 0 ? 1 : 1 + tgt_below(r, max_dim); /* a decode step's single row, often */
    c.n = 1 + tgt_below(r, max_dim);
    c.k = 1 + tgt_below(r, max_dim);
    c.lda = (c.ta ? c.m : c.k) + (tgt_below(r, 2) ? tgt_below(r, 5) : 0);
    c.ldb = (c.tb ? c.k : c.n) + (tgt_below(r, 2) ? tgt_below(r, 5) : 0);
    c.ldc = c.n + (tgt_below(r, 2) ? tgt_below(r, 5) : 0);
    c.alpha = alphas[tgt_below(r, 3)];
    c.act = (tgl_activation)(i % TGL_ACTIVATION_COUNT);
    c.gate = (i / TGL_ACTIVATION_COUNT) % 2;
    c.beta = c.gate ? 0.0f : betas[tgt_below(r, 3)];
    c.bias = (int)tgt_below(r, 3) != 0;
    c.slope = tgt_uniform(r, 0.01f, 0.3f);
    return c;
}

/* Every activation as a term and as a gate (drawn in turn), random shapes up to 150 and some
 * past a GPU's tile, on the kernel the device picks. */
static void test_gemm_fused_random(void **state)
{
    pair *p = *state;
    if (!p->gl)
        skip();
    int n = tgt_count(4 * TGL_ACTIVATION_COUNT);
    if (n < 2 * TGL_ACTIVATION_COUNT)
        n = 2 * TGL_ACTIVATION_COUNT;
    for (int i = 0; i < n; i++) {
        fcase c = random_case(&p->rng, i % 5 == 4 ? 300 : 70, i);
        check_case(p, NULL, &c, "device");
    }
    /* aligned operands (vec4 loads and stores), a linear layer's shape and a SwiGLU's */
    const fcase shaped[] = {
        {.tb = 1, .m = 8, .n = 96, .k = 64, .lda = 64, .ldb = 64, .ldc = 96, .alpha = 1, .bias = 1,
         .act = TGL_ACTIVATION_GELU},
        {.tb = 1, .m = 1, .n = 256, .k = 128, .lda = 128, .ldb = 128, .ldc = 256, .alpha = 1,
         .act = TGL_ACTIVATION_SILU, .gate = 1},
        {.m = 64, .n = 128, .k = 100, .lda = 100, .ldb = 128, .ldc = 128, .alpha = 1, .beta = 1, .bias = 1,
         .act = TGL_ACTIVATION_RELU},
    };
    for (size_t i = 0; i < sizeof shaped / sizeof shaped[0]; i++)
        check_case(p, NULL, &shaped[i], "device");
}

/* The register kernel (SSBO loads and buffer textures) and tiled kernels, each with split-K
 * forced (a term's epilogue comes with the last range; a gate never splits). */
static void test_gemm_fused_each_kernel(void **state)
{
    pair *p = *state;
    if (!p->gl)
        skip();
    const tgl_gl_gemm_config configs[] = {
        {.tiled = 0, .wg_x = 8, .wg_y = 8, .tm = 4, .tn = 4, .matvec_row_per_invocation = 1},
        {.tiled = 0, .wg_x = 16, .wg_y = 4, .tm = 8, .tn = 8, .matvec_row_per_invocation = 1, .textures = 1},
        {.tiled = 1, .bm = 64, .bn = 64, .bk = 16, .tm = 4, .tn = 4},
        {.tiled = 1, .bm = 64, .bn = 64, .bk = 16, .tm = 4, .tn = 4, .textures = 1},
        {.tiled = 1, .bm = 32, .bn = 32, .bk = 8, .tm = 4, .tn = 4, .double_slab = 1},
    };
    for (size_t i = 0; i < sizeof configs / sizeof configs[0]; i++) {
        tgl_backend *gl = tgt_open(TGL_BACKEND_GL);
        const tgl_gl_gemm_config *g = &configs[i];
        if (g->tiled && tgl_gl_gemm_shared_bytes(g) > tgl_gl_of(gl)->limits.shared_memory) {
            tgl_close(gl);
            continue;
        }
        tgl_gl_test_set_limits(gl, 0, g);
        char config[32];
        snprintf(config, sizeof config, "configuration %zu", i);
        for (int j = 0; j < 4; j++) {
            fcase c = random_case(&p->rng, 120, (int)(i * 7 + (size_t)j * 3));
            c.m += 32, c.n += 32, c.lda += 32, c.ldb += 32, c.ldc += 32; /* tiles take 32 x 32 and up */
            check_case(p, gl, &c, config);
        }
        if (g->tiled) {
            tgl_gl_test_force_gemm_splits(gl, 3);
            for (int t = 0; t < 4; t++) {
                fcase split = {.ta = t & 1, .tb = t >> 1, .m = 70, .n = 40 + 4 * t, .k = 301 - t, .alpha = 0.5f,
                               .bias = t != 2, .act = (tgl_activation)(1 + 2 * t), .gate = t == 3, .slope = 0.1f};
                split.ldc = split.n;
                split.lda = split.ta ? split.m : split.k;
                split.ldb = split.tb ? split.k : split.n;
                snprintf(config, sizeof config, "configuration %zu, 3 splits", i);
                check_case(p, gl, &split, config);
            }
            tgl_gl_test_force_gemm_splits(gl, 0);
        }
        tgl_close(gl);
    }
}

/* A 4 KiB SSBO limit cuts products into windows: a term's k slices add up in C and the epilogue
 * runs once, with the last; a gate keeps k whole (rows and columns cut instead) or, where k rows
 * or columns pass the window, runs in two passes through a temporary. */
static void test_gemm_fused_windows(void **state)
{
    pair *p = *state;
    if (!p->gl)
        skip();
    tgl_backend *gl = tgt_open(TGL_BACKEND_GL);
    tgl_gl_test_set_limits(gl, 4096, NULL);
    const fcase cases[] = {
        {.m = 40, .n = 37, .k = 300, .lda = 300, .ldb = 37, .ldc = 37, .alpha = 1, .beta = 0.5f, .bias = 1,
         .act = TGL_ACTIVATION_GELU},
        {.ta = 1, .tb = 1, .m = 70, .n = 50, .k = 90, .lda = 70, .ldb = 90, .ldc = 50, .alpha = 2, .bias = 1,
         .act = TGL_ACTIVATION_TANH},
        {.m = 40, .n = 37, .k = 300, .lda = 300, .ldb = 37, .ldc = 39, .alpha = 1, .bias = 1,
         .act = TGL_ACTIVATION_SILU, .gate = 1},
        {.tb = 1, .m = 3, .n = 45, .k = 700, .lda = 700, .ldb = 700, .ldc = 45, .alpha = 1,
         .act = TGL_ACTIVATION_SILU, .gate = 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_case(p, gl, &cases[i], "4 KiB windows");
    /* a gate whose k rows of B (2000 x 5) pass the 1024-float window, transposed or not */
    for (int t = 0; t < 2; t++) {
        fcase wide = {.ta = t, .tb = t, .m = 2, .n = 5, .k = 2000, .lda = t ? 2 : 2000, .ldb = t ? 2000 : 5,
                      .ldc = 7, .alpha = 1, .bias = 1, .act = TGL_ACTIVATION_GELU, .gate = 1};
        check_case(p, gl, &wide, "4 KiB windows, a gate in two passes");
    }
    tgl_close(gl);
}

/* k == 0: C = act(beta C + bias), or act(bias) * C for a gate; m or n == 0 does nothing. */
static void test_gemm_fused_degenerate(void **state)
{
    pair *p = *state;
    if (!p->gl)
        skip();
    const fcase cases[] = {
        {.m = 5, .n = 6, .k = 0, .lda = 1, .ldb = 6, .ldc = 7, .alpha = 1, .bias = 1, .act = TGL_ACTIVATION_RELU},
        {.m = 5, .n = 6, .k = 0, .lda = 1, .ldb = 6, .ldc = 6, .alpha = 1, .beta = -2, .bias = 1,
         .act = TGL_ACTIVATION_SIGMOID},
        {.m = 4, .n = 9, .k = 0, .lda = 1, .ldb = 9, .ldc = 9, .alpha = 1, .bias = 1, .act = TGL_ACTIVATION_SILU,
         .gate = 1},
        {.m = 3, .n = 4, .k = 5, .lda = 5, .ldb = 4, .ldc = 4, .alpha = 1}, /* no epilogue: tgl_gemm */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_case(p, NULL, &cases[i], "device");
    tgl_backend *backends[] = {p->gl, p->cpu};
    for (int i = 0; i < 2; i++) {
        tgl_backend *b = backends[i];
        tgl_ptr buf;
        TGT_OK(b, tgl_alloc(b, 64, &buf));
        TGT_OK(b, tgl_gemm_fused(b, TGL_NO_TRANS, TGL_NO_TRANS, 0, 4, 4, 1, buf, 4, buf, 4, 0, buf, 4, 12345,
                                 TGL_ACTIVATION_RELU, 0, 0));
        TGT_OK(b, tgl_gemm_fused(b, TGL_NO_TRANS, TGL_NO_TRANS, 4, 0, 4, 1, buf, 4, buf, 4, 0, buf, 4, 0,
                                 TGL_ACTIVATION_RELU, 0, 1));
        TGT_OK(b, tgl_free(b, buf));
    }
}

/* Each refusal leaves C as it was. */
static void test_gemm_fused_errors(void **state)
{
    pair *p = *state;
    tgl_backend *backends[] = {p->gl, p->cpu};
    for (int i = 0; i < 2; i++) {
        tgl_backend *b = backends[i];
        if (!b)
            continue;
        tgl_ptr a, bb, c, bias;
        float init[64], got[64];
        for (int e = 0; e < 64; e++)
            init[e] = (float)e;
        TGT_OK(b, tgl_alloc(b, 64 * sizeof(float), &a));
        TGT_OK(b, tgl_alloc(b, 64 * sizeof(float), &bb));
        TGT_OK(b, tgl_alloc(b, 64 * sizeof(float), &c));
        TGT_OK(b, tgl_alloc(b, 4 * sizeof(float), &bias));
        TGT_OK(b, tgl_copy_htod(b, c, init, sizeof init));
        TGT_OK(b, tgl_copy_htod(b, a, init, sizeof init));
        TGT_OK(b, tgl_copy_htod(b, bb, init, sizeof init));
#define FUSED(bias_, act_, slope_, beta_, gate_, c_)                                                               \
    tgl_gemm_fused(b, TGL_NO_TRANS, TGL_NO_TRANS, 4, 4, 4, 1, a, 4, bb, 4, beta_, c_, 4, bias_, act_, slope_, gate_)
        TGT_EXPECT(b, FUSED(bias, (tgl_activation)TGL_ACTIVATION_COUNT, 0.0f, 0.0f, 0, c), TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, FUSED(bias, (tgl_activation)-1, 0.0f, 0.0f, 0, c), TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, FUSED(bias, TGL_ACTIVATION_LEAKY_RELU, NAN, 0.0f, 0, c), TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, FUSED(bias, TGL_ACTIVATION_RELU, INFINITY, 0.0f, 0, c), TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, FUSED(bias, TGL_ACTIVATION_SILU, 0.0f, 0.0f, 2, c), TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, FUSED(bias, TGL_ACTIVATION_SILU, 0.0f, 1.0f, 1, c), TGL_ERR_INVALID_ARGUMENT);
        /* the bias overlapping C, unknown, or shorter than n */
        TGT_EXPECT(b, FUSED(c + 8 * sizeof(float), TGL_ACTIVATION_RELU, 0.0f, 0.0f, 0, c), TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, FUSED((tgl_ptr)0x1234, TGL_ACTIVATION_RELU, 0.0f, 0.0f, 0, c), TGL_ERR_INVALID_POINTER);
        TGT_EXPECT(b, FUSED(bias + sizeof(float), TGL_ACTIVATION_RELU, 0.0f, 0.0f, 0, c), TGL_ERR_INVALID_POINTER);
        /* tgl_gemm's own checks still apply: C overlapping A */
        TGT_EXPECT(b, FUSED(bias, TGL_ACTIVATION_RELU, 0.0f, 0.0f, 0, a + 32), TGL_ERR_INVALID_ARGUMENT);
#undef FUSED
        TGT_OK(b, tgl_copy_dtoh(b, got, c, sizeof got));
        assert_memory_equal(got, init, sizeof init);
        TGT_OK(b, tgl_copy_dtoh(b, got, a, sizeof got));
        assert_memory_equal(got, init, sizeof init);
        TGT_OK(b, tgl_free(b, a));
        TGT_OK(b, tgl_free(b, bb));
        TGT_OK(b, tgl_free(b, c));
        TGT_OK(b, tgl_free(b, bias));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gemm_fused_random),  cmocka_unit_test(test_gemm_fused_each_kernel),
        cmocka_unit_test(test_gemm_fused_windows), cmocka_unit_test(test_gemm_fused_degenerate),
        cmocka_unit_test(test_gemm_fused_errors),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

/* tgl_gemm, tgl_gemm_batched, tgl_gemm_f16 and tgl_matvec on GL against the CPU oracle: every
 * m, n, k in 1..17 (transposes, alpha/beta and ld > cols rotating through them), random large
 * shapes, k up to 4096, both GL kernels on any device, sub-products forced by a shrunken SSBO
 * limit, batches with shared operands and side-by-side C, NaN in C with beta == 0, the gaps
 * between C's rows left alone, and the error cases with buffers checked intact. */
#include "testing.h"
#include "cpu/cpu_half.h"
#include "gl/gl_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OFF 4 /* elements before each operand inside its allocation */

typedef tgt_pair pair;

static int setup(void **state)
{
    return tgt_pair_setup(state, 0x6E33);
}

static int teardown(void **state)
{
    return tgt_pair_teardown(state);
}

typedef struct gcase {
    int ta, tb, f16;
    int quarters; /* operands are multiples of 1/4 in [-1, 1]: see test_gemm_small_exhaustive */
    size_t m, n, k, lda, ldb, ldc;
    float alpha, beta;
    size_t sa, sb, sc, batch;
} gcase;

static size_t span(size_t rows, size_t cols, size_t ld, size_t stride, size_t batch)
{
    return rows && cols && batch ? (batch - 1) * stride + (rows - 1) * ld + cols : 0;
}

static size_t span_a(const gcase *c)
{
    return c->ta ? span(c->k, c->m, c->lda, c->sa, c->batch) : span(c->m, c->k, c->lda, c->sa, c->batch);
}

static size_t span_b(const gcase *c)
{
    return c->tb ? span(c->n, c->k, c->ldb, c->sb, c->batch) : span(c->k, c->n, c->ldb, c->sb, c->batch);
}

static size_t span_c(const gcase *c)
{
    return span(c->m, c->n, c->ldc, c->sc, c->batch);
}

static float to_f32(const void *p, size_t i, int f16)
{
    if (!f16)
        return ((const float *)p)[i];
    uint32_t bits = tgl_f16_to_f32_bits(((const uint16_t *)p)[i]);
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* Host operands of a case: A and B random, C random where it is computed (NaN when beta == 0,
 * which must not leak) and the poison in the gaps between its rows. */
typedef struct operands {
    void *a, *b, *c;
    size_t na, nb, nc, es;
    unsigned char *computed; /* per element of C's span */
} operands;

static void fill_random(tgt_rng *r, void *p, size_t n, int f16, int quarters)
{
    for (size_t i = 0; i < n; i++) {
        float v = tgt_uniform(r, -1.0f, 1.0f);
        if (quarters)
            v = roundf(v * 4.0f) / 4.0f;
        if (f16) {
            uint32_t bits;
            memcpy(&bits, &v, sizeof bits);
            ((uint16_t *)p)[i] = tgl_f32_to_f16_bits(bits);
        } else {
            ((float *)p)[i] = v;
        }
    }
}

static operands make_operands(tgt_rng *r, const gcase *c)
{
    operands o = {0};
    o.es = c->f16 ? 2 : sizeof(float);
    o.na = span_a(c), o.nb = span_b(c), o.nc = span_c(c);
    o.a = malloc((o.na + 1) * o.es);
    o.b = malloc((o.nb + 1) * o.es);
    o.c = malloc((o.nc + 1) * o.es);
    o.computed = calloc(o.nc + 1, 1);
    fill_random(r, o.a, o.na, c->f16, c->quarters);
    fill_random(r, o.b, o.nb, c->f16, c->quarters);
    memset(o.c, 0x7f, o.nc * o.es); /* a NaN pattern in f32 and in f16 */
    for (size_t t = 0; t < c->batch; t++)
        for (size_t i = 0; i < c->m; i++)
            for (size_t j = 0; j < c->n; j++)
                o.computed[t * c->sc + i * c->ldc + j] = 1;
    for (size_t e = 0; e < o.nc; e++)
        if (o.computed[e] && c->beta != 0.0f)
            fill_random(r, (char *)o.c + e * o.es, 1, c->f16, c->quarters);
    return o;
}

static void free_operands(operands *o)
{
    free(o->a);
    free(o->b);
    free(o->c);
    free(o->computed);
}

static tgl_status call(tgl_backend *b, const gcase *c, tgl_ptr pa, tgl_ptr pb, tgl_ptr pc)
{
    if (c->f16)
        return tgl_gemm_f16(b, (tgl_transpose)c->ta, (tgl_transpose)c->tb, c->m, c->n, c->k, c->alpha, pa, c->lda,
                            pb, c->ldb, c->beta, pc, c->ldc);
    if (c->batch == 1 && !c->sa && !c->sb && !c->sc)
        return tgl_gemm(b, (tgl_transpose)c->ta, (tgl_transpose)c->tb, c->m, c->n, c->k, c->alpha, pa, c->lda, pb,
                        c->ldb, c->beta, pc, c->ldc);
    return tgl_gemm_batched(b, (tgl_transpose)c->ta, (tgl_transpose)c->tb, c->m, c->n, c->k, c->alpha, pa, c->lda,
                            c->sa, pb, c->ldb, c->sb, c->beta, pc, c->ldc, c->sc, c->batch);
}

/* C after the case on b: OFF elements of guard, C's span, OFF elements of guard. */
static void *run_on(tgl_backend *b, const gcase *c, const operands *o)
{
    size_t es = o->es, cbytes = (o->nc + 2 * OFF) * es;
    tgl_ptr pa, pb, pc;
    char *host = malloc(cbytes);
    memset(host, 0x7f, cbytes);
    memcpy(host + OFF * es, o->c, o->nc * es);
    TGT_OK(b, tgl_alloc(b, (o->na + OFF) * es + 1, &pa));
    TGT_OK(b, tgl_alloc(b, (o->nb + OFF) * es + 1, &pb));
    TGT_OK(b, tgl_alloc(b, cbytes, &pc));
    if (o->na)
        TGT_OK(b, tgl_copy_htod(b, pa + OFF * es, o->a, o->na * es));
    if (o->nb)
        TGT_OK(b, tgl_copy_htod(b, pb + OFF * es, o->b, o->nb * es));
    TGT_OK(b, tgl_copy_htod(b, pc, host, cbytes));
    TGT_OK(b, call(b, c, pa + OFF * es, pb + OFF * es, pc + OFF * es));
    TGT_OK(b, tgl_copy_dtoh(b, host, pc, cbytes));
    TGT_OK(b, tgl_free(b, pa));
    TGT_OK(b, tgl_free(b, pb));
    TGT_OK(b, tgl_free(b, pc));
    return host;
}

static void describe(const gcase *c, char *out, size_t size)
{
    snprintf(out, size, "%s%c%c m=%zu n=%zu k=%zu lda=%zu ldb=%zu ldc=%zu alpha=%g beta=%g batch=%zu "
             "strides=%zu/%zu/%zu", c->f16 ? "f16 " : "", c->ta ? 'T' : 'N', c->tb ? 'T' : 'N', c->m, c->n, c->k,
             c->lda, c->ldb, c->ldc, (double)c->alpha, (double)c->beta, c->batch, c->sa, c->sb, c->sc);
}

/* Runs c on GL and CPU: computed elements within NMSE `tol`, every other byte (gaps between C's
 * rows, guards) untouched on both. Returns the NMSE. */
static double check_case(pair *p, tgl_backend *gl, const gcase *c, double tol)
{
    operands o = make_operands(&p->rng, c);
    char *got = run_on(gl ? gl : p->gl, c, &o), *want = run_on(p->cpu, c, &o);
    size_t es = o.es, total = o.nc + 2 * OFF;
    char what[256];
    describe(c, what, sizeof what);
    double num = 0, den = 0;
    for (size_t e = 0; e < total; e++) {
        size_t ce = e - OFF;
        int inside = e >= OFF && ce < o.nc && o.computed[ce];
        if (!inside) {
            if (memcmp(got + e * es, want + e * es, es) || (e >= OFF && ce < o.nc &&
                                                            memcmp(got + e * es, (char *)o.c + ce * es, es)))
                fail_msg("%s: element %zd outside C's m x n blocks was changed", what, (ptrdiff_t)ce);
            continue;
        }
        float g = to_f32(got, e, c->f16), w = to_f32(want, e, c->f16);
        if (!isfinite(g) && isfinite(w))
            fail_msg("%s: C element %zu is %g, expected %g", what, ce, (double)g, (double)w);
        num += ((double)g - w) * ((double)g - w);
        den += (double)w * w;
    }
    double nmse = den > 0 ? num / den : num;
    if (!(nmse <= tol))
        fail_msg("%s: NMSE %.3g > %.3g", what, nmse, tol);
    free(got);
    free(want);
    free_operands(&o);
    return nmse;
}

static const float alphas[] = {1.0f, 0.5f, -1.25f, 2.0f}, betas[] = {0.0f, 1.0f, -0.5f, 0.0f};

/* Every m, n, k in 1..17; the transposes, alpha/beta and ld > cols rotate with the index.
 * Operands are random multiples of 1/4 in [-1, 1], so every product and partial sum (with these
 * alphas and betas) is exact in f32 whatever the order and GL must match the oracle exactly.
 * With arbitrary floats, an output of one element whose terms cancel fails the NMSE measure on
 * f32 rounding alone (seen: m = n = 1, k = 7, alpha = -1.25, beta = 1: NMSE 1.8e-9, a relative
 * error of 4e-5 of a near-zero result), a flake of about 1 in 50 runs; rounding on arbitrary
 * values is covered by the larger shapes below, whose outputs have many elements. */
static void test_gemm_small_exhaustive(void **state)
{
    pair *p = *state;
    if (!p->gl)
        skip();
    size_t idx = 0, ran = 0;
    double worst = 0;
    for (size_t m = 1; m <= 17; m++)
        for (size_t n = 1; n <= 17; n++)
            for (size_t k = 1; k <= 17; k++, idx++) {
                if (!tgt_pick(idx))
                    continue;
                gcase c = {.ta = idx & 1, .tb = (idx >> 1) & 1, .m = m, .n = n, .k = k, .batch = 1, .quarters = 1,
                           .alpha = alphas[idx % 4], .beta = betas[(idx / 4) % 4]};
                c.lda = (c.ta ? m : k) + idx % 3;
                c.ldb = (c.tb ? k : n) + (idx / 3) % 3;
                c.ldc = n + (idx / 9) % 2;
                double e = check_case(p, NULL, &c, 1e-9);
                worst = e > worst ? e : worst;
                ran++;
            }
    printf("gemm: %zu of %zu small shapes (TGL_TEST_SCALE), worst NMSE %.3g\n", ran, idx, worst);
}

static gcase random_case(tgt_rng *r, size_t max_dim)
{
    gcase c = {.ta = (int)tgt_below(r, 2), .tb = (int)tgt_below(r, 2), .batch = 1};
    c.m = 1 + tgt_below(r, max_dim);
    c.n = 1 + tgt_below(r, max_dim);
    c.k = 1 + tgt_below(r, max_dim);
    c.lda = (c.ta ? c.m : c.k) + (tgt_below(r, 2) ? tgt_below(r, 9) : 0);
    c.ldb = (c.tb ? c.k : c.n) + (tgt_below(r, 2) ? tgt_below(r, 9) : 0);
    c.ldc = c.n + (tgt_below(r, 2) ? tgt_below(r, 9) : 0);
    c.alpha = alphas[tgt_below(r, 4)];
    c.beta = betas[tgt_below(r, 4)];
    return c;
}

/* Random shapes up to 300 and long k, on the device's own kernel choice. */
static void test_gemm_random_large(void **state)
{
    pair *p = *state;
    if (!p->gl)
        skip();
    for (int i = 0, n = tgt_count(12); i < n; i++) {
        gcase c = random_case(&p->rng, 300);
        check_case(p, NULL, &c, 1e-9);
    }
    const gcase deep[] = {
        {.m = 64, .n = 64, .k = 4096, .lda = 4096, .ldb = 64, .ldc = 64, .alpha = 1, .batch = 1},
        {.ta = 1, .tb = 1, .m = 33, .n = 70, .k = 4093, .lda = 33, .ldb = 4093, .ldc = 71, .alpha = 1, .beta = 1,
         .batch = 1},
        {.m = 256, .n = 256, .k = 256, .lda = 256, .ldb = 256, .ldc = 256, .alpha = 1, .batch = 1},
    };
    for (size_t i = 0; i < sizeof deep / sizeof deep[0]; i++)
        check_case(p, NULL, &deep[i], 1e-9);
}

/* Both kernels whatever the device prefers: the register kernel in several block and
 * workgroup shapes, with SSBO loads and (where the API has them) buffer textures, and the tile
 * shapes of the renderer table. */
static void test_gemm_each_kernel(void **state)
{
    pair *p = *state;
    if (!p->gl)
        skip();
    const tgl_gl_gemm_config configs[] = {
        {.tiled = 0, .wg_x = 8, .wg_y = 8, .tm = 4, .tn = 4, .matvec_row_per_invocation = 1},
        {.tiled = 0, .wg_x = 32, .wg_y = 2, .tm = 8, .tn = 4, .matvec_row_per_invocation = 1},
        {.tiled = 0, .wg_x = 4, .wg_y = 16, .tm = 4, .tn = 8, .matvec_row_per_invocation = 1},
        {.tiled = 0, .wg_x = 8, .wg_y = 8, .tm = 8, .tn = 8, .matvec_row_per_invocation = 1},
        {.tiled = 0, .wg_x = 16, .wg_y = 4, .tm = 8, .tn = 8, .matvec_row_per_invocation = 1, .textures = 1},
        /* invocations' x along the rows (llvmpipe's thin products: gemm_thin) */
        {.tiled = 0, .wg_x = 16, .wg_y = 4, .tm = 4, .tn = 4, .matvec_row_per_invocation = 1, .textures = 1,
         .rows_x = 1},
        {.tiled = 0, .wg_x = 8, .wg_y = 8, .tm = 8, .tn = 4, .matvec_row_per_invocation = 1, .rows_x = 1},
        {.tiled = 1, .bm = 64, .bn = 64, .bk = 16, .tm = 4, .tn = 4},
        {.tiled = 1, .bm = 128, .bn = 128, .bk = 8, .tm = 8, .tn = 8},
        {.tiled = 1, .bm = 128, .bn = 256, .bk = 16, .tm = 8, .tn = 8, .unroll = 1},
        {.tiled = 1, .bm = 64, .bn = 256, .bk = 16, .tm = 8, .tn = 8, .unroll = 1},
        {.tiled = 1, .bm = 64, .bn = 128, .bk = 16, .tm = 8, .tn = 4, .unroll = 1},
        {.tiled = 1, .bm = 128, .bn = 256, .bk = 16, .tm = 16, .tn = 8, .unroll = 1},
        {.tiled = 1, .bm = 128, .bn = 256, .bk = 16, .tm = 16, .tn = 8, .unroll = 1, .double_slab = 1},
        {.tiled = 1, .bm = 64, .bn = 64, .bk = 16, .tm = 4, .tn = 4, .double_slab = 1},
        {.tiled = 1, .bm = 32, .bn = 64, .bk = 16, .tm = 4, .tn = 4, .double_slab = 1}, /* NVIDIA's gemm_tiny */
        /* A and B through buffer textures (products of one matrix; NVIDIA's large tile) */
        {.tiled = 1, .bm = 64, .bn = 64, .bk = 16, .tm = 4, .tn = 4, .textures = 1},
        {.tiled = 1, .bm = 128, .bn = 256, .bk = 16, .tm = 16, .tn = 8, .unroll = 1, .double_slab = 1, .textures = 1},
        /* slabs of 64 vec4s: staged without the warp-uniform mapping (kmajor_slot) */
        {.tiled = 1, .bm = 32, .bn = 32, .bk = 8, .tm = 4, .tn = 4, .double_slab = 1},
    };
    for (size_t i = 0; i < sizeof configs / sizeof configs[0]; i++) {
        if (!tgt_pick(i)) /* each configuration compiles its own kernels */
            continue;
        tgl_backend *gl = tgt_open(TGL_BACKEND_GL);
        const tgl_gl_gemm_config *g = &configs[i];
        if (g->tiled && tgl_gl_gemm_shared_bytes(g) > tgl_gl_of(gl)->limits.shared_memory) {
            tgl_close(gl); /* more shared memory than this device has (llvmpipe: 32 KiB) */
            continue;
        }
        tgl_gl_test_set_limits(gl, 0, g);
        for (int j = 0; j < 6; j++) {
            gcase c = random_case(&p->rng, 200);
            c.m += 32, c.n += 32; /* the tiled kernel takes products of at least 32 x 32 */
            c.ldc += 32, c.lda += 32, c.ldb += 32;
            c.f16 = j == 5;
            check_case(p, gl, &c, c.f16 ? 1e-6 : 1e-9);
        }
        /* every operand as whole vec4s, in each transpose (A, and B transposed, are staged
         * along k and stored transposed in shared memory) */
        for (int t = 0; t < 4; t++) {
            gcase aligned = {.ta = t & 1, .tb = t >> 1, .m = 132, .n = 136, .k = 68, .ldc = 136, .alpha = 1,
                             .beta = 0.5f, .batch = 1};
            aligned.lda = aligned.ta ? aligned.m : aligned.k;
            aligned.ldb = aligned.tb ? aligned.k : aligned.n;
            check_case(p, gl, &aligned, 1e-9);
            aligned.f16 = 1; /* binary16 loaded as whole packed vec4s */
            check_case(p, gl, &aligned, 1e-6);
        }
        /* split-K (GPUs split short grids of one f32 product with beta == 0 and ldc == n): k cut
         * into 3 ranges run as a batch, the last shorter, summed into C; by shape at k = 4096 */
        if (g->tiled) {
            tgl_gl_test_force_gemm_splits(gl, 3);
            for (int t = 0; t < 4; t++) {
                gcase split = {.ta = t & 1, .tb = t >> 1, .m = 70, .n = 40 + 4 * t, .k = 301 - t, .alpha = 0.5f,
                               .batch = 1};
                split.ldc = split.n;
                split.lda = (split.ta ? split.m : split.k) + (t == 3 ? 3 : 0);
                split.ldb = split.tb ? split.k : split.n;
                check_case(p, gl, &split, 1e-9);
            }
            tgl_gl_test_force_gemm_splits(gl, 0);
            gcase deep = {.m = 64, .n = 64, .k = 4096, .lda = 4096, .ldb = 64, .ldc = 64, .alpha = 1, .batch = 1};
            check_case(p, gl, &deep, 1e-9);
        }
        tgl_close(gl);
    }
}

/* Kernel shapes as TGL_GEMM and tune files spell them: flags in either order, each once, and
 * shapes the device cannot hold (double slabs count twice the shared memory) refused. */
static void test_gemm_shape_strings(void **state)
{
    (void)state;
    tgl_gl_limits l = {.wg_invocations = 1024, .wg_size = {1024, 1024, 64}, .shared_memory = 49152,
                       .texture_buffer_texels = 1u << 27};
    tgl_gl_gemm_config g;
    char text[64];
    assert_true(tgl_gl_gemm_parse("tiled:128,256,16,16,8,unroll,double", &l, &g));
    assert_true(g.tiled && g.bm == 128 && g.bn == 256 && g.bk == 16 && g.tm == 16 && g.tn == 8 && g.unroll &&
                g.double_slab);
    tgl_gl_gemm_format(&g, text, sizeof text);
    assert_string_equal(text, "tiled:128,256,16,16,8,unroll,double");
    assert_true(tgl_gl_gemm_parse("tiled:64,64,16,4,4,double,unroll", &l, &g));
    assert_true(g.unroll && g.double_slab);
    assert_true(tgl_gl_gemm_parse("tiled:64,64,16,4,4,double", &l, &g));
    assert_true(!g.unroll && g.double_slab);
    assert_true(tgl_gl_gemm_parse("tiled:64,64,16,4,4", &l, &g));
    assert_true(!g.unroll && !g.double_slab && !g.textures);
    assert_true(tgl_gl_gemm_parse("tiled:128,256,16,16,8,tex,unroll,double", &l, &g));
    assert_true(g.unroll && g.double_slab && g.textures);
    tgl_gl_gemm_format(&g, text, sizeof text);
    assert_string_equal(text, "tiled:128,256,16,16,8,unroll,double,tex");
    l.texture_buffer_texels = 0; /* ES: no buffer textures, so SSBO loads */
    assert_true(tgl_gl_gemm_parse("tiled:64,64,16,4,4,tex", &l, &g));
    assert_true(!g.textures);
    assert_true(tgl_gl_gemm_parse("tiled:128,256,32,8,8", &l, &g)); /* 48 KiB: fits once */
    static const char *const bad[] = {
        "tiled:128,256,32,8,8,double", /* 96 KiB */
        "tiled:64,64,16,4,4,double,double", "tiled:64,64,16,4,4,doubl", "tiled:64,64,16,4,4,",
        "tiled:64,64,16,4,4x", "tiled:64,64,16,4,4,unrolled", "tiled:64,64,16,4", "tiled:64,64,16,4,4,,unroll",
        "tiled:64,64,16,4,4,tex,tex", "tiled:64,64,16,4,4,texture",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_false(tgl_gl_gemm_parse(bad[i], &l, &g));
}

/* A 4 KiB SSBO limit splits products over batches, rows, columns and k (accumulating k slices
 * into C); the results must not change. */
static void test_gemm_split(void **state)
{
    pair *p = *state;
    if (!p->gl)
        skip();
    tgl_backend *gl = tgt_open(TGL_BACKEND_GL);
    tgl_gl_test_set_limits(gl, 4096, NULL);
    const gcase cases[] = {
        {.m = 40, .n = 37, .k = 300, .lda = 300, .ldb = 37, .ldc = 37, .alpha = 1, .beta = 0.5f, .batch = 1},
        {.ta = 1, .tb = 1, .m = 70, .n = 50, .k = 90, .lda = 70, .ldb = 90, .ldc = 50, .alpha = 2, .batch = 1},
        {.m = 9, .n = 9, .k = 9, .lda = 9, .ldb = 9, .ldc = 9, .alpha = 1, .beta = 1, .sa = 81, .sb = 0, .sc = 81,
         .batch = 20},
        {.f16 = 1, .m = 40, .n = 41, .k = 200, .lda = 200, .ldb = 41, .ldc = 41, .alpha = 1, .batch = 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_case(p, gl, &cases[i], cases[i].f16 ? 1e-6 : 1e-9);
    /* Rows longer than half the window (B's and C's 600 floats of 1024): cut by rows, into 4 x 8
     * parts (C's rows, k), not down to a column or two at a time. */
    const gcase long_rows[] = {
        {.m = 4, .n = 600, .k = 8, .lda = 8, .ldb = 600, .ldc = 600, .alpha = 1, .beta = 0.5f, .batch = 1},
        {.ta = 1, .m = 4, .n = 600, .k = 8, .lda = 600, .ldb = 600, .ldc = 600, .alpha = 1, .batch = 1},
    };
    for (size_t i = 0; i < sizeof long_rows / sizeof long_rows[0]; i++) {
        uint64_t before = tgl_gl_of(gl)->seq;
        check_case(p, gl, &long_rows[i], 1e-9);
        uint64_t parts = tgl_gl_of(gl)->seq - before;
        if (parts > 40)
            fail_msg("rows of 600 under a window of 1024: %llu dispatches", (unsigned long long)parts);
    }
    tgl_close(gl);
}

/* Buffer textures of ES 3.1's guaranteed 65536 texels: an operand longer than that is read from
 * an SSBO window instead, so the product stays whole (cut to the texture's length, B of 36 rows
 * of 8000 came out in thousands of one-workgroup parts). */
static void test_gemm_short_textures(void **state)
{
    pair *p = *state;
    if (!p->gl)
        skip();
    tgl_backend *gl = tgt_open(TGL_BACKEND_GL);
    tgl_gl *g = tgl_gl_of(gl);
    if (g->limits.texture_buffer_texels > 65536)
        g->limits.texture_buffer_texels = 65536;
    const gcase cases[] = {
        {.m = 20, .n = 8000, .k = 36, .lda = 36, .ldb = 8000, .ldc = 8000, .alpha = 1, .batch = 1},
        {.tb = 1, .m = 64, .n = 3000, .k = 40, .lda = 40, .ldb = 40, .ldc = 3000, .alpha = 1, .beta = 0.5f, .batch = 1},
        {.m = 20, .n = 100, .k = 36, .lda = 36, .ldb = 100, .ldc = 100, .alpha = 1, .batch = 3, .sa = 0, .sb = 3600,
         .sc = 2000},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint64_t before = g->seq;
        check_case(p, gl, &cases[i], 1e-9);
        if (g->seq - before > 16)
            fail_msg("case %zu: %llu dispatches for one product", i, (unsigned long long)(g->seq - before));
    }
    tgl_close(gl);
}

/* Batches: stacked, A shared (stride 0), C side by side within its rows (heads of attention),
 * odd strides. */
static void test_gemm_batched(void **state)
{
    pair *p = *state;
    if (!p->gl)
        skip();
    const gcase cases[] = {
        {.m = 7, .n = 5, .k = 3, .lda = 3, .ldb = 5, .ldc = 5, .alpha = 1, .sa = 21, .sb = 15, .sc = 35, .batch = 6},
        {.m = 16, .n = 16, .k = 16, .lda = 16, .ldb = 16, .ldc = 16, .alpha = 1, .beta = 1, .sa = 0, .sb = 256,
         .sc = 256, .batch = 5},
        {.tb = 1, .m = 12, .n = 8, .k = 8, .lda = 32, .ldb = 32, .ldc = 32, .alpha = 0.125f, .sa = 8, .sb = 8,
         .sc = 8, .batch = 4},
        {.ta = 1, .m = 33, .n = 17, .k = 65, .lda = 35, .ldb = 19, .ldc = 18, .alpha = -1, .beta = 0.5f, .sa = 2300,
         .sb = 1250, .sc = 601, .batch = 3},
        {.m = 64, .n = 64, .k = 64, .lda = 64, .ldb = 64, .ldc = 64, .alpha = 1, .sa = 4096, .sb = 0, .sc = 4096,
         .batch = 9},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_case(p, NULL, &cases[i], 1e-9);
}

/* binary16 storage with f32 sums: NMSE <= 1e-6 (the result's own rounding is ~1e-7). */
static void test_gemm_f16(void **state)
{
    pair *p = *state;
    if (!p->gl)
        skip();
    for (int i = 0, n = tgt_count(10); i < n; i++) {
        gcase c = random_case(&p->rng, i < n / 2 ? 17 : 150);
        c.f16 = 1;
        check_case(p, NULL, &c, 1e-6);
    }
    gcase deep = {.f16 = 1, .m = 64, .n = 64, .k = 2048, .lda = 2048, .ldb = 64, .ldc = 64, .alpha = 1,
                  .batch = 1};
    check_case(p, NULL, &deep, 1e-6);
}

/* k == 0 gives C = beta * C (zeros for beta == 0, even over NaN); m or n == 0 does nothing. */
static void test_gemm_degenerate(void **state)
{
    pair *p = *state;
    if (!p->gl)
        skip();
    const gcase cases[] = {
        {.m = 5, .n = 6, .k = 0, .lda = 1, .ldb = 6, .ldc = 7, .alpha = 1, .beta = 0, .batch = 1},
        {.m = 5, .n = 6, .k = 0, .lda = 1, .ldb = 6, .ldc = 6, .alpha = 1, .beta = -2, .batch = 1},
        {.tb = 1, .m = 5, .n = 6, .k = 0, .lda = 1, .ldb = 1, .ldc = 6, .alpha = 1, .beta = 0.5f, .batch = 1},
        {.f16 = 1, .m = 3, .n = 3, .k = 0, .lda = 1, .ldb = 3, .ldc = 3, .alpha = 1, .beta = 3, .batch = 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_case(p, NULL, &cases[i], 1e-12);
    tgl_backend *backends[] = {p->gl, p->cpu};
    for (int i = 0; i < 2; i++) {
        tgl_backend *b = backends[i];
        tgl_ptr buf;
        TGT_OK(b, tgl_alloc(b, 64, &buf));
        TGT_OK(b, tgl_gemm(b, TGL_NO_TRANS, TGL_NO_TRANS, 0, 4, 4, 1, buf, 4, buf, 4, 0, buf, 4));
        TGT_OK(b, tgl_gemm(b, TGL_NO_TRANS, TGL_NO_TRANS, 4, 0, 4, 1, buf, 4, buf, 4, 0, buf, 4));
        TGT_OK(b, tgl_gemm_batched(b, TGL_NO_TRANS, TGL_NO_TRANS, 2, 2, 2, 1, buf, 2, 0, buf, 2, 0, 0, buf, 2, 0, 0));
        TGT_OK(b, tgl_matvec(b, 0, 4, buf, buf, buf));
        TGT_OK(b, tgl_free(b, buf));
    }
}

static void matvec_case(pair *p, size_t rows, size_t cols, size_t off)
{
    size_t wn = rows * cols;
    float *w = malloc((wn + 1) * sizeof *w), *x = malloc((cols + 1) * sizeof *x);
    float *out[2];
    /* Short rows take multiples of 1/4 (exact f32 sums), as test_gemm_small_exhaustive and for
     * its reason: one output whose few terms cancel would fail the NMSE on rounding alone. */
    float q = cols <= 17 ? 4.0f : 0.0f;
    for (size_t i = 0; i < wn; i++)
        w[i] = q ? roundf(tgt_uniform(&p->rng, -1, 1) * q) / q : tgt_uniform(&p->rng, -1, 1);
    for (size_t i = 0; i < cols; i++)
        x[i] = q ? roundf(tgt_uniform(&p->rng, -1, 1) * q) / q : tgt_uniform(&p->rng, -1, 1);
    tgl_backend *backends[] = {p->gl, p->cpu};
    for (int i = 0; i < 2; i++) {
        tgl_backend *b = backends[i];
        tgl_ptr pw, px, py;
        size_t ybytes = (rows + 2 * OFF) * sizeof(float);
        out[i] = malloc(ybytes);
        tgt_poison(out[i], rows + 2 * OFF);
        TGT_OK(b, tgl_alloc(b, (wn + off) * sizeof(float) + 4, &pw));
        TGT_OK(b, tgl_alloc(b, (cols + off) * sizeof(float) + 4, &px));
        TGT_OK(b, tgl_alloc(b, ybytes, &py));
        if (wn)
            TGT_OK(b, tgl_copy_htod(b, pw + off * 4, w, wn * sizeof(float)));
        if (cols)
            TGT_OK(b, tgl_copy_htod(b, px + off * 4, x, cols * sizeof(float)));
        TGT_OK(b, tgl_copy_htod(b, py, out[i], ybytes));
        TGT_OK(b, tgl_matvec(b, rows, cols, pw + off * 4, px + off * 4, py + OFF * 4));
        TGT_OK(b, tgl_copy_dtoh(b, out[i], py, ybytes));
        TGT_OK(b, tgl_free(b, pw));
        TGT_OK(b, tgl_free(b, px));
        TGT_OK(b, tgl_free(b, py));
    }
    assert_int_equal(tgt_first_unpoisoned(out[0], OFF), OFF);
    assert_int_equal(tgt_first_unpoisoned(out[0] + OFF + rows, OFF), OFF);
    assert_int_equal(tgt_first_unpoisoned(out[0] + OFF, rows), 0);
    double e = tgt_nmse(out[0] + OFF, out[1] + OFF, rows);
    if (!(e <= 1e-9))
        fail_msg("matvec %zu x %zu (offset %zu): NMSE %.3g", rows, cols, off, e);
    free(out[0]);
    free(out[1]);
    free(w);
    free(x);
}

static void test_matvec(void **state)
{
    pair *p = *state;
    if (!p->gl)
        skip();
    const size_t shapes[][3] = {{1, 1, 0},   {1, 7, 1},    {7, 1, 0},     {13, 17, 3},   {64, 64, 0},
                                {100, 4, 1}, {257, 333, 4}, {31, 1024, 0}, {4096, 4096, 0}, {5, 0, 0},
                                /* llvmpipe's rows take 16 columns per loop trip, then 8, then 4
                                 * (whole vec4s) or 2, then 1: rows of 1, 3, 33 and 40 vec4s */
                                {100, 4, 0}, {17, 12, 0}, {9, 132, 0}, {11, 160, 4},
                                {9, 1028, 0}, {3, 1032, 4}, {5, 1036, 0}, {3, 1030, 1}, {2, 1039, 0},
                                /* llvmpipe's vectors of 8 rows, 8 a workgroup: a last group and
                                 * vector cut short, rows of 375 vec4s (a last trip on 7 lanes) */
                                {203, 2048, 0}, {130, 1500, 4}, {1, 1024, 0},
                                /* rows longer than llvmpipe's loop limit lets one invocation walk */
                                {6, 600001, 0}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        matvec_case(p, shapes[i][0], shapes[i][1], shapes[i][2]);
}

/* Each error leaves C as it was. */
static void test_gemm_errors(void **state)
{
    pair *p = *state;
    tgl_backend *backends[] = {p->gl, p->cpu};
    for (int i = 0; i < 2; i++) {
        tgl_backend *b = backends[i];
        if (!b)
            continue;
        tgl_ptr a, bb, c;
        float init[64], got[64];
        for (int e = 0; e < 64; e++)
            init[e] = (float)e;
        TGT_OK(b, tgl_alloc(b, 64 * sizeof(float), &a));
        TGT_OK(b, tgl_alloc(b, 64 * sizeof(float), &bb));
        TGT_OK(b, tgl_alloc(b, 64 * sizeof(float), &c));
        TGT_OK(b, tgl_copy_htod(b, c, init, sizeof init));
        TGT_OK(b, tgl_copy_htod(b, a, init, sizeof init));
        /* ld smaller than the stored row length */
        TGT_EXPECT(b, tgl_gemm(b, TGL_NO_TRANS, TGL_NO_TRANS, 4, 4, 4, 1, a, 3, bb, 4, 0, c, 4),
                   TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_gemm(b, TGL_TRANS, TGL_NO_TRANS, 4, 4, 2, 1, a, 3, bb, 4, 0, c, 4), TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_gemm(b, TGL_NO_TRANS, TGL_TRANS, 4, 4, 4, 1, a, 4, bb, 3, 0, c, 4), TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_gemm(b, TGL_NO_TRANS, TGL_NO_TRANS, 4, 4, 4, 1, a, 4, bb, 4, 0, c, 3),
                   TGL_ERR_INVALID_ARGUMENT);
        /* k * lda past A's allocation */
        TGT_EXPECT(b, tgl_gemm(b, TGL_TRANS, TGL_NO_TRANS, 4, 4, 9, 8, a, 8, bb, 4, 0, c, 4),
                   TGL_ERR_INVALID_POINTER);
        TGT_EXPECT(b, tgl_gemm(b, TGL_NO_TRANS, TGL_NO_TRANS, 4, 4, 4, 1, a + 4, 21, bb, 4, 0, c, 4),
                   TGL_ERR_INVALID_POINTER);
        /* C overlapping A or B */
        TGT_EXPECT(b, tgl_gemm(b, TGL_NO_TRANS, TGL_NO_TRANS, 4, 4, 4, 1, a, 4, bb, 4, 0, a + 32, 4),
                   TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_gemm(b, TGL_NO_TRANS, TGL_NO_TRANS, 4, 4, 4, 1, a, 4, c + 60, 4, 0, c, 4),
                   TGL_ERR_INVALID_ARGUMENT);
        /* bad flags, C batches sharing elements, stride_c 0, misaligned f16 */
        TGT_EXPECT(b, tgl_gemm(b, (tgl_transpose)2, TGL_NO_TRANS, 4, 4, 4, 1, a, 4, bb, 4, 0, c, 4),
                   TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_gemm_batched(b, TGL_NO_TRANS, TGL_NO_TRANS, 2, 2, 2, 1, a, 2, 4, bb, 2, 4, 0, c, 2, 3, 2),
                   TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_gemm_batched(b, TGL_NO_TRANS, TGL_NO_TRANS, 2, 2, 2, 1, a, 2, 4, bb, 2, 4, 0, c, 2, 0, 2),
                   TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_gemm_f16(b, TGL_NO_TRANS, TGL_NO_TRANS, 2, 2, 2, 1, a + 1, 2, bb, 2, 0, c, 2),
                   TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_gemm(b, TGL_NO_TRANS, TGL_NO_TRANS, 2, 2, 2, 1, (tgl_ptr)0x1234, 2, bb, 2, 0, c, 2),
                   TGL_ERR_INVALID_POINTER);
        TGT_EXPECT(b, tgl_gemm(b, TGL_NO_TRANS, TGL_NO_TRANS, SIZE_MAX / 2, 2, 2, 1, a, 2, bb, 2, 0, c, 2),
                   TGL_ERR_INVALID_ARGUMENT);
        /* matvec: y overlapping W, W past its allocation */
        TGT_EXPECT(b, tgl_matvec(b, 4, 4, a, bb, a + 8), TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_matvec(b, 8, 9, a, bb, c), TGL_ERR_INVALID_POINTER);
        TGT_OK(b, tgl_copy_dtoh(b, got, c, sizeof got));
        assert_memory_equal(got, init, sizeof init);
        TGT_OK(b, tgl_copy_dtoh(b, got, a, sizeof got));
        assert_memory_equal(got, init, sizeof init);
        TGT_OK(b, tgl_free(b, a));
        TGT_OK(b, tgl_free(b, bb));
        TGT_OK(b, tgl_free(b, c));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gemm_small_exhaustive), cmocka_unit_test(test_gemm_random_large),
        cmocka_unit_test(test_gemm_each_kernel),      cmocka_unit_test(test_gemm_split),
        cmocka_unit_test(test_gemm_short_textures),
        cmocka_unit_test(test_gemm_batched),          cmocka_unit_test(test_gemm_f16),
        cmocka_unit_test(test_gemm_degenerate),       cmocka_unit_test(test_matvec),
        cmocka_unit_test(test_gemm_errors),           cmocka_unit_test(test_gemm_shape_strings),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

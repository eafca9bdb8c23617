/* tgl_binary_broadcast and tgl_permute on GL compared with the CPU oracle (and the oracle with
 * hand-built results), over shapes of 1..8 dims, poisoned outputs with guards, in place where
 * allowed; inputs past the SSBO block limit (a shrunk limit: boxes of the index space);
 * tgl_broadcast_shape and the error cases. */
#include "testing.h"
#include "gl/gl_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define GUARD 8

typedef tgt_pair pair;

static int setup(void **state)
{
    return tgt_pair_setup(state, 0x5A9E);
}

static int teardown(void **state)
{
    return tgt_pair_teardown(state);
}

static size_t count(const size_t *shape, size_t ndim)
{
    size_t n = 1;
    for (size_t d = 0; d < ndim; d++)
        n *= shape[d];
    return n;
}

static tgl_ptr upload(tgl_backend *b, const float *x, size_t n, size_t front)
{
    tgl_ptr p;
    TGT_OK(b, tgl_alloc(b, (n + front) * sizeof(float), &p));
    TGT_OK(b, tgl_copy_htod(b, p + front * sizeof(float), x, n * sizeof(float)));
    return p;
}

/* Floats ahead of a, b and the output in their buffers: 1 leaves every operand 4 bytes past a
 * 16-byte boundary, 4 puts it on one (GL's vec4 variant VEC in strided.comp, on llvmpipe, reads
 * 16-byte-aligned inputs as vec4s). */
static const size_t layouts[4][3] = {{1, 1, 1}, {4, 4, 4}, {4, 1, 4}, {1, 4, 4}};

/* Runs the op into a poisoned output (front[2] floats of front guard, GUARD after). perm ==
 * NULL: broadcast a (as) op b (bs); else permute a. in_place: out is a's own buffer (a then
 * sits at the output's front). */
static float *run_on(tgl_backend *be, int op, const float *a, const size_t *as, size_t an, const float *b,
                     const size_t *bs, size_t bn, const size_t *perm, size_t n_out, int in_place,
                     const size_t *front)
{
    size_t fo = front[2], fa = in_place ? fo : front[0], total = fo + n_out + GUARD, bytes = total * sizeof(float);
    float *host = malloc(bytes);
    tgt_poison(host, total);
    tgl_ptr pa, pb = 0, po;
    TGT_OK(be, tgl_alloc(be, bytes, &po));
    if (in_place)
        memcpy(host + fo, a, n_out * sizeof(float));
    TGT_OK(be, tgl_copy_htod(be, po, host, bytes));
    pa = in_place ? po : upload(be, a, count(as, an), fa);
    if (perm) {
        TGT_OK(be, tgl_permute(be, pa + 4 * fa, po + 4 * fo, as, an, perm));
    } else {
        pb = upload(be, b, count(bs, bn), front[1]);
        TGT_OK(be, tgl_binary_broadcast(be, op, pa + 4 * fa, as, an, pb + 4 * front[1], bs, bn, po + 4 * fo));
    }
    TGT_OK(be, tgl_copy_dtoh(be, host, po, bytes));
    if (!in_place)
        TGT_OK(be, tgl_free(be, pa));
    TGT_OK(be, tgl_free(be, pb));
    TGT_OK(be, tgl_free(be, po));
    return host;
}

static float *randoms(tgt_rng *r, size_t n, int op)
{
    float *x = malloc((n ? n : 1) * sizeof(float));
    for (size_t i = 0; i < n; i++)
        x[i] = op == TGL_BINARY_POW || op == TGL_BINARY_DIV ? tgt_uniform(r, 0.5f, 3.0f) : tgt_uniform(r, -5, 5);
    return x;
}

/* Cases with a last dimension of 32 or more take GL's row-grid variant (ROWS in strided.comp),
 * shorter ones the flat one; [70000, 32] + [32] needs more rows than one grid column holds.
 * Rows of whole vec4s at an aligned output take VEC on llvmpipe: each case runs every layout
 * (over its ops), so inputs are read as vec4s, as four strided elements (stride 0 included),
 * and mixed; 3-D and 4-D shapes split row indices into coordinates. */
static void broadcast_cases(void *ctx)
{
    pair *p = ctx;
    static const struct { size_t an, a[8], bn, b[8]; } cases[] = {
        {3, {3, 1, 5}, 3, {1, 4, 1}}, {1, {7}, 3, {2, 3, 7}}, {1, {1}, 1, {1}}, {2, {2, 3}, 1, {3}},
        {2, {4, 1}, 2, {4, 6}}, {5, {2, 1, 3, 1, 2}, 5, {1, 5, 1, 4, 1}}, {3, {33, 1, 17}, 2, {100, 17}},
        {8, {2, 1, 2, 1, 2, 1, 2, 3}, 8, {1, 2, 1, 2, 1, 2, 1, 3}}, {2, {3, 0}, 1, {1}}, {3, {2, 3, 4}, 3, {2, 3, 4}},
        {2, {64, 300}, 1, {300}}, {3, {5, 1, 257}, 2, {3, 1}}, {2, {70000, 32}, 1, {32}},
        {3, {6, 5, 64}, 3, {6, 1, 1}}, {2, {64, 1}, 2, {1, 128}}, {1, {256}, 1, {256}}, {4, {2, 3, 4, 40}, 2, {4, 40}},
        {3, {3, 7, 36}, 3, {3, 1, 36}}, {2, {9, 33}, 1, {33}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        size_t os[TGL_MAX_DIMS], on;
        TGT_OK(NULL, tgl_broadcast_shape(cases[c].a, cases[c].an, cases[c].b, cases[c].bn, os, &on));
        size_t n_out = count(os, on);
        for (int op = 0; op <= TGL_BINARY_POW; op++) { /* the ops tgl_binary_broadcast takes */
            float *a = randoms(&p->rng, count(cases[c].a, cases[c].an), op);
            float *b = randoms(&p->rng, count(cases[c].b, cases[c].bn), op);
            int in_place = n_out == count(cases[c].a, cases[c].an) && op % 2 == 0;
            const size_t *f = layouts[(c + (size_t)op) % 4];
            float *g =
                run_on(p->gl, op, a, cases[c].a, cases[c].an, b, cases[c].b, cases[c].bn, NULL, n_out, in_place, f);
            float *w =
                run_on(p->cpu, op, a, cases[c].a, cases[c].an, b, cases[c].b, cases[c].bn, NULL, n_out, in_place, f);
            if (tgt_first_unpoisoned(g, f[2]) != f[2] || tgt_first_unpoisoned(g + f[2] + n_out, GUARD) != GUARD)
                fail_msg("broadcast case %zu %s: guard overwritten", c, tgl_binary_name(op));
            double e = tgt_nmse(g + f[2], w + f[2], n_out);
            if (!(e <= (op == TGL_BINARY_POW ? 1e-9 : 1e-10)))
                fail_msg("broadcast case %zu %s, layout %zu/%zu/%zu: NMSE %.3g (seed %llu)", c, tgl_binary_name(op),
                         f[0], f[1], f[2], e, (unsigned long long)tgt_seed());
            free(a), free(b), free(g), free(w);
        }
    }
}

static void test_broadcast(void **state)
{
    pair *p = *state;
    tgt_with_and_without_textures(p->gl, broadcast_cases, p);
    /* The oracle against a hand-built broadcast: [2,1] + [3] -> [2,3]. */
    const float a[2] = {10, 20}, b[3] = {1, 2, 3}, want[6] = {11, 12, 13, 21, 22, 23};
    size_t as[2] = {2, 1}, bs[1] = {3};
    float *got = run_on(p->cpu, TGL_BINARY_ADD, a, as, 2, b, bs, 1, NULL, 6, 0, layouts[0]);
    assert_memory_equal(got + 1, want, sizeof want);
    free(got);
}

/* Random permutations; the last ten trials have dimensions up to 80, so some outputs end in a
 * dimension of 32 or more (GL's row-grid variant); odd trials put both operands 16-byte aligned.
 * Then fixed ones, each in both layouts: outputs whose rows are whole vec4s (VEC on llvmpipe
 * when aligned), transposes (strided reads) and permutes that keep the last axis (vec4 reads);
 * and permutes that move the input's last axis (transpose.comp, where limits.transpose asks and
 * P, the input's last axis, has 8 elements or more for tiles, a multiple of 4 for blocks): L
 * (the output's last kept axis) a multiple of 8 (TGL_WIDE), of 4 only, odd; P odd, 8, and 4
 * (blocks; the gather where tiles are asked for); extents of 1 to drop; 0, 1 and 2 other axes;
 * and 65537 of them (two z chunks). */
static void permute_trials(void *ctx)
{
    pair *p = ctx;
    static const struct { size_t n, shape[8], perm[8]; } fixed[] = {
        {2, {40, 64}, {1, 0}}, {3, {3, 5, 64}, {1, 0, 2}}, {3, {4, 6, 36}, {2, 0, 1}}, {4, {2, 3, 4, 32}, {2, 0, 1, 3}},
        {3, {5, 33, 8}, {0, 2, 1}}, {2, {36, 40}, {1, 0}}, {2, {33, 70}, {1, 0}}, {3, {3, 37, 65}, {0, 2, 1}},
        {3, {3, 8, 32}, {0, 2, 1}}, {3, {4, 8, 32}, {2, 0, 1}}, {4, {2, 3, 16, 32}, {1, 3, 0, 2}},
        {4, {1, 16, 1, 32}, {3, 2, 1, 0}}, {3, {65537, 4, 8}, {0, 2, 1}}, {2, {70, 4}, {1, 0}},
    };
    for (size_t c = 0; c < 2 * sizeof fixed / sizeof fixed[0]; c++) {
        size_t k = c / 2, n = count(fixed[k].shape, fixed[k].n);
        float *x = randoms(&p->rng, n, 0);
        const size_t *f = layouts[c % 2];
        float *g = run_on(p->gl, 0, x, fixed[k].shape, fixed[k].n, NULL, NULL, 0, fixed[k].perm, n, 0, f);
        float *w = run_on(p->cpu, 0, x, fixed[k].shape, fixed[k].n, NULL, NULL, 0, fixed[k].perm, n, 0, f);
        if (memcmp(g, w, (f[2] + n + GUARD) * sizeof(float)))
            fail_msg("permute case %zu, layout %zu: gl differs from cpu (guards included)", k, f[2]);
        free(x), free(g), free(w);
    }
    for (int trial = 0; trial < 50; trial++) {
        size_t ndim = 1 + tgt_below(&p->rng, trial < 30 ? 5 : trial < 40 ? 8 : 3), shape[8], perm[8];
        for (size_t d = 0; d < ndim; d++) {
            shape[d] = 1 + tgt_below(&p->rng, trial >= 40 ? 80 : ndim > 5 ? 3 : 9);
            perm[d] = d;
        }
        for (size_t d = ndim; d-- > 1;) { /* Fisher-Yates */
            size_t j = tgt_below(&p->rng, d + 1), t = perm[d];
            perm[d] = perm[j], perm[j] = t;
        }
        size_t n = count(shape, ndim);
        float *x = randoms(&p->rng, n, 0);
        const size_t *f = layouts[trial % 2];
        float *g = run_on(p->gl, 0, x, shape, ndim, NULL, NULL, 0, perm, n, 0, f);
        float *w = run_on(p->cpu, 0, x, shape, ndim, NULL, NULL, 0, perm, n, 0, f);
        if (memcmp(g, w, (f[2] + n + GUARD) * sizeof(float)))
            fail_msg("permute trial %d (%zu dims, %zu elements): gl differs from cpu", trial, ndim, n);
        free(x), free(g), free(w);
    }
}

static void test_permute(void **state)
{
    pair *p = *state;
    /* each way GL may run the permutes that move the input's last axis */
    tgl_gl_limits *l = &tgl_gl_of(p->gl)->limits;
    int device_choice = l->transpose;
    for (int mode = TGL_GL_TRANSPOSE_OFF; mode <= TGL_GL_TRANSPOSE_BLOCK4; mode++) {
        l->transpose = mode;
        tgt_with_and_without_textures(p->gl, permute_trials, p);
    }
    l->transpose = device_choice;
    /* The oracle against a hand-built transpose: [2,3] -> [3,2]. */
    const float x[6] = {1, 2, 3, 4, 5, 6}, want[6] = {1, 4, 2, 5, 3, 6};
    size_t shape[2] = {2, 3}, perm[2] = {1, 0};
    float *got = run_on(p->cpu, 0, x, shape, 2, NULL, NULL, 0, perm, 6, 0, layouts[0]);
    assert_memory_equal(got + 1, want, sizeof want);
    free(got);
}

/* Under a 4 KiB SSBO limit (1016 floats) every case below has an input past it, so GL halves
 * the index space into boxes: broadcasts with big inputs (one of them in place), transposes,
 * a 3-D rotation, 8 dims, and shapes whose last dimension takes the row grid. */
static void past_block_limit(void *ctx)
{
    pair *p = ctx;
    static const struct { size_t an, a[8], bn, b[8]; } bc[] = {
        {2, {40, 50}, 1, {50}}, {2, {40, 50}, 2, {40, 1}}, {3, {7, 1, 300}, 3, {1, 9, 300}}, {1, {5000}, 1, {5000}},
    };
    for (size_t c = 0; c < sizeof bc / sizeof bc[0]; c++) {
        size_t os[TGL_MAX_DIMS], on;
        TGT_OK(NULL, tgl_broadcast_shape(bc[c].a, bc[c].an, bc[c].b, bc[c].bn, os, &on));
        size_t n_out = count(os, on);
        int op = (int)(c % (TGL_BINARY_POW + 1)), in_place = c == 0;
        float *a = randoms(&p->rng, count(bc[c].a, bc[c].an), op), *b = randoms(&p->rng, count(bc[c].b, bc[c].bn), op);
        float *g = run_on(p->gl, op, a, bc[c].a, bc[c].an, b, bc[c].b, bc[c].bn, NULL, n_out, in_place, layouts[0]);
        float *w = run_on(p->cpu, op, a, bc[c].a, bc[c].an, b, bc[c].b, bc[c].bn, NULL, n_out, in_place, layouts[0]);
        if (tgt_first_unpoisoned(g, 1) != 1 || tgt_first_unpoisoned(g + 1 + n_out, GUARD) != GUARD)
            fail_msg("broadcast case %zu past a 4 KiB limit: guard overwritten", c);
        double e = tgt_nmse(g + 1, w + 1, n_out);
        if (!(e <= (op == TGL_BINARY_POW ? 1e-9 : 1e-10)))
            fail_msg("broadcast case %zu %s past a 4 KiB limit: NMSE %.3g (seed %llu)", c, tgl_binary_name(op), e,
                     (unsigned long long)tgt_seed());
        free(a), free(b), free(g), free(w);
    }
    static const struct { size_t n, shape[8], perm[8]; } pc[] = {
        {2, {100, 100}, {1, 0}}, {2, {3, 2000}, {1, 0}}, {3, {30, 40, 5}, {2, 0, 1}}, {3, {12, 9, 70}, {0, 2, 1}},
        {8, {2, 3, 2, 4, 2, 3, 2, 5}, {7, 3, 0, 5, 1, 6, 2, 4}}, {2, {1, 1500}, {1, 0}},
    };
    for (size_t c = 0; c < sizeof pc / sizeof pc[0]; c++) {
        size_t n = count(pc[c].shape, pc[c].n);
        float *x = randoms(&p->rng, n, 0);
        float *g = run_on(p->gl, 0, x, pc[c].shape, pc[c].n, NULL, NULL, 0, pc[c].perm, n, 0, layouts[0]);
        float *w = run_on(p->cpu, 0, x, pc[c].shape, pc[c].n, NULL, NULL, 0, pc[c].perm, n, 0, layouts[0]);
        if (memcmp(g, w, (1 + n + GUARD) * sizeof(float)))
            fail_msg("permute case %zu past a 4 KiB limit: gl differs from cpu (guards included)", c);
        free(x), free(g), free(w);
    }
}

static void test_past_block_limit(void **state)
{
    pair *p = *state, small = *p;
    if (!p->gl)
        skip();
    small.gl = tgt_open(TGL_BACKEND_GL);
    tgl_gl_test_set_limits(small.gl, 4096, NULL);
    tgt_with_and_without_textures(small.gl, past_block_limit, &small);
    tgl_close(small.gl);
    p->rng = small.rng;
}

static void test_errors(void **state)
{
    pair *p = *state;
    size_t os[8], on;
    size_t s3[1] = {3}, s4[1] = {4}, s23[2] = {2, 3};
    TGT_EXPECT(NULL, tgl_broadcast_shape(s3, 1, s4, 1, os, &on), TGL_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(tgl_last_error(NULL), "do not broadcast"));
    TGT_EXPECT(NULL, tgl_broadcast_shape(NULL, 1, s4, 1, os, &on), TGL_ERR_INVALID_ARGUMENT);
    TGT_EXPECT(NULL, tgl_broadcast_shape(s3, 9, s4, 1, os, &on), TGL_ERR_INVALID_ARGUMENT);
    tgl_backend *bk[2] = {p->gl, p->cpu};
    for (int k = 0; k < 2; k++) {
        tgl_backend *b = bk[k];
        tgl_ptr a;
        float data[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, back[16];
        TGT_OK(b, tgl_alloc(b, sizeof data, &a));
        TGT_OK(b, tgl_copy_htod(b, a, data, sizeof data));
        TGT_EXPECT(b, tgl_binary_broadcast(b, TGL_BINARY_ADD, a, s3, 1, a, s4, 1, a + 32), TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_binary_broadcast(b, (tgl_binary_op)TGL_BINARY_COUNT, a, s3, 1, a, s3, 1, a + 32), TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_binary_broadcast(b, TGL_BINARY_FMOD, a, s3, 1, a, s3, 1, a + 32), TGL_ERR_UNSUPPORTED);
        TGT_EXPECT(b, tgl_binary_broadcast(b, TGL_BINARY_ADD, a, s3, 1, a, s23, 2, a + 4), TGL_ERR_INVALID_ARGUMENT); /* out overlaps a */
        TGT_EXPECT(b, tgl_binary_broadcast(b, TGL_BINARY_ADD, a, s3, 1, a, s23, 2, a + 48), TGL_ERR_INVALID_POINTER);
        size_t bad_perm[2] = {0, 0}, far_perm[2] = {0, 2}, perm[2] = {1, 0};
        TGT_EXPECT(b, tgl_permute(b, a, a + 32, s23, 2, bad_perm), TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_permute(b, a, a + 32, s23, 2, far_perm), TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_permute(b, a, a + 32, s23, 2, NULL), TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_permute(b, a, a + 8, s23, 2, perm), TGL_ERR_INVALID_ARGUMENT);   /* overlap */
        TGT_EXPECT(b, tgl_permute(b, a, a + 48, s23, 2, perm), TGL_ERR_INVALID_POINTER);
        TGT_OK(b, tgl_copy_dtoh(b, back, a, sizeof back));
        assert_memory_equal(back, data, sizeof data);
        TGT_OK(b, tgl_free(b, a));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_broadcast, tgt_pair_restore_reads),
        cmocka_unit_test_teardown(test_permute, tgt_pair_restore_reads),
        cmocka_unit_test(test_past_block_limit),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests_name("ops/shape: broadcast, permute (gl vs cpu)", tests, setup, teardown);
}

/* tgl_interpolate on GL compared with the CPU oracle: PyTorch's outputs for small cases on both
 * backends (nearest and nearest-exact, bilinear and bicubic with and without align_corners, a
 * user's scale factor); random calls (sizes 1, primes, 2^k +- 1, up and down, scale factors that
 * disagree with the sizes, NaN and infinities among the pixels) bit for bit over the output and
 * its poisoned guards; planes past a shrunk SSBO limit (slabs); source indices at the f32
 * rounding's edges; refusals. */
#include "testing.h"
#include "gl/gl_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef tgt_pair pair;

static int setup(void **state)
{
    return tgt_pair_setup(state, 0x17e4);
}

static int teardown(void **state)
{
    return tgt_pair_teardown(state);
}

#define GUARD 4
static const char *const modes[] = {"nearest", "nearest-exact", "bilinear", "bicubic"};

/* Runs d over x on b; returns GUARD + the output + GUARD floats, the guards poisoned first. */
static float *run_on(tgl_backend *b, const tgl_interpolate_desc *d, const float *x)
{
    size_t n_in = d->batch * d->channels * d->in_h * d->in_w, n = d->batch * d->channels * d->out_h * d->out_w;
    float *host = malloc((n + 2 * GUARD) * sizeof(float));
    tgt_poison(host, n + 2 * GUARD);
    tgl_ptr in, out;
    TGT_OK(b, tgl_alloc(b, n_in * sizeof(float), &in));
    TGT_OK(b, tgl_copy_htod(b, in, x, n_in * sizeof(float)));
    TGT_OK(b, tgl_alloc(b, (n + 2 * GUARD) * sizeof(float), &out));
    TGT_OK(b, tgl_copy_htod(b, out, host, (n + 2 * GUARD) * sizeof(float)));
    TGT_OK(b, tgl_interpolate(b, d, in, out + GUARD * sizeof(float)));
    TGT_OK(b, tgl_copy_dtoh(b, host, out, (n + 2 * GUARD) * sizeof(float)));
    TGT_OK(b, tgl_free(b, in));
    TGT_OK(b, tgl_free(b, out));
    return host;
}

static void expect(tgl_backend *b, tgl_interpolate_desc d, const float *x, const float *want)
{
    size_t n = d.batch * d.channels * d.out_h * d.out_w;
    float *got = run_on(b, &d, x);
    for (size_t i = 0; i < n; i++)
        if (fabsf(got[GUARD + i] - want[i]) > 1e-6f * fabsf(want[i]) + 1e-7f)
            fail_msg("%s: %s %zux%zu -> %zux%zu align %d scale %g x %g: element %zu is %.9g, PyTorch's %.9g",
                     tgl_backend_name(b), modes[d.mode], d.in_h, d.in_w, d.out_h, d.out_w, d.align_corners, d.scale_h,
                     d.scale_w, i, (double)got[GUARD + i], (double)want[i]);
    free(got);
}

/* PyTorch's nearest for rows doubled by a scale factor of 2.05 out of 2 x w planes (columns kept):
 * o / 2 (rows 0 0 1 1) where the output's sides sum to 128 or less, floor(o / 2.05) (0 0 0 1)
 * past that (its generic kernel); each column copied either way. */
static void nearest_special_sizes(tgl_backend *b)
{
    const size_t widths[2] = {60, 130};
    for (int k = 0; k < 2; k++) {
        size_t w = widths[k];
        float *x = malloc(2 * w * sizeof(float));
        for (size_t i = 0; i < 2 * w; i++)
            x[i] = (float)(i + 1);
        tgl_interpolate_desc d = {.batch = 1, .channels = 1, .in_h = 2, .in_w = w, .out_h = 4, .out_w = w,
                                  .mode = TGL_INTERP_NEAREST, .scale_h = 2.05, .scale_w = 1.0};
        float *want = malloc(4 * w * sizeof(float));
        const size_t rows[2][4] = {{0, 0, 1, 1}, {0, 0, 0, 1}};
        for (size_t oy = 0; oy < 4; oy++)
            for (size_t ox = 0; ox < w; ox++)
                want[oy * w + ox] = x[rows[k][oy] * w + ox];
        expect(b, d, x, want);
        free(want);
        free(x);
    }
}

/* PyTorch's outputs: F.interpolate of [[1, 2], [3, 4]] (one image, one channel), but where noted. */
static void test_known_values(void **state)
{
    pair *p = *state;
    tgl_backend *bs[2] = {p->cpu, p->gl};
    const float x[4] = {1, 2, 3, 4};
    const tgl_interpolate_desc base = {.batch = 1, .channels = 1, .in_h = 2, .in_w = 2, .out_h = 4, .out_w = 4};
    const float bilinear[16] = {1, 1.25f, 1.75f, 2, 1.5f, 1.75f, 2.25f, 2.5f, 2.5f, 2.75f, 3.25f, 3.5f, 3, 3.25f, 3.75f, 4};
    const float third = 1.0f / 3.0f;
    const float bilinear_ac[16] = {1,           1 + third,     1 + 2 * third,     2,
                                   1 + 2 * third, 2,           2 + third,         2 + 2 * third,
                                   2 + third,   2 + 2 * third, 3,                 3 + third,
                                   3,           3 + third,     3 + 2 * third,     4};
    const float bicubic[16] = {0.68359375f, 1.015625f, 1.5625f,    1.89453125f, 1.34765625f, 1.6796875f,
                               2.2265625f,  2.55859375f, 2.44140625f, 2.7734375f, 3.3203125f, 3.65234375f,
                               3.10546875f, 3.4375f,   3.984375f,   4.31640625f};
    const float nearest3[9] = {1, 1, 2, 1, 1, 2, 3, 3, 4}, exact3[9] = {1, 2, 2, 3, 4, 4, 3, 4, 4};
    /* nearest with scale factor 2.05: each axis doubles, so PyTorch's CPU kernel for outputs
     * whose sides sum to 128 or less takes o / 2 (nearest_idx), not floor(o / 2.05) */
    const float nearest_205[16] = {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4};
    /* scale_factor 1.7 (recompute_scale_factor off): output 3 x 3, source index scale 1 / 1.7 */
    const float bilinear_17[9] = {1,           1.38235307f, 1.97058833f, 1.76470602f, 2.1470592f,
                                  2.73529434f, 2.94117689f, 3.32352972f, 3.91176486f};
    for (int j = 0; j < 2; j++) {
        tgl_backend *b = bs[j];
        if (!b)
            continue;
        tgl_interpolate_desc d = base;
        d.mode = TGL_INTERP_BILINEAR;
        expect(b, d, x, bilinear);
        d.align_corners = 1;
        expect(b, d, x, bilinear_ac);
        d.align_corners = 0;
        d.mode = TGL_INTERP_BICUBIC;
        expect(b, d, x, bicubic);
        d.out_h = d.out_w = 3;
        d.mode = TGL_INTERP_NEAREST;
        expect(b, d, x, nearest3);
        d.mode = TGL_INTERP_NEAREST_EXACT;
        expect(b, d, x, exact3);
        d.mode = TGL_INTERP_NEAREST;
        d.out_h = d.out_w = 4;
        d.scale_h = d.scale_w = 2.05;
        expect(b, d, x, nearest_205);
        d.out_h = d.out_w = 3;
        d.mode = TGL_INTERP_BILINEAR;
        d.scale_h = d.scale_w = 1.7;
        expect(b, d, x, bilinear_17);
        nearest_special_sizes(b);
    }
}

/* GL against the CPU over the output and its guards, bit for bit (the same arithmetic in the
 * same order; NaN compared as NaN). */
static void compare(pair *p, tgl_backend *gl, const tgl_interpolate_desc *d, const float *x, const char *what)
{
    size_t n = d->batch * d->channels * d->out_h * d->out_w;
    float *want = run_on(p->cpu, d, x);
    if (gl) {
        float *got = run_on(gl, d, x);
        for (size_t i = 0; i < n + 2 * GUARD; i++) {
            uint32_t g, w;
            memcpy(&g, &got[i], 4);
            memcpy(&w, &want[i], 4);
            if (g != w && !(isnan(got[i]) && isnan(want[i]) && i >= GUARD && i < GUARD + n))
                fail_msg("%s: %s %zux%zux%zux%zu -> %zux%zu align %d scale %.17g x %.17g: element %zd is %.9g, the "
                         "cpu's %.9g",
                         what, modes[d->mode], d->batch, d->channels, d->in_h, d->in_w, d->out_h, d->out_w,
                         d->align_corners, d->scale_h, d->scale_w, (ssize_t)i - GUARD, (double)got[i], (double)want[i]);
        }
        free(got);
    }
    free(want);
}

static size_t side(tgt_rng *r)
{
    static const size_t sizes[] = {1, 2, 3, 5, 7, 8, 13, 16, 17, 31, 33, 63, 64, 65};
    return tgt_below(r, 4) ? sizes[tgt_below(r, 14)] : 1 + tgt_below(r, 97);
}

static void random_calls(pair *p, tgl_backend *gl, int count, const char *what)
{
    tgt_rng *r = &p->rng;
    for (int i = 0; i < count; i++) {
        tgl_interpolate_desc d = {.batch = 1 + tgt_below(r, 2), .channels = 1 + tgt_below(r, 3), .in_h = side(r),
                                  .in_w = side(r), .mode = (tgl_interp_mode)tgt_below(r, TGL_INTERP_MODE_COUNT)};
        d.align_corners = d.mode >= TGL_INTERP_BILINEAR && tgt_below(r, 2);
        if (!d.align_corners && tgt_below(r, 3) == 0) { /* a scale factor: F.interpolate's size floor(in * scale) */
            static const double scales[] = {0.5, 1.5, 2.0, 1.7, 0.3, 3.0, 1.0 / 3.0, 1.05, 2.5, 0.75, 2.05};
            d.scale_h = scales[tgt_below(r, 11)];
            d.scale_w = scales[tgt_below(r, 11)];
            d.out_h = (size_t)floor((double)d.in_h * d.scale_h);
            d.out_w = (size_t)floor((double)d.in_w * d.scale_w);
            d.out_h += d.out_h == 0;
            d.out_w += d.out_w == 0;
        } else {
            d.out_h = side(r);
            d.out_w = side(r);
        }
        size_t n = d.batch * d.channels * d.in_h * d.in_w;
        float *x = malloc(n * sizeof(float));
        for (size_t k = 0; k < n; k++)
            x[k] = tgt_below(r, 200) == 0 ? (tgt_below(r, 2) ? INFINITY : NAN) : tgt_uniform(r, -10.0f, 10.0f);
        compare(p, gl, &d, x, what);
        free(x);
    }
}

static void test_random_calls(void **state)
{
    pair *p = *state;
    random_calls(p, p->gl, 150, "random calls");
}

/* Sizes whose source indices s (o + 0.5) - 0.5 fall on or next to integers and halves, where
 * one f32 rounding and two part: every output index of in -> out for these pairs. */
static void test_rounding_edges(void **state)
{
    pair *p = *state;
    const size_t pairs[][2] = {{6, 9}, {7, 3}, {5, 3}, {9, 6}, {10, 3}, {11, 7}, {3, 10}, {1000, 3}, {3, 1000},
                               {999, 333}, {257, 129}, {100, 7}};
    for (size_t k = 0; k < sizeof pairs / sizeof *pairs; k++)
        for (int mode = 0; mode < TGL_INTERP_MODE_COUNT; mode++) {
            tgl_interpolate_desc d = {.batch = 1, .channels = 1, .in_h = 1, .in_w = pairs[k][0], .out_h = 1,
                                      .out_w = pairs[k][1], .mode = (tgl_interp_mode)mode};
            float *x = malloc(d.in_w * sizeof(float));
            for (size_t i = 0; i < d.in_w; i++)
                x[i] = (float)i; /* the output shows the index and weights it used */
            compare(p, p->gl, &d, x, "rounding edges");
            d.scale_w = 1.0 / 3.0 + 1e-9 * (double)k;
            compare(p, p->gl, &d, x, "rounding edges, scale factor");
            free(x);
        }
}

/* Planes past a shrunk SSBO limit: slabs of planes. */
static void test_small_ssbo_limit(void **state)
{
    pair *p = *state;
    if (!p->gl)
        skip();
    tgl_backend *gl = tgt_open(TGL_BACKEND_GL);
    tgl_gl_test_set_limits(gl, 8192, NULL);
    tgt_rng *r = &p->rng;
    for (int mode = 0; mode < TGL_INTERP_MODE_COUNT; mode++) {
        tgl_interpolate_desc d = {.batch = 3, .channels = 5, .in_h = 17, .in_w = 13, .out_h = 29, .out_w = 31,
                                  .mode = (tgl_interp_mode)mode};
        size_t n = d.batch * d.channels * d.in_h * d.in_w;
        float *x = malloc(n * sizeof(float));
        for (size_t k = 0; k < n; k++)
            x[k] = tgt_uniform(r, -1.0f, 1.0f);
        compare(p, gl, &d, x, "small SSBO limit");
        d.out_h = 60; /* one output plane past the window: refused */
        d.out_w = 40;
        tgl_ptr in, out;
        TGT_OK(gl, tgl_alloc(gl, n * sizeof(float), &in));
        TGT_OK(gl, tgl_alloc(gl, 15 * 60 * 40 * sizeof(float), &out));
        TGT_EXPECT(gl, tgl_interpolate(gl, &d, in, out), TGL_ERR_UNSUPPORTED);
        TGT_OK(gl, tgl_free(gl, in));
        TGT_OK(gl, tgl_free(gl, out));
        free(x);
    }
    tgl_close(gl);
}

static void test_refusals(void **state)
{
    pair *p = *state;
    tgl_backend *bs[2] = {p->cpu, p->gl};
    for (int j = 0; j < 2; j++) {
        tgl_backend *b = bs[j];
        if (!b)
            continue;
        tgl_ptr in, out;
        TGT_OK(b, tgl_alloc(b, 4 * 16, &in));
        TGT_OK(b, tgl_alloc(b, 4 * 64, &out));
        const tgl_interpolate_desc ok = {.batch = 1, .channels = 1, .in_h = 4, .in_w = 4, .out_h = 8, .out_w = 8,
                                         .mode = TGL_INTERP_BILINEAR};
        TGT_OK(b, tgl_interpolate(b, &ok, in, out));
        TGT_EXPECT(b, tgl_interpolate(b, NULL, in, out), TGL_ERR_INVALID_ARGUMENT);
        tgl_interpolate_desc d = ok;
        d.mode = TGL_INTERP_MODE_COUNT;
        TGT_EXPECT(b, tgl_interpolate(b, &d, in, out), TGL_ERR_INVALID_ARGUMENT);
        d = ok;
        d.mode = TGL_INTERP_NEAREST;
        d.align_corners = 1;
        TGT_EXPECT(b, tgl_interpolate(b, &d, in, out), TGL_ERR_INVALID_ARGUMENT);
        d = ok;
        d.align_corners = 2;
        TGT_EXPECT(b, tgl_interpolate(b, &d, in, out), TGL_ERR_INVALID_ARGUMENT);
        d = ok;
        d.out_w = 0;
        TGT_EXPECT(b, tgl_interpolate(b, &d, in, out), TGL_ERR_INVALID_ARGUMENT);
        d = ok;
        d.in_h = 0;
        TGT_EXPECT(b, tgl_interpolate(b, &d, in, out), TGL_ERR_INVALID_ARGUMENT);
        const double bad_scales[] = {-1.0, NAN, INFINITY, 1e-300};
        for (int k = 0; k < 4; k++) {
            d = ok;
            d.scale_w = bad_scales[k];
            TGT_EXPECT(b, tgl_interpolate(b, &d, in, out), TGL_ERR_INVALID_ARGUMENT);
        }
        d = ok;
        d.out_h = 9; /* 81 floats in a 64-float allocation */
        d.out_w = 9;
        TGT_EXPECT(b, tgl_interpolate(b, &d, in, out), TGL_ERR_INVALID_POINTER);
        d = ok;
        d.out_h = d.out_w = 2; /* a 2 x 2 output inside the input */
        TGT_EXPECT(b, tgl_interpolate(b, &d, in, in + 16), TGL_ERR_INVALID_ARGUMENT);
        d = ok;
        d.batch = SIZE_MAX / 2;
        TGT_EXPECT(b, tgl_interpolate(b, &d, in, out), TGL_ERR_INVALID_ARGUMENT); /* size overflow */
        d = ok;
        d.channels = 0;
        TGT_OK(b, tgl_interpolate(b, &d, 0, 0)); /* nothing to do */
        TGT_OK(b, tgl_free(b, in));
        TGT_OK(b, tgl_free(b, out));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_values),
        cmocka_unit_test(test_random_calls),
        cmocka_unit_test(test_rounding_edges),
        cmocka_unit_test(test_small_ssbo_limit),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

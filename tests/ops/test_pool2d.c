/* tgl_pool2d and tgl_adaptive_pool2d on GL compared with the CPU oracle (adaptive: PyTorch's outputs
 * for 5 x 5 to 3 x 3, 1 x 1 and 7 x 6, random calls up and down, bit for bit for max, slabs,
 * refusals); PyTorch's outputs for small cases on both
 * backends (max and average, padding with and without count_include_pad, ceil_mode, dilation,
 * NaN); random calls (odd sizes, kernels larger than the stride, windows in the padding, 1x1
 * outputs, ceil_mode's last windows) with max bit for bit and averages within f32 rounding, the
 * bytes around the output poisoned; planes past a shrunk SSBO limit (slabs); refusals. */
#include "testing.h"
#include "gl/gl_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef tgt_pair pair;

static int setup(void **state)
{
    return tgt_pair_setup(state, 0x9001);
}

static int teardown(void **state)
{
    return tgt_pair_teardown(state);
}

#define GUARD 4

/* A GL backend whose SSBO block limit holds a 41 x 41 plane and a little more: slabs of a plane
 * or two. random_desc's largest planes are a 40 x 40 input and a 41 x 41 output (a kernel of even
 * size padded by half of it, stride 1). The limit counts the window's slack (the device's offset
 * alignment, 256 under TGL_LIMITS=es31-min, + 16: tgl_gl_max_window_elems), so the largest
 * plane fits on every configuration. */
static tgl_backend *open_narrow(void)
{
    tgl_backend *gl = tgt_open(TGL_BACKEND_GL);
    tgl_gl_test_set_limits(gl, 4 * 41 * 41 + 32 + tgl_gl_of(gl)->limits.ssbo_align + 16, NULL);
    return gl;
}

/* Runs d over x on b; returns GUARD + the output + GUARD floats, the guards poisoned first. */
static float *run_on(tgl_backend *b, const tgl_pool2d_desc *d, const float *x, size_t *n_out)
{
    size_t oh, ow;
    TGT_OK(b, tgl_pool2d_output_size(d, &oh, &ow));
    size_t n_in = d->batch * d->channels * d->in_h * d->in_w, n = d->batch * d->channels * oh * ow;
    float *host = malloc((n + 2 * GUARD) * sizeof(float));
    tgt_poison(host, n + 2 * GUARD);
    tgl_ptr in, out;
    TGT_OK(b, tgl_alloc(b, n_in * sizeof(float), &in));
    TGT_OK(b, tgl_copy_htod(b, in, x, n_in * sizeof(float)));
    TGT_OK(b, tgl_alloc(b, (n + 2 * GUARD) * sizeof(float), &out));
    TGT_OK(b, tgl_copy_htod(b, out, host, (n + 2 * GUARD) * sizeof(float)));
    TGT_OK(b, tgl_pool2d(b, d, in, out + GUARD * sizeof(float)));
    TGT_OK(b, tgl_copy_dtoh(b, host, out, (n + 2 * GUARD) * sizeof(float)));
    TGT_OK(b, tgl_free(b, in));
    TGT_OK(b, tgl_free(b, out));
    *n_out = n;
    return host;
}

static void expect(tgl_backend *b, tgl_pool2d_desc d, const float *x, const float *want, size_t n_want)
{
    size_t n;
    float *got = run_on(b, &d, x, &n);
    assert_int_equal(n, n_want);
    for (size_t i = 0; i < n; i++)
        if (isnan(want[i]) ? !isnan(got[GUARD + i]) : fabsf(got[GUARD + i] - want[i]) > 1e-6f * fabsf(want[i]))
            fail_msg("%s: %s k%zux%zu s%zux%zu p%zux%zu d%zux%zu ceil %d incl %d: element %zu is %.9g, PyTorch's %.9g",
                     tgl_backend_name(b), d.kind == TGL_POOL_MAX ? "max" : "avg", d.kernel_h, d.kernel_w, d.stride_h,
                     d.stride_w, d.pad_h, d.pad_w, d.dilation_h, d.dilation_w, d.ceil_mode, d.count_include_pad, i,
                     (double)got[GUARD + i], (double)want[i]);
    free(got);
}

/* F.max_pool2d and F.avg_pool2d on small planes holding 1, 2, 3, ... */
static void test_known_values(void **state)
{
    pair *p = *state;
    tgl_backend *bs[2] = {p->cpu, p->gl};
    float x[16];
    for (int i = 0; i < 16; i++)
        x[i] = (float)(i + 1);
    const float nan_x[4] = {1.0f, NAN, 3.0f, 2.0f};
    for (int j = 0; j < 2; j++) {
        tgl_backend *b = bs[j];
        if (!b)
            continue;
        tgl_pool2d_desc d4 = {.batch = 1, .channels = 1, .in_h = 4, .in_w = 4, .kernel_h = 2, .kernel_w = 2};
        expect(b, d4, x, (const float[]){6, 8, 14, 16}, 4);
        d4.kind = TGL_POOL_AVG;
        expect(b, d4, x, (const float[]){3.5f, 5.5f, 11.5f, 13.5f}, 4);
        /* F.avg_pool2d(x.view(1, 1, 3, 3), 3, 2, 1), with count_include_pad True and False */
        tgl_pool2d_desc d3 = {.batch = 1, .channels = 1, .in_h = 3, .in_w = 3, .kernel_h = 3, .kernel_w = 3,
                              .stride_h = 2, .stride_w = 2, .pad_h = 1, .pad_w = 1, .kind = TGL_POOL_AVG,
                              .count_include_pad = 1};
        expect(b, d3, x, (const float[]){12.0f / 9, 16.0f / 9, 24.0f / 9, 28.0f / 9}, 4);
        d3.count_include_pad = 0;
        expect(b, d3, x, (const float[]){3, 4, 6, 7}, 4);
        d3.kind = TGL_POOL_MAX;
        expect(b, d3, x, (const float[]){5, 6, 8, 9}, 4);
        /* ceil_mode on 1 x 5: windows [1, 2], [3, 4], [5] */
        tgl_pool2d_desc d5 = {.batch = 1, .channels = 1, .in_h = 1, .in_w = 5, .kernel_h = 1, .kernel_w = 2,
                              .stride_h = 1, .stride_w = 2, .ceil_mode = 1};
        expect(b, d5, x, (const float[]){2, 4, 5}, 3);
        d5.kind = TGL_POOL_AVG;
        d5.count_include_pad = 1;
        expect(b, d5, x, (const float[]){1.5f, 3.5f, 5}, 3);
        d5.ceil_mode = 0;
        expect(b, d5, x, (const float[]){1.5f, 3.5f}, 2);
        /* ceil_mode with the kernel past the input (PyTorch gives one window: 1 x 2, kernel 1 x 3,
         * stride 3), its average over the window clipped to the input either way */
        tgl_pool2d_desc d2 = {.batch = 1, .channels = 1, .in_h = 1, .in_w = 2, .kernel_h = 1, .kernel_w = 3,
                              .stride_h = 1, .stride_w = 3, .ceil_mode = 1};
        expect(b, d2, x, (const float[]){2}, 1);
        d2.kind = TGL_POOL_AVG;
        expect(b, d2, x, (const float[]){1.5f}, 1);
        d2.count_include_pad = 1;
        expect(b, d2, x, (const float[]){1.5f}, 1);
        d2.ceil_mode = 0;
        TGT_EXPECT(b, tgl_pool2d(b, &d2, 0, 0), TGL_ERR_INVALID_ARGUMENT); /* no window without it */
        /* dilation 2: taps {1, 3}, {2, 4}, {3, 5} */
        tgl_pool2d_desc dd = {.batch = 1, .channels = 1, .in_h = 1, .in_w = 5, .kernel_h = 1, .kernel_w = 2,
                              .stride_h = 1, .stride_w = 1, .dilation_w = 2};
        expect(b, dd, x, (const float[]){3, 4, 5}, 3);
        /* a kernel of 2^24 x 2^24 taps (padding 2^23) over 3 x 3: the taps inside are found, not
         * searched (looping over the kernel took forever); the average's padded size is 2^48 */
        tgl_pool2d_desc huge = {.batch = 1, .channels = 1, .in_h = 3, .in_w = 3, .kernel_h = 1u << 24,
                                .kernel_w = 1u << 24, .pad_h = 1u << 23, .pad_w = 1u << 23};
        expect(b, huge, x, (const float[]){9}, 1); /* the plane holds 1 .. 9 */
        huge.kind = TGL_POOL_AVG;
        expect(b, huge, x, (const float[]){5}, 1);
        huge.count_include_pad = 1;
        expect(b, huge, x, (const float[]){(float)(45.0 / 281474976710656.0)}, 1);
        /* a NaN wins its windows; two planes */
        tgl_pool2d_desc dn = {.batch = 2, .channels = 1, .in_h = 1, .in_w = 2, .kernel_h = 1, .kernel_w = 2};
        expect(b, dn, nan_x, (const float[]){NAN, 3}, 2);
    }
}

/* A random desc over planes of at most ~40 x 40 (valid by PyTorch's rules). */
static tgl_pool2d_desc random_desc(tgt_rng *r)
{
    tgl_pool2d_desc d = {.batch = 1 + tgt_below(r, 3), .channels = 1 + tgt_below(r, 5)};
    d.kind = tgt_below(r, 2) ? TGL_POOL_AVG : TGL_POOL_MAX;
    for (;;) {
        d.in_h = 1 + tgt_below(r, 40);
        d.in_w = 1 + tgt_below(r, 40);
        d.kernel_h = 1 + tgt_below(r, 5);
        d.kernel_w = 1 + tgt_below(r, 5);
        d.stride_h = tgt_below(r, 4); /* 0: the kernel */
        d.stride_w = tgt_below(r, 4);
        d.pad_h = tgt_below(r, d.kernel_h / 2 + 1);
        d.pad_w = tgt_below(r, d.kernel_w / 2 + 1);
        d.dilation_h = d.kind == TGL_POOL_MAX ? tgt_below(r, 4) : 0;
        d.dilation_w = d.kind == TGL_POOL_MAX ? tgt_below(r, 4) : 0;
        d.ceil_mode = (int)tgt_below(r, 2);
        d.count_include_pad = (int)tgt_below(r, 2);
        size_t oh, ow;
        if (tgl_pool2d_output_size(&d, &oh, &ow) == TGL_OK)
            return d;
    }
}

/* GL against the CPU: max bit for bit (NaN for NaN), averages within f32 rounding of a sum of
 * at most 25 taps; guards intact. */
static void compare(pair *p, tgl_backend *gl, const tgl_pool2d_desc *d, const float *x, const char *what)
{
    size_t n, n2;
    float *want = run_on(p->cpu, d, x, &n), *got = run_on(gl, d, x, &n2);
    for (size_t i = 0; i < n + 2 * GUARD; i++) {
        float g = got[i], w = want[i];
        uint32_t gb, wb; /* bits: -0 and +0 differ */
        memcpy(&gb, &g, sizeof gb);
        memcpy(&wb, &w, sizeof wb);
        int exact = d->kind == TGL_POOL_MAX || i < GUARD || i >= GUARD + n || isinf(w);
        int same = isnan(w) ? isnan(g) : exact ? gb == wb : fabsf(g - w) <= 4e-6f * (1.0f + fabsf(w));
        if (!same)
            fail_msg("%s: %s %zux%zux%zux%zu k%zux%zu s%zux%zu p%zux%zu d%zux%zu ceil %d incl %d: float %zu (guard %d) "
                     "gl %.9g, cpu %.9g", what, d->kind == TGL_POOL_MAX ? "max" : "avg", d->batch, d->channels, d->in_h,
                     d->in_w, d->kernel_h, d->kernel_w, d->stride_h, d->stride_w, d->pad_h, d->pad_w, d->dilation_h,
                     d->dilation_w, d->ceil_mode, d->count_include_pad, i, i < GUARD || i >= GUARD + n, (double)g,
                     (double)w);
    }
    free(want);
    free(got);
}

static void random_calls(pair *p, tgl_backend *gl, int count, const char *what)
{
    for (int i = 0; i < count; i++) {
        tgl_pool2d_desc d = random_desc(&p->rng);
        size_t n = d.batch * d.channels * d.in_h * d.in_w;
        float *x = malloc(n * sizeof *x);
        for (size_t k = 0; k < n; k++) /* ties, negatives, now and then -inf, +inf or NaN */
            x[k] = tgt_below(&p->rng, 50) == 0 ? (tgt_below(&p->rng, 3) == 0 ? NAN : tgt_below(&p->rng, 2) ? INFINITY : -INFINITY)
                                               : (float)((int)tgt_below(&p->rng, 9) - 4) + tgt_uniform(&p->rng, 0.0f, 0.5f);
        compare(p, gl, &d, x, what);
        free(x);
    }
}

static void test_random_calls(void **state)
{
    pair *p = *state;
    if (!p->gl)
        skip();
    random_calls(p, p->gl, 150, "random calls");
}

/* Planes past a shrunk SSBO limit: slabs of a few planes, one dispatch each. */
static void test_small_ssbo_limit(void **state)
{
    pair *p = *state;
    if (!p->gl)
        skip();
    tgl_backend *gl = open_narrow();
    random_calls(p, gl, tgt_count(30), "small SSBO limit");
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
        tgl_ptr m;
        float before[64], after[64];
        for (int i = 0; i < 64; i++)
            before[i] = (float)i;
        TGT_OK(b, tgl_alloc(b, sizeof before, &m));
        TGT_OK(b, tgl_copy_htod(b, m, before, sizeof before));
        const tgl_status A = TGL_ERR_INVALID_ARGUMENT;
        const tgl_pool2d_desc ok = {.batch = 1, .channels = 1, .in_h = 4, .in_w = 4, .kernel_h = 2, .kernel_w = 2};
        tgl_ptr in = m, out = m + 32 * sizeof(float);
        size_t oh, ow;
        TGT_EXPECT(b, tgl_pool2d(b, NULL, in, out), A);
        TGT_EXPECT(b, tgl_pool2d_output_size(NULL, &oh, &ow), A);
        TGT_EXPECT(b, tgl_pool2d_output_size(&ok, NULL, &ow), A);
        tgl_pool2d_desc d = ok;
        d.kernel_w = 0;
        TGT_EXPECT(b, tgl_pool2d(b, &d, in, out), A); /* empty kernel */
        d = ok;
        d.in_h = 0;
        TGT_EXPECT(b, tgl_pool2d(b, &d, in, out), A); /* empty input */
        d = ok;
        d.pad_h = 2;
        TGT_EXPECT(b, tgl_pool2d(b, &d, in, out), A); /* pad past half the kernel */
        d = ok;
        d.kind = TGL_POOL_AVG;
        d.dilation_w = 2;
        TGT_EXPECT(b, tgl_pool2d(b, &d, in, out), A); /* a dilated average */
        d = ok;
        d.kind = (tgl_pool_kind)7;
        TGT_EXPECT(b, tgl_pool2d(b, &d, in, out), A);
        d = ok;
        d.kernel_h = 5;
        TGT_EXPECT(b, tgl_pool2d(b, &d, in, out), A); /* larger than the input: no output */
        d = ok;
        d.dilation_h = (size_t)1 << 41;
        TGT_EXPECT(b, tgl_pool2d(b, &d, in, out), A); /* past 2^40 */
        TGT_EXPECT(b, tgl_pool2d(b, &ok, in, in + 4 * sizeof(float)), A); /* output overlaps input */
        TGT_EXPECT(b, tgl_pool2d(b, &ok, in, m + 62 * sizeof(float)), TGL_ERR_INVALID_POINTER); /* runs past */
        d = ok;
        d.batch = 0;
        TGT_OK(b, tgl_pool2d(b, &d, in, out)); /* nothing to do */
        TGT_OK(b, tgl_copy_dtoh(b, after, m, sizeof after));
        assert_memory_equal(before, after, sizeof after);
        TGT_OK(b, tgl_free(b, m));
    }
}

/* ---- tgl_max_pool2d_indices ---- */

/* Runs d over x on b into *out (values) and the returned indices (GUARD + n + GUARD i32s, the
 * guards and the indices -7 first). */
static int32_t *run_indices(tgl_backend *b, const tgl_pool2d_desc *d, const float *x, float **out, size_t *n_out)
{
    size_t oh, ow;
    TGT_OK(b, tgl_pool2d_output_size(d, &oh, &ow));
    size_t n_in = d->batch * d->channels * d->in_h * d->in_w, n = d->batch * d->channels * oh * ow;
    int32_t *idx = malloc((n + 2 * GUARD) * sizeof(int32_t));
    *out = malloc(n * sizeof(float));
    for (size_t i = 0; i < n + 2 * GUARD; i++)
        idx[i] = -7;
    tgl_ptr in, o, k;
    TGT_OK(b, tgl_alloc(b, n_in * sizeof(float), &in));
    TGT_OK(b, tgl_copy_htod(b, in, x, n_in * sizeof(float)));
    TGT_OK(b, tgl_alloc(b, n * sizeof(float), &o));
    TGT_OK(b, tgl_alloc(b, (n + 2 * GUARD) * sizeof(int32_t), &k));
    TGT_OK(b, tgl_copy_htod(b, k, idx, (n + 2 * GUARD) * sizeof(int32_t)));
    TGT_OK(b, tgl_max_pool2d_indices(b, d, in, o, k + GUARD * sizeof(int32_t)));
    TGT_OK(b, tgl_copy_dtoh(b, *out, o, n * sizeof(float)));
    TGT_OK(b, tgl_copy_dtoh(b, idx, k, (n + 2 * GUARD) * sizeof(int32_t)));
    TGT_OK(b, tgl_free(b, in));
    TGT_OK(b, tgl_free(b, o));
    TGT_OK(b, tgl_free(b, k));
    *n_out = n;
    return idx;
}

/* PyTorch's max_pool2d(return_indices=True): 4 x 4 of 1..16 at k2 s2; all zeros (the first tap
 * of each window); 3 x 3 of 0..8 at k3 s2 p1; NaNs (the last one); a plane of -inf (the window's
 * first tap inside the input). */
static void test_indices_known_values(void **state)
{
    pair *p = *state;
    tgl_backend *bs[2] = {p->cpu, p->gl};
    float ramp[16], zeros[16] = {0}, nans[16], ninf[9];
    for (int i = 0; i < 16; i++) {
        ramp[i] = (float)(i + 1);
        nans[i] = i == 1 || i == 4 ? NAN : (float)i;
    }
    for (int i = 0; i < 9; i++)
        ninf[i] = -INFINITY;
    const tgl_pool2d_desc k2 = {.batch = 1, .channels = 1, .in_h = 4, .in_w = 4, .kernel_h = 2, .kernel_w = 2};
    const tgl_pool2d_desc k3 = {.batch = 1, .channels = 1, .in_h = 3, .in_w = 3, .kernel_h = 3, .kernel_w = 3,
                                .stride_h = 2, .stride_w = 2, .pad_h = 1, .pad_w = 1};
    const float *xs[5] = {ramp, zeros, ramp, nans, ninf};
    const tgl_pool2d_desc *ds[5] = {&k2, &k2, &k3, &k2, &k3};
    const int32_t want[5][4] = {{5, 7, 13, 15}, {0, 2, 8, 10}, {4, 5, 7, 8}, {4, 7, 13, 15}, {0, 1, 3, 4}};
    for (int j = 0; j < 2; j++) {
        tgl_backend *b = bs[j];
        if (!b)
            continue;
        for (int c = 0; c < 5; c++) {
            float *out;
            size_t n;
            int32_t *idx = run_indices(b, ds[c], xs[c], &out, &n);
            assert_int_equal(n, 4);
            for (int i = 0; i < 4; i++)
                if (idx[GUARD + i] != want[c][i])
                    fail_msg("%s: case %d: index %d is %d, PyTorch's %d", tgl_backend_name(b), c, i, (int)idx[GUARD + i],
                             (int)want[c][i]);
            free(out);
            free(idx);
        }
    }
}

/* GL against the CPU: the values and indices bit for bit, the guards -7, each value the input's
 * element at its index. */
static void test_indices_random(void **state)
{
    pair *p = *state;
    if (!p->gl)
        skip();
    tgl_backend *narrow = open_narrow();
    for (int i = 0; i < 80; i++) {
        tgl_pool2d_desc d = random_desc(&p->rng);
        d.kind = TGL_POOL_MAX;
        size_t n = d.batch * d.channels * d.in_h * d.in_w, n_out, n_out2;
        float *x = malloc(n * sizeof *x), *vc, *vg;
        for (size_t k = 0; k < n; k++) /* ties often, now and then -inf or NaN */
            x[k] = tgt_below(&p->rng, 40) == 0 ? (tgt_below(&p->rng, 2) ? NAN : -INFINITY) : (float)tgt_below(&p->rng, 4);
        tgl_backend *gl = i < 60 ? p->gl : narrow;
        int32_t *ic = run_indices(p->cpu, &d, x, &vc, &n_out), *ig = run_indices(gl, &d, x, &vg, &n_out2);
        assert_int_equal(n_out, n_out2);
        size_t oh, ow;
        TGT_OK(p->cpu, tgl_pool2d_output_size(&d, &oh, &ow));
        for (size_t k = 0; k < n_out + 2 * GUARD; k++) {
            int guard = k < GUARD || k >= GUARD + n_out;
            if (ig[k] != ic[k] || (guard && ig[k] != -7))
                fail_msg("%s call %d: index slot %zu (guard %d) gl %d, cpu %d", i < 60 ? "random" : "small SSBO limit", i,
                         k, guard, (int)ig[k], (int)ic[k]);
            if (guard)
                continue;
            size_t plane = (k - GUARD) / (oh * ow);
            float v = vc[k - GUARD];
            /* a window with no tap inside the input (dilation can make one) is -inf with the
             * index of its first tap past the padding, which may lie outside the plane: PyTorch's */
            int inside = ic[k] >= 0 && (size_t)ic[k] < d.in_h * d.in_w;
            float at = inside ? x[plane * d.in_h * d.in_w + (size_t)ic[k]] : -INFINITY;
            uint32_t gb, cb;
            memcpy(&gb, &vg[k - GUARD], sizeof gb);
            memcpy(&cb, &v, sizeof cb);
            if (gb != cb || !(isnan(v) ? isnan(at) : at == v || v == -INFINITY))
                fail_msg("call %d: output %zu gl %g cpu %g, the input at the index %g", i, k - GUARD,
                         (double)vg[k - GUARD], (double)v, (double)at);
        }
        free(x);
        free(vc);
        free(vg);
        free(ic);
        free(ig);
    }
    tgl_close(narrow);
}

static void test_indices_refusals(void **state)
{
    pair *p = *state;
    tgl_backend *bs[2] = {p->cpu, p->gl};
    for (int j = 0; j < 2; j++) {
        tgl_backend *b = bs[j];
        if (!b)
            continue;
        tgl_ptr m;
        TGT_OK(b, tgl_alloc(b, 64 * sizeof(float), &m));
        tgl_ptr in = m, out = m + 16 * sizeof(float), idx = m + 20 * sizeof(float);
        tgl_pool2d_desc d = {.batch = 1, .channels = 1, .in_h = 4, .in_w = 4, .kernel_h = 2, .kernel_w = 2};
        TGT_OK(b, tgl_max_pool2d_indices(b, &d, in, out, idx));
        TGT_EXPECT(b, tgl_max_pool2d_indices(b, &d, in, out, in + 8), TGL_ERR_INVALID_ARGUMENT);  /* on input */
        TGT_EXPECT(b, tgl_max_pool2d_indices(b, &d, in, out, out + 4), TGL_ERR_INVALID_ARGUMENT); /* on output */
        TGT_EXPECT(b, tgl_max_pool2d_indices(b, &d, in, out, m + 62 * sizeof(float)), TGL_ERR_INVALID_POINTER);
        d.kind = TGL_POOL_AVG;
        TGT_EXPECT(b, tgl_max_pool2d_indices(b, &d, in, out, idx), TGL_ERR_INVALID_ARGUMENT);
        d.kind = TGL_POOL_MAX;
        d.in_h = d.in_w = (size_t)1 << 16; /* planes of 2^32 pixels */
        TGT_EXPECT(b, tgl_max_pool2d_indices(b, &d, in, out, idx), TGL_ERR_UNSUPPORTED);
        TGT_OK(b, tgl_free(b, m));
    }
}

/* ---- tgl_adaptive_pool2d ---- */

typedef struct adaptive {
    tgl_pool_kind kind;
    size_t batch, channels, in_h, in_w, out_h, out_w;
} adaptive;

/* Runs a over x on b; returns GUARD + the output + GUARD floats, the guards poisoned first. */
static float *run_adaptive(tgl_backend *b, const adaptive *a, const float *x)
{
    size_t n_in = a->batch * a->channels * a->in_h * a->in_w, n = a->batch * a->channels * a->out_h * a->out_w;
    float *host = malloc((n + 2 * GUARD) * sizeof(float));
    tgt_poison(host, n + 2 * GUARD);
    tgl_ptr in, out;
    TGT_OK(b, tgl_alloc(b, n_in * sizeof(float), &in));
    TGT_OK(b, tgl_copy_htod(b, in, x, n_in * sizeof(float)));
    TGT_OK(b, tgl_alloc(b, (n + 2 * GUARD) * sizeof(float), &out));
    TGT_OK(b, tgl_copy_htod(b, out, host, (n + 2 * GUARD) * sizeof(float)));
    TGT_OK(b, tgl_adaptive_pool2d(b, a->kind, a->batch, a->channels, a->in_h, a->in_w, a->out_h, a->out_w, in,
                                  out + GUARD * sizeof(float)));
    TGT_OK(b, tgl_copy_dtoh(b, host, out, (n + 2 * GUARD) * sizeof(float)));
    TGT_OK(b, tgl_free(b, in));
    TGT_OK(b, tgl_free(b, out));
    return host;
}

/* PyTorch's F.adaptive_avg_pool2d / adaptive_max_pool2d of arange(25) as 5 x 5 to 3 x 3 (windows
 * of 2, 3 and 2 rows and columns, overlapping), to 1 x 1 (global) and up to 7 x 6. */
static void test_adaptive_known_values(void **state)
{
    pair *p = *state;
    tgl_backend *bs[2] = {p->cpu, p->gl};
    float x[25];
    for (int i = 0; i < 25; i++)
        x[i] = (float)i;
    const float avg3[9] = {3, 4.5f, 6, 10.5f, 12, 13.5f, 18, 19.5f, 21}, max3[9] = {6, 8, 9, 16, 18, 19, 21, 23, 24};
    const float avg1[1] = {12}, max1[1] = {24};
    for (int j = 0; j < 2; j++) {
        tgl_backend *b = bs[j];
        if (!b)
            continue;
        const adaptive cases[4] = {{TGL_POOL_AVG, 1, 1, 5, 5, 3, 3}, {TGL_POOL_MAX, 1, 1, 5, 5, 3, 3},
                                   {TGL_POOL_AVG, 1, 1, 5, 5, 1, 1}, {TGL_POOL_MAX, 1, 1, 5, 5, 1, 1}};
        const float *want[4] = {avg3, max3, avg1, max1};
        for (int k = 0; k < 4; k++) {
            float *got = run_adaptive(b, &cases[k], x);
            size_t n = cases[k].out_h * cases[k].out_w;
            for (size_t i = 0; i < n; i++)
                if (got[GUARD + i] != want[k][i])
                    fail_msg("%s: adaptive %s 5x5 -> %zux%zu: element %zu is %.9g, PyTorch's %.9g", tgl_backend_name(b),
                             k % 2 ? "max" : "avg", cases[k].out_h, cases[k].out_w, i, (double)got[GUARD + i],
                             (double)want[k][i]);
            free(got);
        }
        /* upsampling 5 x 5 to 7 x 6: windows of one or two pixels, by the same rule */
        const adaptive up = {TGL_POOL_AVG, 1, 1, 5, 5, 7, 6};
        float *got = run_adaptive(b, &up, x);
        for (size_t oy = 0; oy < 7; oy++)
            for (size_t ox = 0; ox < 6; ox++) {
                size_t y0 = oy * 5 / 7, y1 = ((oy + 1) * 5 + 6) / 7, x0 = ox * 5 / 6, x1 = ((ox + 1) * 5 + 5) / 6;
                double mean = 5.0 * (double)(y0 + y1 - 1) / 2.0 + (double)(x0 + x1 - 1) / 2.0;
                if (fabs(got[GUARD + oy * 6 + ox] - mean) > 1e-5)
                    fail_msg("%s: adaptive avg 5x5 -> 7x6 (%zu, %zu) is %.9g, want %.9g", tgl_backend_name(b), oy, ox,
                             (double)got[GUARD + oy * 6 + ox], mean);
            }
        free(got);
    }
}

/* GL against the CPU: max bit for bit (NaN for NaN), averages within f32 rounding (GL's division
 * may be off by a few ulp); guards intact. */
static void adaptive_calls(pair *p, tgl_backend *gl, int count, const char *what)
{
    tgt_rng *r = &p->rng;
    for (int i = 0; i < count; i++) {
        adaptive a = {(tgl_pool_kind)tgt_below(r, 2), 1 + tgt_below(r, 2), 1 + tgt_below(r, 4), 1 + tgt_below(r, 40),
                      1 + tgt_below(r, 40), 1 + tgt_below(r, 12), 1 + tgt_below(r, 12)};
        if (tgt_below(r, 5) == 0)
            a.out_h = a.out_w = 1; /* global */
        size_t n = a.batch * a.channels * a.in_h * a.in_w, n_out = a.batch * a.channels * a.out_h * a.out_w;
        float *x = malloc(n * sizeof *x);
        for (size_t k = 0; k < n; k++)
            x[k] = tgt_below(r, 60) == 0 ? (tgt_below(r, 3) == 0 ? NAN : tgt_below(r, 2) ? INFINITY : -INFINITY)
                                         : (float)((int)tgt_below(r, 9) - 4) + tgt_uniform(r, 0.0f, 0.5f);
        float *want = run_adaptive(p->cpu, &a, x), *got = run_adaptive(gl, &a, x);
        for (size_t k = 0; k < n_out + 2 * GUARD; k++) {
            float g = got[k], w = want[k];
            uint32_t gb, wb;
            memcpy(&gb, &g, sizeof gb);
            memcpy(&wb, &w, sizeof wb);
            int exact = a.kind == TGL_POOL_MAX || k < GUARD || k >= GUARD + n_out || isinf(w);
            int same = isnan(w) ? isnan(g) : exact ? gb == wb : fabsf(g - w) <= 4e-6f * (1.0f + fabsf(w));
            if (!same)
                fail_msg("%s: adaptive %s %zux%zux%zux%zu -> %zux%zu: float %zu gl %.9g, cpu %.9g", what,
                         a.kind == TGL_POOL_MAX ? "max" : "avg", a.batch, a.channels, a.in_h, a.in_w, a.out_h, a.out_w,
                         k, (double)g, (double)w);
        }
        free(x);
        free(want);
        free(got);
    }
}

static void test_adaptive_random(void **state)
{
    pair *p = *state;
    if (!p->gl)
        skip();
    adaptive_calls(p, p->gl, 100, "adaptive random calls");
    tgl_backend *gl = open_narrow();
    adaptive_calls(p, gl, tgt_count(20), "adaptive, small SSBO limit");
    tgl_close(gl);
}

static void test_adaptive_refusals(void **state)
{
    pair *p = *state;
    tgl_backend *bs[2] = {p->cpu, p->gl};
    for (int j = 0; j < 2; j++) {
        tgl_backend *b = bs[j];
        if (!b)
            continue;
        tgl_ptr m;
        TGT_OK(b, tgl_alloc(b, 64 * sizeof(float), &m));
        tgl_ptr in = m, out = m + 32 * sizeof(float);
        const tgl_status A = TGL_ERR_INVALID_ARGUMENT;
        TGT_OK(b, tgl_adaptive_pool2d(b, TGL_POOL_MAX, 1, 1, 4, 4, 2, 2, in, out));
        TGT_EXPECT(b, tgl_adaptive_pool2d(b, (tgl_pool_kind)2, 1, 1, 4, 4, 2, 2, in, out), A);
        TGT_EXPECT(b, tgl_adaptive_pool2d(b, TGL_POOL_AVG, 1, 1, 0, 4, 2, 2, in, out), A);
        TGT_EXPECT(b, tgl_adaptive_pool2d(b, TGL_POOL_AVG, 1, 1, 4, 4, 2, 0, in, out), A);
        TGT_EXPECT(b, tgl_adaptive_pool2d(b, TGL_POOL_AVG, 1, 1, 4, 4, 2, 2, in, in + 8), A); /* overlap */
        TGT_EXPECT(b, tgl_adaptive_pool2d(b, TGL_POOL_AVG, 1, 1, 4, 4, 4, 4, in, m + 60 * sizeof(float)),
                   TGL_ERR_INVALID_POINTER);
        TGT_EXPECT(b, tgl_adaptive_pool2d(b, TGL_POOL_AVG, SIZE_MAX / 2, 4, 4, 4, 2, 2, in, out), A); /* overflow */
        TGT_EXPECT(b, tgl_adaptive_pool2d(b, TGL_POOL_MAX, 1, 1, (size_t)1 << 31, 1, 1, 1, in, out),
                   TGL_ERR_UNSUPPORTED);
        TGT_OK(b, tgl_adaptive_pool2d(b, TGL_POOL_MAX, 0, 1, 4, 4, 2, 2, 0, 0)); /* nothing to do */
        TGT_OK(b, tgl_free(b, m));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_values),
        cmocka_unit_test(test_random_calls),
        cmocka_unit_test(test_small_ssbo_limit),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_indices_known_values),
        cmocka_unit_test(test_indices_random),
        cmocka_unit_test(test_indices_refusals),
        cmocka_unit_test(test_adaptive_known_values),
        cmocka_unit_test(test_adaptive_random),
        cmocka_unit_test(test_adaptive_refusals),
    };
    return cmocka_run_group_tests_name("ops/pool2d (gl vs cpu)", tests, setup, teardown);
}

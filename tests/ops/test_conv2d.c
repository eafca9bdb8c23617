/* tgl_conv2d on GL compared with the CPU oracle over stride / padding / dilation / groups
 * combinations and odd sizes (1x1 and 7x7 kernels, 1x1 inputs, 1 and 3 channels, depthwise),
 * on the path the device profile picks (on llvmpipe im2col + GEMM for 16 or more output
 * channels per group, random descriptors among them), with every GL kernel configuration, unaligned operands, image slabs forced by a small SSBO
 * limit and poisoned outputs with guards; tgl_conv2d_output_size; the error cases; the fused
 * epilogue (every activation, residual before and after it, in place) against the CPU backend
 * and the unfused chain; tgl_fold_batchnorm. */
#include "testing.h"
#include "gl/gl_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GUARD 8

typedef tgt_pair pair;

static int setup(void **state)
{
    return tgt_pair_setup(state, 0xC0712D);
}

static int teardown(void **state)
{
    return tgt_pair_teardown(state);
}

typedef struct ccase {
    tgl_conv2d_desc d;
    int bias;
    size_t front; /* floats before each operand */
} ccase;

typedef struct operands {
    float *in, *f, *bias;
    size_t n_in, n_f, n_out, oh, ow;
} operands;

static operands make_operands(tgt_rng *r, const ccase *c)
{
    operands o;
    const tgl_conv2d_desc *d = &c->d;
    size_t groups = d->groups ? d->groups : 1;
    if (tgl_conv2d_output_size(d, &o.oh, &o.ow))
        fail_msg("output size: %s", tgl_last_error(NULL));
    o.n_in = d->batch * d->in_channels * d->in_h * d->in_w;
    o.n_f = d->out_channels * (d->in_channels / groups) * d->kernel_h * d->kernel_w;
    o.n_out = d->batch * d->out_channels * o.oh * o.ow;
    o.in = malloc((o.n_in + 1) * sizeof(float));
    o.f = malloc((o.n_f + 1) * sizeof(float));
    o.bias = malloc((d->out_channels + 1) * sizeof(float));
    for (size_t i = 0; i < o.n_in; i++)
        o.in[i] = tgt_uniform(r, -1, 1);
    for (size_t i = 0; i < o.n_f; i++)
        o.f[i] = tgt_uniform(r, -1, 1);
    for (size_t i = 0; i < d->out_channels; i++)
        o.bias[i] = tgt_uniform(r, -1, 1);
    return o;
}

static void free_operands(operands *o)
{
    free(o->in);
    free(o->f);
    free(o->bias);
}

static float *run_on(tgl_backend *b, const ccase *c, const operands *o)
{
    size_t fr = c->front * sizeof(float), total = c->front + o->n_out + GUARD;
    tgl_ptr in = tgt_upload(b, o->in, o->n_in, c->front), f = tgt_upload(b, o->f, o->n_f, c->front);
    tgl_ptr bias = c->bias ? tgt_upload(b, o->bias, c->d.out_channels, c->front) : 0, out;
    float *host = malloc(total * sizeof(float));
    tgt_poison(host, total);
    TGT_OK(b, tgl_alloc(b, total * sizeof(float), &out));
    TGT_OK(b, tgl_copy_htod(b, out, host, total * sizeof(float)));
    TGT_OK(b, tgl_conv2d(b, &c->d, in + fr, f + fr, bias ? bias + fr : 0, out + fr));
    TGT_OK(b, tgl_copy_dtoh(b, host, out, total * sizeof(float)));
    TGT_OK(b, tgl_free(b, in));
    TGT_OK(b, tgl_free(b, f));
    TGT_OK(b, tgl_free(b, bias));
    TGT_OK(b, tgl_free(b, out));
    return host;
}

static void describe(const ccase *c, char *out, size_t size)
{
    const tgl_conv2d_desc *d = &c->d;
    snprintf(out, size, "n=%zu c=%zu %zux%zu oc=%zu k=%zux%zu s=%zu,%zu p=%zu,%zu dil=%zu,%zu g=%zu bias=%d front=%zu",
             d->batch, d->in_channels, d->in_h, d->in_w, d->out_channels, d->kernel_h, d->kernel_w, d->stride_h,
             d->stride_w, d->pad_h, d->pad_w, d->dilation_h, d->dilation_w, d->groups, c->bias, c->front);
}

static double check_case(pair *p, tgl_backend *gl, const ccase *c, const char *config)
{
    operands o = make_operands(&p->rng, c);
    float *got = run_on(gl, c, &o), *want = run_on(p->cpu, c, &o);
    char what[256];
    describe(c, what, sizeof what);
    size_t total = c->front + o.n_out + GUARD;
    for (size_t e = 0; e < total; e++)
        if ((e < c->front || e >= c->front + o.n_out) && tgt_first_unpoisoned(got + e, 1) == 0)
            fail_msg("%s [%s]: element %zd outside the output was written", what, config,
                     (ptrdiff_t)e - (ptrdiff_t)c->front);
    double nmse = tgt_nmse(got + c->front, want + c->front, o.n_out);
    if (!(nmse <= 1e-9))
        fail_msg("%s [%s]: NMSE %.3g > 1e-9", what, config, nmse);
    free(got);
    free(want);
    free_operands(&o);
    return nmse;
}

#define D(n, c, h, w, oc, kh, kw, sh, sw, ph, pw, dh, dw, g) {n, c, h, w, oc, kh, kw, sh, sw, ph, pw, dh, dw, g}
static const ccase cases[] = {
    {D(2, 3, 9, 11, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1), 1, 0},    /* 3x3 pad 1, 3 channels */
    {D(1, 1, 7, 7, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0), 0, 1},     /* 1x1, 1 channel, zero fields -> 1 */
    {D(2, 5, 1, 1, 6, 1, 1, 1, 1, 0, 0, 1, 1, 1), 1, 0},     /* input 1x1 */
    {D(1, 3, 1, 1, 2, 3, 3, 1, 1, 1, 1, 1, 1, 1), 1, 1},     /* input 1x1, 3x3 kernel inside padding */
    {D(2, 3, 23, 19, 8, 7, 7, 2, 2, 3, 3, 1, 1, 1), 1, 0},   /* 7x7 stride 2 (a ResNet stem) */
    {D(1, 4, 13, 17, 6, 3, 5, 3, 2, 2, 1, 2, 3, 2), 0, 1},   /* rectangular, dilated, 2 groups */
    {D(2, 6, 10, 10, 6, 3, 3, 1, 1, 1, 1, 1, 1, 6), 1, 0},   /* depthwise */
    {D(1, 8, 9, 9, 16, 3, 3, 2, 1, 0, 2, 2, 1, 8), 1, 1},    /* grouped, channel multiplier 2 */
    {D(3, 20, 12, 12, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1), 1, 0}, /* 40 output channels: tiled on GPUs */
    {D(1, 16, 8, 8, 160, 1, 1, 1, 1, 0, 0, 1, 1, 1), 0, 0},  /* 160 channels: three tiles of rows */
    {D(2, 64, 14, 14, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1), 1, 1}, /* the benchmark's layer, smaller */
    {D(1, 4, 205, 205, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1), 1, 0}, /* 165 tiles of 256 columns: large tile */
    {D(1, 3, 5, 6, 3, 5, 6, 1, 1, 0, 0, 1, 1, 3), 0, 0},     /* kernel == input: 1x1 output */
    {D(1, 2, 4, 4, 2, 2, 2, 4, 4, 0, 0, 1, 1, 1), 1, 0},     /* stride past the input */
    {D(2, 32, 15, 13, 48, 3, 3, 2, 2, 1, 1, 2, 2, 2), 1, 1}, /* strided, dilated, 2 groups of 24: im2col */
};

/* Every case on the kernel the shape picks, then on every configuration. */
static void test_conv2d_cases(void **state)
{
    pair *p = *state;
    if (!p->gl)
        skip();
    double worst = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double e = check_case(p, p->gl, &cases[i], "by shape");
        worst = e > worst ? e : worst;
    }
    tgl_backend *gl = tgt_open(TGL_BACKEND_GL);
    tgl_gl_test_force_conv2d_splits(gl, 1); /* each kernel whole first: these grids would split */
    for (size_t cfg = 0; cfg < tgl_gl_conv2d_config_count(); cfg++) {
        char name[32];
        snprintf(name, sizeof name, "config %zu", cfg);
        tgl_gl_test_force_conv2d(gl, (int)cfg);
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            double e = check_case(p, gl, &cases[i], name);
            worst = e > worst ? e : worst;
        }
    }
    /* The tiled kernel (configuration 0) with K cut into ranges summed afterwards (split-K), as
     * GPUs run grids too small to fill them. */
    for (int splits = 2; splits <= 3; splits++) {
        char name[32];
        snprintf(name, sizeof name, "config 0, split-K %d", splits);
        tgl_gl_test_force_conv2d(gl, 0);
        tgl_gl_test_force_conv2d_splits(gl, splits);
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
            double e = check_case(p, gl, &cases[i], name);
            worst = e > worst ? e : worst;
        }
    }
    tgl_close(gl);
    print_message("conv2d cases: worst NMSE %.3g\n", worst);
}

/* Random descriptors: every parameter drawn, then kept only when the output size is valid. */
static void test_conv2d_random(void **state)
{
    pair *p = *state;
    if (!p->gl)
        skip();
    tgt_rng *r = &p->rng;
    int done = 0;
    while (done < 60) {
        size_t groups = 1 + tgt_below(r, 3);
        ccase c = {{1 + tgt_below(r, 3), groups * (1 + tgt_below(r, 4)), 1 + tgt_below(r, 12), 1 + tgt_below(r, 12),
                    groups * (tgt_below(r, 4) ? 1 + tgt_below(r, 6) : 16 + tgt_below(r, 9)), 1 + tgt_below(r, 5), 1 + tgt_below(r, 5), 1 + tgt_below(r, 3),
                    1 + tgt_below(r, 3), tgt_below(r, 3), tgt_below(r, 3), 1 + tgt_below(r, 2), 1 + tgt_below(r, 2),
                    groups},
                   (int)tgt_below(r, 2), tgt_below(r, 2)};
        size_t oh, ow;
        if (tgl_conv2d_output_size(&c.d, &oh, &ow))
            continue;
        check_case(p, p->gl, &c, "by shape");
        done++;
    }
}

/* ---- tgl_conv2d_fused ---------------------------------------------------------------------- */

/* The epilogue's residual: none, added before the activation, after it, or before it with the
 * residual being output itself (accumulated in place). */
enum { RES_NONE, RES_FIRST, RES_AFTER, RES_IN_PLACE, RES_MODES };

/* Runs the fused call on b: output is `front` floats into a poisoned allocation with guards;
 * res (o->n_out floats) is the residual. Returns front + n_out + GUARD floats. */
static float *run_fused(tgl_backend *b, const ccase *c, const operands *o, tgl_activation act, float slope,
                        int mode, const float *res)
{
    size_t fr = c->front * sizeof(float), total = c->front + o->n_out + GUARD;
    tgl_ptr in = tgt_upload(b, o->in, o->n_in, c->front), f = tgt_upload(b, o->f, o->n_f, c->front);
    tgl_ptr bias = c->bias ? tgt_upload(b, o->bias, c->d.out_channels, c->front) : 0, out, r = 0;
    float *host = malloc(total * sizeof(float));
    tgt_poison(host, total);
    TGT_OK(b, tgl_alloc(b, total * sizeof(float), &out));
    TGT_OK(b, tgl_copy_htod(b, out, host, total * sizeof(float)));
    if (mode == RES_IN_PLACE)
        TGT_OK(b, tgl_copy_htod(b, out + fr, res, o->n_out * sizeof(float)));
    else if (mode != RES_NONE)
        r = tgt_upload(b, res, o->n_out, c->front);
    tgl_ptr res_ptr = mode == RES_IN_PLACE ? out + fr : r ? r + fr : 0;
    TGT_OK(b, tgl_conv2d_fused(b, &c->d, in + fr, f + fr, bias ? bias + fr : 0, act, slope, res_ptr,
                               mode == RES_FIRST || mode == RES_IN_PLACE, out + fr));
    TGT_OK(b, tgl_copy_dtoh(b, host, out, total * sizeof(float)));
    TGT_OK(b, tgl_free(b, in));
    TGT_OK(b, tgl_free(b, f));
    TGT_OK(b, tgl_free(b, bias));
    TGT_OK(b, tgl_free(b, r));
    TGT_OK(b, tgl_free(b, out));
    return host;
}

/* The same from unfused calls on b: tgl_conv2d, tgl_binary for the residual, the activation as
 * the unary op or tgl_map expression that computes it. Returns n_out floats. */
static float *run_chain(tgl_backend *b, const ccase *c, const operands *o, tgl_activation act, float slope, int mode,
                        const float *res)
{
    size_t n = o->n_out;
    tgl_ptr in = tgt_upload(b, o->in, o->n_in, 0), f = tgt_upload(b, o->f, o->n_f, 0);
    tgl_ptr bias = c->bias ? tgt_upload(b, o->bias, c->d.out_channels, 0) : 0, y, r = tgt_upload(b, res, n, 0);
    TGT_OK(b, tgl_alloc(b, n * sizeof(float), &y));
    TGT_OK(b, tgl_conv2d(b, &c->d, in, f, bias, y));
    if (mode == RES_FIRST || mode == RES_IN_PLACE)
        TGT_OK(b, tgl_binary(b, TGL_BINARY_ADD, y, r, y, n));
    tgt_activate(b, act, slope, y, n);
    if (mode == RES_AFTER)
        TGT_OK(b, tgl_binary(b, TGL_BINARY_ADD, y, r, y, n));
    float *host = malloc(n * sizeof(float));
    TGT_OK(b, tgl_copy_dtoh(b, host, y, n * sizeof(float)));
    TGT_OK(b, tgl_free(b, in));
    TGT_OK(b, tgl_free(b, f));
    TGT_OK(b, tgl_free(b, bias));
    TGT_OK(b, tgl_free(b, r));
    TGT_OK(b, tgl_free(b, y));
    return host;
}

/* One fused case on gl: against the CPU backend's fused call (NMSE <= 1e-9) and against gl's
 * unfused chain (NMSE <= 1e-12: the same f32 steps; functions may round differently in another
 * kernel), guards intact. */
static void check_fused(pair *p, tgl_backend *gl, const ccase *c, tgl_activation act, int mode, const char *config)
{
    operands o = make_operands(&p->rng, c);
    float slope = tgt_uniform(&p->rng, 0.01f, 0.3f), *res = malloc(o.n_out * sizeof(float));
    for (size_t i = 0; i < o.n_out; i++)
        res[i] = tgt_uniform(&p->rng, -2, 2);
    float *got = run_fused(gl, c, &o, act, slope, mode, res), *want = run_fused(p->cpu, c, &o, act, slope, mode, res);
    float *chain = run_chain(gl, c, &o, act, slope, mode, res);
    char what[256];
    describe(c, what, sizeof what);
    if (tgt_first_unpoisoned(got, c->front) != c->front ||
        tgt_first_unpoisoned(got + c->front + o.n_out, GUARD) != GUARD)
        fail_msg("%s act %d residual %d [%s]: a guard was written", what, (int)act, mode, config);
    double e = tgt_nmse_floor(got + c->front, want + c->front, o.n_out, 0.1);
    if (!(e <= 1e-9))
        fail_msg("%s act %d residual %d [%s]: NMSE %.3g against the CPU backend", what, (int)act, mode, config, e);
    double ec = tgt_nmse_floor(got + c->front, chain, o.n_out, 0.1);
    if (!(ec <= 1e-12))
        fail_msg("%s act %d residual %d [%s]: NMSE %.3g against the unfused chain", what, (int)act, mode, config, ec);
    free(got), free(want), free(chain), free(res);
    free_operands(&o);
}

/* Every activation with every residual mode over the cases (drawn in turn), on the kernel the
 * shape picks; then each kernel configuration over a few; split-K never runs under an epilogue. */
static void test_conv2d_fused(void **state)
{
    pair *p = *state;
    if (!p->gl)
        skip();
    size_t n_cases = sizeof cases / sizeof cases[0], k = 0;
    for (int act = 0; act < TGL_ACTIVATION_COUNT; act++)
        for (int mode = 0; mode < RES_MODES; mode++, k++)
            if (tgt_pick(k))
                check_fused(p, p->gl, &cases[k % n_cases], (tgl_activation)act, mode, "by shape");
    tgl_backend *gl = tgt_open(TGL_BACKEND_GL);
    tgl_gl_test_force_conv2d_splits(gl, 3); /* asked for, and not taken */
    for (size_t cfg = 0; cfg < tgl_gl_conv2d_config_count(); cfg++) {
        char name[32];
        snprintf(name, sizeof name, "config %zu", cfg);
        tgl_gl_test_force_conv2d(gl, (int)cfg);
        static const size_t some[] = {0, 5, 7, 10};
        for (size_t i = 0; i < 4; i++)
            check_fused(p, gl, &cases[some[i]], (tgl_activation)(1 + (cfg + i) % (TGL_ACTIVATION_COUNT - 1)),
                        (int)((cfg + i) % RES_MODES), name);
    }
    tgl_close(gl);
}

/* Refusals: each bad argument on both backends, output untouched. */
static void test_conv2d_fused_errors(void **state)
{
    pair *p = *state;
    tgl_backend *backends[2] = {p->cpu, p->gl};
    tgl_conv2d_desc d = {.batch = 1, .in_channels = 2, .in_h = 5, .in_w = 5, .out_channels = 3, .kernel_h = 3,
                         .kernel_w = 3, .pad_h = 1, .pad_w = 1};
    for (int bi = 0; bi < 2; bi++) {
        tgl_backend *b = backends[bi];
        if (!b)
            continue;
        tgl_ptr in, f, out, res;
        TGT_OK(b, tgl_alloc(b, 100 * sizeof(float), &in));
        TGT_OK(b, tgl_alloc(b, 54 * sizeof(float), &f));
        TGT_OK(b, tgl_alloc(b, 2 * 75 * sizeof(float), &out));
        TGT_OK(b, tgl_alloc(b, 75 * sizeof(float), &res));
        TGT_OK(b, tgl_fill(b, out, 3.0f, 150));
        TGT_EXPECT(b, tgl_conv2d_fused(b, &d, in, f, 0, (tgl_activation)TGL_ACTIVATION_COUNT, 0, 0, 0, out),
                   TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_conv2d_fused(b, &d, in, f, 0, TGL_ACTIVATION_RELU, 0, res, 2, out), TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_conv2d_fused(b, &d, in, f, 0, TGL_ACTIVATION_LEAKY_RELU, NAN, 0, 0, out),
                   TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_conv2d_fused(b, &d, in, f, 0, TGL_ACTIVATION_RELU, 0, out + 4, 1, out),
                   TGL_ERR_INVALID_ARGUMENT); /* the residual overlaps output in part */
        TGT_EXPECT(b, tgl_conv2d_fused(b, &d, in, f, 0, TGL_ACTIVATION_RELU, 0, res + 8, 1, out),
                   TGL_ERR_INVALID_POINTER); /* past its allocation */
        TGT_EXPECT(b, tgl_conv2d_fused(b, &d, in, f, 0, TGL_ACTIVATION_RELU, 0, 12345, 1, out),
                   TGL_ERR_INVALID_POINTER);
        TGT_EXPECT(b, tgl_conv2d_fused(b, &d, in, f, 0, TGL_ACTIVATION_RELU, 0, res, 1, in + 10 * sizeof(float)),
                   TGL_ERR_INVALID_ARGUMENT); /* output overlaps input, as tgl_conv2d */
        float host[150];
        TGT_OK(b, tgl_copy_dtoh(b, host, out, sizeof host));
        for (int i = 0; i < 150; i++)
            if (host[i] != 3.0f)
                fail_msg("%s: a refused call wrote output[%d] = %g", tgl_backend_name(b), i, (double)host[i]);
        TGT_OK(b, tgl_free(b, in));
        TGT_OK(b, tgl_free(b, f));
        TGT_OK(b, tgl_free(b, out));
        TGT_OK(b, tgl_free(b, res));
    }
}

/* tgl_fold_batchnorm: the folded convolution against the convolution, then the batch norm in
 * double, on the CPU backend (and GL); refusals change nothing. */
static void test_fold_batchnorm(void **state)
{
    pair *p = *state;
    ccase c = {D(2, 6, 9, 7, 10, 3, 3, 1, 1, 1, 1, 1, 1, 2), 1, 0};
    operands o = make_operands(&p->rng, &c);
    enum { OC = 10 };
    assert_int_equal(c.d.out_channels, OC);
    size_t oc = OC, per = o.n_f / oc, plane = o.oh * o.ow;
    float gamma[OC], beta[OC], mean[OC], var[OC], eps = 1e-5f;
    for (size_t i = 0; i < OC; i++) {
        gamma[i] = tgt_uniform(&p->rng, 0.5f, 2), beta[i] = tgt_uniform(&p->rng, -1, 1);
        mean[i] = tgt_uniform(&p->rng, -0.5f, 0.5f), var[i] = tgt_uniform(&p->rng, 0.1f, 3);
    }
    float *plain = run_on(p->cpu, &c, &o);
    double *want = malloc(o.n_out * sizeof(double));
    for (size_t i = 0; i < o.n_out; i++) {
        size_t ch = i / plane % oc;
        want[i] = ((double)plain[c.front + i] - mean[ch]) * gamma[ch] / sqrt((double)var[ch] + eps) + beta[ch];
    }
    float *f_saved = malloc(o.n_f * sizeof(float)), b_saved[OC];
    memcpy(f_saved, o.f, o.n_f * sizeof(float));
    memcpy(b_saved, o.bias, sizeof b_saved);
    float bad_var[OC];
    memcpy(bad_var, var, sizeof var);
    bad_var[7] = -eps; /* var + eps == 0 */
    TGT_EXPECT(NULL, tgl_fold_batchnorm(oc, per, o.f, o.bias, gamma, beta, mean, bad_var, eps),
               TGL_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(tgl_last_error(NULL), "channel 7"));
    TGT_EXPECT(NULL, tgl_fold_batchnorm(oc, per, o.f, NULL, gamma, beta, mean, var, eps), TGL_ERR_INVALID_ARGUMENT);
    assert_memory_equal(o.f, f_saved, o.n_f * sizeof(float));
    assert_memory_equal(o.bias, b_saved, sizeof b_saved);
    TGT_OK(NULL, tgl_fold_batchnorm(oc, per, o.f, o.bias, gamma, beta, mean, var, eps));
    tgl_backend *bs[2] = {p->cpu, p->gl};
    for (int j = 0; j < 2; j++) {
        if (!bs[j])
            continue;
        float *folded = run_on(bs[j], &c, &o);
        double err = 0, ref = 0;
        for (size_t i = 0; i < o.n_out; i++) {
            double dlt = folded[c.front + i] - want[i];
            err += dlt * dlt, ref += want[i] * want[i];
        }
        if (!(err / ref <= 1e-12))
            fail_msg("%s: the folded convolution is off the batch norm's by NMSE %.3g", tgl_backend_name(bs[j]),
                     err / ref);
        free(folded);
    }
    free(plain), free(want), free(f_saved);
    free_operands(&o);
}

/* PyTorch's F.conv1d(x [N, C, L], w [O, C / groups, K], bias, stride, padding, dilation, groups)
 * in double on the host: out[n, o, x] = bias[o] + sum over the group's channels c and taps k of
 * x[n, c, x * stride - padding + k * dilation] * w[o, c, k], taps outside [0, L) counting 0. */
static double *host_conv1d(const tgl_conv2d_desc *d, const operands *o, int bias)
{
    size_t g = d->groups, cg = d->in_channels / g, og = d->out_channels / g, L = d->in_w, K = d->kernel_w;
    double *out = calloc(o->n_out + 1, sizeof *out);
    for (size_t n = 0; n < d->batch; n++)
        for (size_t oc = 0; oc < d->out_channels; oc++)
            for (size_t x = 0; x < o->ow; x++) {
                double s = bias ? o->bias[oc] : 0.0;
                for (size_t c = 0; c < cg; c++)
                    for (size_t k = 0; k < K; k++) {
                        ptrdiff_t at = (ptrdiff_t)(x * d->stride_w + k * d->dilation_w) - (ptrdiff_t)d->pad_w;
                        if (at >= 0 && at < (ptrdiff_t)L)
                            s += (double)o->in[(n * d->in_channels + (oc / og) * cg + c) * L + (size_t)at] *
                                 o->f[(oc * cg + c) * K + k];
                    }
                out[(n * d->out_channels + oc) * o->ow + x] = s;
            }
    return out;
}

/* conv1d is tgl_conv2d with a height of 1 (in_h = kernel_h = 1, no padding or stride along it):
 * [N, C, L] is [N, C, 1, L] in memory, and PyTorch's weights [O, C / g, K] are [O, C / g, 1, K].
 * Random lengths (1, primes, 2^k +- 1, past a workgroup), taps, strides, padding, dilation and
 * groups, on both backends and on every GL configuration, against PyTorch's formula on the host. */
static void test_conv1d(void **state)
{
    pair *p = *state;
    if (!p->gl)
        skip();
    static const size_t lengths[] = {1, 2, 7, 31, 257, 1000, 4097};
    tgt_rng *r = &p->rng;
    tgl_backend *forced = tgt_open(TGL_BACKEND_GL);
    int done = 0, runs = tgt_count(40);
    double worst = 0;
    while (done < runs) {
        size_t groups = 1 + tgt_below(r, 3);
        tgl_conv2d_desc d = {.batch = 1 + tgt_below(r, 3), .in_channels = groups * (1 + tgt_below(r, 4)), .in_h = 1,
                             .in_w = lengths[tgt_below(r, sizeof lengths / sizeof lengths[0])],
                             .out_channels = groups * (1 + tgt_below(r, 5)), .kernel_h = 1, .kernel_w = 1 + tgt_below(r, 7),
                             .stride_h = 1, .stride_w = 1 + tgt_below(r, 3), .pad_w = tgt_below(r, 4), .dilation_h = 1,
                             .dilation_w = 1 + tgt_below(r, 3), .groups = groups};
        size_t oh, ow;
        if (tgl_conv2d_output_size(&d, &oh, &ow))
            continue;
        assert_int_equal(oh, 1);
        ccase c = {d, (int)tgt_below(r, 2), tgt_below(r, 2)};
        operands o = make_operands(r, &c);
        double *want = host_conv1d(&d, &o, c.bias);
        float *want_f = malloc((o.n_out + 1) * sizeof *want_f);
        for (size_t i = 0; i < o.n_out; i++)
            want_f[i] = (float)want[i];
        /* the device's own choice, the CPU backend, then one GL configuration in turn */
        tgl_gl_test_force_conv2d(forced, (int)((size_t)done % tgl_gl_conv2d_config_count()));
        tgl_backend *backends[3] = {p->gl, p->cpu, forced};
        for (int k = 0; k < 3; k++) {
            float *got = run_on(backends[k], &c, &o);
            double e = tgt_nmse(got + c.front, want_f, o.n_out);
            if (!(e <= 1e-9)) {
                char what[256];
                describe(&c, what, sizeof what);
                fail_msg("conv1d %s on %s: NMSE %.3g against the host", what, k == 1 ? "cpu" : "gl", e);
            }
            assert_int_equal(tgt_first_unpoisoned(got + c.front + o.n_out, GUARD), GUARD);
            worst = e > worst ? e : worst;
            free(got);
        }
        free(want);
        free(want_f);
        free_operands(&o);
        done++;
    }
    tgl_close(forced);
    print_message("conv1d: %d random cases, worst NMSE %.3g\n", runs, worst);
}

/* A small SSBO limit cuts the batch into slabs of images. */
static void test_conv2d_slabs(void **state)
{
    pair *p = *state;
    if (!p->gl)
        skip();
    tgl_backend *gl = tgt_open(TGL_BACKEND_GL);
    tgl_gl_test_set_limits(gl, 4096, NULL);
    ccase c = {D(7, 3, 10, 10, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1), 1, 1}; /* 1200 bytes per image */
    check_case(p, gl, &c, "4 KiB SSBO limit");
    /* 16 output channels (conv_im2col where the profile has it): an image's 972 im2col elements
     * fill most of a window, so each image is a slab of its own */
    ccase wide = {D(5, 3, 6, 6, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1), 1, 0};
    check_case(p, gl, &wide, "4 KiB SSBO limit, 16 channels");
    /* Split-K's partial outputs are one window too: two ranges of an image's 400 outputs fit in
     * 4 KiB (a slab of one image), three do not (the kernel then runs whole). */
    tgl_gl_test_force_conv2d(gl, 0); /* the tiled kernel */
    tgl_gl_test_force_conv2d_splits(gl, 2);
    check_case(p, gl, &c, "4 KiB SSBO limit, split-K 2");
    tgl_gl_test_force_conv2d_splits(gl, 3);
    check_case(p, gl, &c, "4 KiB SSBO limit, split-K 3 (no room)");
    tgl_gl_test_force_conv2d(gl, -1);
    tgl_gl_test_force_conv2d_splits(gl, 0);
    ccase too_big = {D(1, 3, 30, 30, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1), 0, 0};
    operands o = make_operands(&p->rng, &too_big);
    tgl_ptr in = tgt_upload(gl, o.in, o.n_in, 0), f = tgt_upload(gl, o.f, o.n_f, 0), out;
    TGT_OK(gl, tgl_alloc(gl, o.n_out * sizeof(float), &out));
    TGT_EXPECT(gl, tgl_conv2d(gl, &too_big.d, in, f, 0, out), TGL_ERR_UNSUPPORTED);
    free_operands(&o);
    tgl_close(gl);
}

/* c on gl against the CPU backend with special values planted: every output of the same kind
 * (NaN, +Inf, -Inf or finite: an infinite input meets its transformed terms with both signs,
 * which Winograd's sum must not turn into NaN), the finite ones to NMSE 1e-9. where: 0 the
 * input, 1 the filter. */
static void check_special(pair *p, tgl_backend *gl, const ccase *c, int where, const char *config)
{
    operands o = make_operands(&p->rng, c);
    float *at = where ? o.f : o.in;
    size_t n = where ? o.n_f : o.n_in;
    static const float planted[] = {INFINITY, -INFINITY, NAN, INFINITY};
    for (size_t k = 0; k < sizeof planted / sizeof planted[0]; k++)
        at[tgt_below(&p->rng, n)] = planted[k];
    float *got = run_on(gl, c, &o), *want = run_on(p->cpu, c, &o);
    char what[256];
    describe(c, what, sizeof what);
    for (size_t e = 0; e < o.n_out; e++) {
        float g = got[c->front + e], w = want[c->front + e];
        if (isnan(g) != isnan(w) || isinf(g) != isinf(w) || (isinf(w) && signbit(g) != signbit(w)))
            fail_msg("%s [%s, specials in the %s]: output %zu is %g, the CPU backend's %g", what, config,
                     where ? "filter" : "input", e, (double)g, (double)w);
    }
    double nmse = tgt_nmse(got + c->front, want + c->front, o.n_out);
    if (!(nmse <= 1e-9))
        fail_msg("%s [%s, specials]: NMSE %.3g > 1e-9", what, config, nmse);
    free(got);
    free(want);
    free_operands(&o);
}

/* Infinities and NaN in the input or the filter on every kernel (by shape, then each
 * configuration forced): the padding is zeros that multiply the filter (PyTorch's semantics),
 * so an infinite tap over it gives NaN on every backend. */
static void test_conv2d_specials(void **state)
{
    pair *p = *state;
    if (!p->gl)
        skip();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int where = 0; where < 2; where++)
            check_special(p, p->gl, &cases[i], where, "by shape");
    tgl_backend *gl = tgt_open(TGL_BACKEND_GL);
    for (size_t cfg = 0; cfg < tgl_gl_conv2d_config_count(); cfg++) {
        char name[32];
        snprintf(name, sizeof name, "config %zu", cfg);
        tgl_gl_test_force_conv2d(gl, (int)cfg);
        for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
            for (int where = 0; where < 2; where++)
                check_special(p, gl, &cases[i], where, name);
    }
    tgl_close(gl);
}

/* Winograd F(m x m, 3x3), m = 2 and 4 (the profile's conv_winograd, set here whatever the
 * device's profile says): 3x3 kernels of stride and dilation 1 in one group of 16 or more channels in and
 * out, at odd sizes (outputs of odd height and width, so tiles hang past the edge; 1x1 outputs;
 * inputs smaller than the kernel inside padding of 1 and 2), with and without bias, every call
 * asserted to have run as Winograd on desktop GL (and not on ES, where its last pass's five
 * storage buffers do not fit); infinities and NaN in the input or the filter; in slabs under a
 * small SSBO limit; fused epilogues against the CPU backend and the unfused chain; and shapes
 * that do not qualify taking the other kernels. */
static void check_winograd(pair *p, int m)
{
    char config[64];
    tgl_backend *gl = tgt_open(TGL_BACKEND_GL);
    tgl_gl_of(gl)->limits.conv_winograd = m;
    tgl_gl_of(gl)->limits.conv_winograd_f4_tiles = 0; /* F(4x4) at every size */
    tgl_gl_of(gl)->limits.conv_winograd_min_tiles = 0;
    /* desktop GL only (its last pass binds five storage buffers): elsewhere every call must take
     * the other kernels */
    uint64_t step = !tgl_gl_of(gl)->egl.es && tgl_gl_of(gl)->limits.storage_blocks >= 5;
    static const ccase fixed[] = {
        {D(2, 16, 9, 11, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1), 1, 0},   /* odd output sizes */
        {D(1, 17, 3, 3, 19, 3, 3, 1, 1, 0, 0, 1, 1, 1), 0, 1},    /* a 1x1 output */
        {D(3, 16, 1, 1, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1), 1, 3},    /* 1x1 input inside padding */
        {D(1, 20, 2, 5, 24, 3, 3, 1, 1, 2, 2, 1, 1, 1), 1, 0},    /* padding 2: outputs beyond */
        {D(2, 64, 14, 14, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1), 1, 1},  /* ResNet's layer, smaller */
        {D(1, 33, 13, 6, 70, 3, 3, 1, 1, 1, 0, 1, 1, 1), 0, 0},   /* rectangular padding */
        {D(2, 16, 7, 10, 17, 3, 3, 1, 1, 1, 1, 1, 1, 1), 1, 2},   /* outputs 1 and 2 past a 4x4 tile */
    };
    snprintf(config, sizeof config, "Winograd F(%dx%d)", m, m);
    uint64_t runs = tgl_gl_test_conv2d_winograd_calls(gl, m);
    double worst = 0.0;
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        worst = fmax(worst, check_case(p, gl, &fixed[i], config));
        if (tgl_gl_test_conv2d_winograd_calls(gl, m) != (runs += step)) {
            char what[256];
            describe(&fixed[i], what, sizeof what);
            fail_msg("%s: did not run as Winograd", what);
        }
    }
    tgt_rng *r = &p->rng;
    for (int n = 0; n < 24; n++) {
        ccase c = {D(1 + tgt_below(r, 3), 16 + tgt_below(r, 20), 1 + tgt_below(r, 17), 1 + tgt_below(r, 17),
                     16 + tgt_below(r, 20), 3, 3, 1, 1, tgt_below(r, 3), tgt_below(r, 3), 1, 1, 1),
                   (int)tgt_below(r, 2), tgt_below(r, 3)};
        size_t oh, ow;
        if (tgl_conv2d_output_size(&c.d, &oh, &ow))
            continue;
        worst = fmax(worst, check_case(p, gl, &c, config));
        if (tgl_gl_test_conv2d_winograd_calls(gl, m) != (runs += step))
            fail_msg("a random case did not run as Winograd");
    }
    printf("%s: worst NMSE %.3g against the CPU backend\n", config, worst);
    /* shapes it does not take: 15 output channels, stride 2, dilation 2, two groups */
    static const ccase others[] = {
        {D(1, 16, 8, 8, 15, 3, 3, 1, 1, 1, 1, 1, 1, 1), 1, 0},
        {D(1, 16, 8, 8, 16, 3, 3, 2, 2, 1, 1, 1, 1, 1), 1, 0},
        {D(1, 16, 8, 8, 16, 3, 3, 1, 1, 2, 2, 2, 2, 1), 1, 0},
        {D(1, 32, 8, 8, 32, 3, 3, 1, 1, 1, 1, 1, 1, 2), 1, 0},
    };
    for (size_t i = 0; i < sizeof others / sizeof others[0]; i++) {
        check_case(p, gl, &others[i], "not Winograd");
        assert_true(tgl_gl_test_conv2d_winograd_calls(gl, m) == runs);
    }
    for (int act = 0; act < TGL_ACTIVATION_COUNT; act++)
        check_fused(p, gl, &fixed[act % 7], (tgl_activation)act, act % RES_MODES, config);
    runs = tgl_gl_test_conv2d_winograd_calls(gl, m);
    for (size_t i = 0; step && i < sizeof fixed / sizeof fixed[0]; i++)
        for (int where = 0; where < 2; where++)
            check_special(p, gl, &fixed[i], where, config);
    assert_true(tgl_gl_test_conv2d_winograd_calls(gl, m) == runs + 2 * (sizeof fixed / sizeof fixed[0]) * step);
    runs = tgl_gl_test_conv2d_winograd_calls(gl, m);
    /* a 64 KiB SSBO limit: 16 channels at 24x24 (an image's transformed tiles 144 KiB for
     * F(2x2), 81 for F(4x4)) do not fit a window, so the other kernels run; at 6x6 (9 KiB an
     * image either way, 7 of them a window) 9 images run in slabs */
    tgl_gl_test_set_limits(gl, 65536, NULL);
    tgl_gl_of(gl)->limits.conv_winograd = m;
    tgl_gl_of(gl)->limits.conv_winograd_f4_tiles = 0;
    tgl_gl_of(gl)->limits.conv_winograd_min_tiles = 0;
    ccase wide = {D(2, 16, 24, 24, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1), 1, 0};
    check_case(p, gl, &wide, "Winograd, 64 KiB SSBO limit");
    assert_true(tgl_gl_test_conv2d_winograd_calls(gl, m) == runs);
    ccase slabs = {D(9, 16, 6, 6, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1), 1, 1};
    check_case(p, gl, &slabs, "Winograd, 64 KiB SSBO limit, slabs");
    assert_true(tgl_gl_test_conv2d_winograd_calls(gl, m) == runs + step);
    tgl_close(gl);
}

/* conv_winograd 4 runs F(2x2) where a batch has fewer 4x4 tiles than conv_winograd_f4_tiles, and
 * neither where it has fewer 2x2 tiles than conv_winograd_min_tiles. */
static void check_winograd_choice(pair *p)
{
    tgl_backend *gl = tgt_open(TGL_BACKEND_GL);
    if (tgl_gl_of(gl)->egl.es || tgl_gl_of(gl)->limits.storage_blocks < 5) {
        tgl_close(gl);
        return;
    }
    tgl_gl_of(gl)->limits.conv_winograd = 4;
    tgl_gl_of(gl)->limits.conv_winograd_f4_tiles = 18;
    tgl_gl_of(gl)->limits.conv_winograd_min_tiles = 30;
    /* 9x10 outputs: 3x3 tiles of 4x4 an image (batch 2 has 18, batch 1 9) and 5x5 of 2x2 (50,
     * 25); 5x5 outputs: 3x3 of 2x2 (batch 3: 27) */
    ccase two = {D(2, 16, 9, 10, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1), 1, 0}, one = two, few = two;
    one.d.batch = 1;
    few.d.batch = 3, few.d.in_h = few.d.in_w = 5;
    check_case(p, gl, &two, "Winograd, 18 tiles of 4x4");
    check_case(p, gl, &one, "Winograd, 9 tiles of 4x4");
    check_case(p, gl, &few, "not Winograd, 27 tiles of 2x2");
    assert_true(tgl_gl_test_conv2d_winograd_calls(gl, 4) == 1);
    assert_true(tgl_gl_test_conv2d_winograd_calls(gl, 2) == 0);
    tgl_gl_of(gl)->limits.conv_winograd_min_tiles = 25;
    check_case(p, gl, &one, "Winograd, 25 tiles of 2x2");
    assert_true(tgl_gl_test_conv2d_winograd_calls(gl, 2) == 1);
    tgl_close(gl);
}

static void test_conv2d_winograd(void **state)
{
    pair *p = *state;
    if (!p->gl)
        skip();
    check_winograd(p, 2);
    check_winograd(p, 4);
    check_winograd_choice(p);
}

static void test_conv2d_output_size(void **state)
{
    (void)state;
    size_t oh = 0, ow = 0;
    tgl_conv2d_desc d = D(1, 3, 224, 224, 64, 7, 7, 2, 2, 3, 3, 1, 1, 1);
    assert_int_equal(tgl_conv2d_output_size(&d, &oh, &ow), TGL_OK);
    assert_int_equal(oh, 112);
    assert_int_equal(ow, 112);
    tgl_conv2d_desc e = D(1, 1, 10, 9, 1, 3, 2, 0, 3, 0, 1, 2, 0, 0); /* zeros mean 1 */
    assert_int_equal(tgl_conv2d_output_size(&e, &oh, &ow), TGL_OK);
    assert_int_equal(oh, 6); /* (10 - 5) / 1 + 1 */
    assert_int_equal(ow, 4); /* (9 + 2 - 2) / 3 + 1 */
    static const tgl_conv2d_desc bad[] = {
        D(1, 3, 4, 4, 8, 5, 5, 1, 1, 0, 0, 1, 1, 1),   /* kernel larger than the input */
        D(1, 3, 4, 4, 8, 3, 3, 1, 1, 0, 0, 2, 2, 1),   /* dilated kernel (5x5) larger */
        D(1, 4, 8, 8, 6, 3, 3, 1, 1, 1, 1, 1, 1, 4),   /* out_channels not divisible */
        D(1, 6, 8, 8, 4, 3, 3, 1, 1, 1, 1, 1, 1, 4),   /* in_channels not divisible */
        D(1, 3, 8, 8, 4, 0, 3, 1, 1, 1, 1, 1, 1, 1),   /* empty kernel */
        D(1, 3, 0, 8, 4, 1, 1, 1, 1, 1, 1, 1, 1, 1),   /* empty input */
        D(1, 3, 8, (size_t)1 << 62, 4, 1, 1, 1, 1, 0, 0, 1, 1, 1), /* absurd size */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        oh = ow = 77;
        if (tgl_conv2d_output_size(&bad[i], &oh, &ow) != TGL_ERR_INVALID_ARGUMENT || oh != 77 || ow != 77 ||
            !tgl_last_error(NULL)[0])
            fail_msg("bad descriptor %zu accepted or left no message", i);
    }
    assert_int_equal(tgl_conv2d_output_size(NULL, &oh, &ow), TGL_ERR_INVALID_ARGUMENT);
    assert_int_equal(tgl_conv2d_output_size(&d, NULL, &ow), TGL_ERR_INVALID_ARGUMENT);
}

static void test_conv2d_errors(void **state)
{
    pair *p = *state;
    tgl_backend *backends[2] = {p->cpu, p->gl};
    for (int bi = 0; bi < 2; bi++) {
        tgl_backend *b = backends[bi];
        if (!b)
            continue;
        tgl_conv2d_desc d = D(2, 3, 6, 6, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1); /* output 2x4x6x6 */
        tgl_ptr in, f, bias, out;
        TGT_OK(b, tgl_alloc(b, 2 * 3 * 36 * sizeof(float), &in));
        TGT_OK(b, tgl_alloc(b, 4 * 3 * 9 * sizeof(float), &f));
        TGT_OK(b, tgl_alloc(b, 4 * sizeof(float), &bias));
        TGT_OK(b, tgl_alloc(b, 2 * 4 * 36 * sizeof(float), &out));
        TGT_OK(b, tgl_fill(b, out, 5.0f, 2 * 4 * 36));
        tgl_conv2d_desc bad = d;
        bad.groups = 2;
        TGT_EXPECT(b, tgl_conv2d(b, &bad, in, f, bias, out), TGL_ERR_INVALID_ARGUMENT);
        bad = d, bad.kernel_h = 9;
        TGT_EXPECT(b, tgl_conv2d(b, &bad, in, f, bias, out), TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_conv2d(b, NULL, in, f, bias, out), TGL_ERR_INVALID_ARGUMENT);
        bad = d, bad.in_channels = 4;
        TGT_EXPECT(b, tgl_conv2d(b, &bad, in, f, bias, out), TGL_ERR_INVALID_POINTER);
        TGT_EXPECT(b, tgl_conv2d(b, &d, in, f, bias + 4, out), TGL_ERR_INVALID_POINTER);
        TGT_EXPECT(b, tgl_conv2d(b, &d, in, f, bias, 999), TGL_ERR_INVALID_POINTER);
        TGT_EXPECT(b, tgl_conv2d(b, &d, out, f, bias, out), TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_conv2d(b, &d, in, f, bias, in), TGL_ERR_INVALID_POINTER); /* in is smaller than out */
        bad = d, bad.batch = 1; /* so the misaligned input still fits its allocation */
        TGT_EXPECT(b, tgl_conv2d(b, &bad, in + 2, f, bias, out), TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(NULL, tgl_conv2d(NULL, &d, in, f, bias, out), TGL_ERR_INVALID_ARGUMENT);
        /* dilation (kernel - 1) past 2^64 with each factor under the 2^40 bound (it once wrapped
         * to a span of 1 and passed) */
        bad = d, bad.kernel_h = ((size_t)1 << 39) + 1, bad.dilation_h = (size_t)1 << 39;
        TGT_EXPECT(b, tgl_conv2d(b, &bad, in, f, bias, out), TGL_ERR_INVALID_ARGUMENT);
        size_t oh = 0, ow = 0;
        assert_int_equal(tgl_conv2d_output_size(&bad, &oh, &ow), TGL_ERR_INVALID_ARGUMENT);
        /* Pads and strides past 32 bits: the output's one row lies in the padding (bias only).
         * GL, whose kernels index in 32 bits, refuses it (it once cut the pad to 32 bits and read
         * the input); the CPU backend computes it. */
        bad = d, bad.batch = 1, bad.pad_h = (size_t)1 << 32, bad.stride_h = ((size_t)1 << 33) + 8;
        assert_int_equal(tgl_conv2d_output_size(&bad, &oh, &ow), TGL_OK);
        assert_int_equal(oh, 1);
        if (b == p->gl) {
            TGT_EXPECT(b, tgl_conv2d(b, &bad, in, f, bias, out), TGL_ERR_UNSUPPORTED);
        } else {
            tgl_ptr row;
            float bias_host[4] = {1, 2, 3, 4}, got[4 * 6];
            TGT_OK(b, tgl_fill(b, f, 0.5f, 4 * 3 * 9)); /* finite: the padding's zeros times it add 0 */
            TGT_OK(b, tgl_alloc(b, sizeof got, &row));
            TGT_OK(b, tgl_copy_htod(b, bias, bias_host, sizeof bias_host));
            TGT_OK(b, tgl_conv2d(b, &bad, in, f, bias, row));
            TGT_OK(b, tgl_copy_dtoh(b, got, row, sizeof got));
            for (size_t i = 0; i < 4 * 6; i++)
                assert_true(got[i] == bias_host[i / 6]);
            TGT_OK(b, tgl_free(b, row));
        }
        bad = d, bad.batch = 0; /* no-ops */
        TGT_OK(b, tgl_conv2d(b, &bad, 0, 0, 0, 0));
        bad = d, bad.out_channels = 0;
        TGT_OK(b, tgl_conv2d(b, &bad, 0, 0, 0, 0));
        float host[2 * 4 * 36];
        TGT_OK(b, tgl_copy_dtoh(b, host, out, sizeof host));
        for (size_t i = 0; i < sizeof host / sizeof host[0]; i++)
            if (host[i] != 5.0f)
                fail_msg("%s: a failed call changed output[%zu] to %g", tgl_backend_name(b), i, (double)host[i]);
        TGT_OK(b, tgl_free(b, in));
        TGT_OK(b, tgl_free(b, f));
        TGT_OK(b, tgl_free(b, bias));
        TGT_OK(b, tgl_free(b, out));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv2d_cases),       cmocka_unit_test(test_conv2d_random),
        cmocka_unit_test(test_conv2d_slabs),       cmocka_unit_test(test_conv2d_winograd),
        cmocka_unit_test(test_conv2d_specials),    cmocka_unit_test(test_conv2d_output_size),
        cmocka_unit_test(test_conv2d_errors),       cmocka_unit_test(test_conv1d),
        cmocka_unit_test(test_conv2d_fused),        cmocka_unit_test(test_conv2d_fused_errors),
        cmocka_unit_test(test_fold_batchnorm),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

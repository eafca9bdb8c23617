/* tgl_conv_transpose2d: the CPU backend against PyTorch's definition evaluated on the host by
 * scattering each input element through the kernel (the backend gathers), and against
 * tgl_conv2d as its adjoint (<convT(x), z> = <x, conv2d(z)>); GL against the CPU backend over
 * fixed and random descriptors (strides, padding, output padding, dilation, groups, 1x1 inputs),
 * unaligned operands, poisoned outputs with guards, slabs under a small SSBO limit; the output
 * size and the refusals. */
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
    return tgt_pair_setup(state, 0xC7A2);
}

static int teardown(void **state)
{
    return tgt_pair_teardown(state);
}

typedef struct tcase {
    tgl_conv2d_desc d;
    size_t op_h, op_w; /* output padding */
    int bias;
    size_t front; /* floats before each operand */
} tcase;

typedef struct operands {
    float *in, *f, *bias;
    size_t n_in, n_f, n_out, oh, ow;
} operands;

static size_t one(size_t v)
{
    return v ? v : 1;
}

static operands make_operands(tgt_rng *r, const tcase *c)
{
    operands o;
    const tgl_conv2d_desc *d = &c->d;
    if (tgl_conv_transpose2d_output_size(d, c->op_h, c->op_w, &o.oh, &o.ow))
        fail_msg("output size: %s", tgl_last_error(NULL));
    o.n_in = d->batch * d->in_channels * d->in_h * d->in_w;
    o.n_f = d->in_channels * (d->out_channels / one(d->groups)) * d->kernel_h * d->kernel_w;
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

/* front + n_out + GUARD floats: the output in a poisoned allocation */
static float *run_on(tgl_backend *b, const tcase *c, const operands *o)
{
    size_t fr = c->front * sizeof(float), total = c->front + o->n_out + GUARD;
    tgl_ptr in = tgt_upload(b, o->in, o->n_in, c->front), f = tgt_upload(b, o->f, o->n_f, c->front);
    tgl_ptr bias = c->bias ? tgt_upload(b, o->bias, c->d.out_channels, c->front) : 0, out;
    float *host = malloc(total * sizeof(float));
    tgt_poison(host, total);
    TGT_OK(b, tgl_alloc(b, total * sizeof(float), &out));
    TGT_OK(b, tgl_copy_htod(b, out, host, total * sizeof(float)));
    TGT_OK(b, tgl_conv_transpose2d(b, &c->d, c->op_h, c->op_w, in + fr, f + fr, bias ? bias + fr : 0, out + fr));
    TGT_OK(b, tgl_copy_dtoh(b, host, out, total * sizeof(float)));
    TGT_OK(b, tgl_free(b, in));
    TGT_OK(b, tgl_free(b, f));
    TGT_OK(b, tgl_free(b, bias));
    TGT_OK(b, tgl_free(b, out));
    return host;
}

/* PyTorch's definition as a scatter, in double: every input element x[n, c, iy, ix] adds
 * x * w[c, o, ky, kx] to output[n, g * ocg + o, iy * s - p + ky * dil, ...] where inside. */
static double *host_reference(const tcase *c, const operands *o)
{
    const tgl_conv2d_desc *d = &c->d;
    size_t g_n = one(d->groups), sh = one(d->stride_h), sw = one(d->stride_w), dh = one(d->dilation_h),
           dw = one(d->dilation_w);
    size_t icg = d->in_channels / g_n, ocg = d->out_channels / g_n;
    double *out = calloc(o->n_out, sizeof(double));
    for (size_t n = 0; n < d->batch; n++)
        for (size_t ch = 0; ch < d->in_channels; ch++) {
            size_t g = ch / icg;
            for (size_t iy = 0; iy < d->in_h; iy++)
                for (size_t ix = 0; ix < d->in_w; ix++) {
                    double v = o->in[((n * d->in_channels + ch) * d->in_h + iy) * d->in_w + ix];
                    for (size_t oo = 0; oo < ocg; oo++)
                        for (size_t ky = 0; ky < d->kernel_h; ky++)
                            for (size_t kx = 0; kx < d->kernel_w; kx++) {
                                long long y = (long long)(iy * sh + ky * dh) - (long long)d->pad_h;
                                long long x = (long long)(ix * sw + kx * dw) - (long long)d->pad_w;
                                if (y < 0 || x < 0 || y >= (long long)o->oh || x >= (long long)o->ow)
                                    continue;
                                size_t oc = g * ocg + oo;
                                double w = o->f[((ch * ocg + oo) * d->kernel_h + ky) * d->kernel_w + kx];
                                out[((n * d->out_channels + oc) * o->oh + (size_t)y) * o->ow + (size_t)x] += v * w;
                            }
                }
        }
    if (c->bias)
        for (size_t i = 0; i < o->n_out; i++)
            out[i] += o->bias[i / (o->oh * o->ow) % d->out_channels];
    return out;
}

static void describe(const tcase *c, char *out, size_t size)
{
    const tgl_conv2d_desc *d = &c->d;
    snprintf(out, size, "n=%zu c=%zu %zux%zu oc=%zu k=%zux%zu s=%zu,%zu p=%zu,%zu op=%zu,%zu dil=%zu,%zu g=%zu bias=%d "
             "front=%zu", d->batch, d->in_channels, d->in_h, d->in_w, d->out_channels, d->kernel_h, d->kernel_w,
             d->stride_h, d->stride_w, d->pad_h, d->pad_w, c->op_h, c->op_w, d->dilation_h, d->dilation_w, d->groups,
             c->bias, c->front);
}

/* The CPU backend against the scatter reference; gl (where given) against the CPU backend. */
static void check_case(pair *p, tgl_backend *gl, const tcase *c)
{
    operands o = make_operands(&p->rng, c);
    char what[256];
    describe(c, what, sizeof what);
    float *want = run_on(p->cpu, c, &o);
    double *ref = host_reference(c, &o), err = 0, sum = 0;
    for (size_t i = 0; i < o.n_out; i++) {
        double dl = want[c->front + i] - ref[i];
        err += dl * dl, sum += ref[i] * ref[i];
    }
    if (!(err <= 1e-12 * (sum > 0 ? sum : 1)))
        fail_msg("%s: the CPU backend is off the scatter reference by NMSE %.3g", what, err / sum);
    if (gl) {
        float *got = run_on(gl, c, &o);
        size_t total = c->front + o.n_out + GUARD;
        for (size_t e = 0; e < total; e++)
            if ((e < c->front || e >= c->front + o.n_out) && tgt_first_unpoisoned(got + e, 1) == 0)
                fail_msg("%s: element %zd outside the output was written", what, (ptrdiff_t)e - (ptrdiff_t)c->front);
        double nmse = tgt_nmse(got + c->front, want + c->front, o.n_out);
        if (!(nmse <= 1e-9))
            fail_msg("%s: GL NMSE %.3g > 1e-9 against the CPU backend", what, nmse);
        free(got);
    }
    free(want);
    free(ref);
    free_operands(&o);
}

#define D(n, c, h, w, oc, kh, kw, sh, sw, ph, pw, dh, dw, g) {n, c, h, w, oc, kh, kw, sh, sw, ph, pw, dh, dw, g}
static const tcase cases[] = {
    {D(1, 4, 5, 5, 3, 2, 2, 2, 2, 0, 0, 1, 1, 1), 0, 0, 1, 0},    /* U-Net's 2x upsampling */
    {D(2, 3, 7, 6, 4, 3, 3, 2, 2, 1, 1, 1, 1, 1), 1, 1, 1, 1},    /* k3 s2 p1 with output padding: 14 x 12 */
    {D(1, 2, 1, 1, 3, 4, 4, 1, 1, 0, 0, 1, 1, 1), 0, 0, 0, 0},    /* 1x1 input: the kernel itself */
    {D(2, 6, 4, 5, 6, 3, 3, 1, 1, 1, 1, 1, 1, 3), 0, 0, 1, 1},    /* 3 groups */
    {D(1, 4, 6, 4, 4, 3, 3, 2, 1, 1, 0, 1, 1, 4), 1, 0, 1, 0},    /* depthwise, rectangular stride */
    {D(1, 3, 5, 5, 2, 3, 2, 3, 2, 2, 1, 2, 3, 1), 2, 1, 1, 1},    /* dilation with output padding */
    {D(1, 2, 3, 3, 2, 3, 3, 1, 1, 0, 0, 3, 3, 1), 2, 2, 0, 0},    /* output padding below the dilation only */
    {D(3, 5, 9, 8, 7, 4, 4, 2, 2, 1, 1, 1, 1, 1), 0, 0, 1, 0},    /* DCGAN-style k4 s2 p1 */
    {D(1, 1, 2, 2, 1, 5, 5, 3, 3, 3, 3, 1, 1, 1), 0, 0, 1, 1},    /* padding trims most of the full output */
    {D(1, 16, 12, 12, 24, 3, 3, 2, 2, 1, 1, 1, 1, 2), 1, 1, 1, 0}, /* larger: 24 x 24 */
};

static void test_cases(void **state)
{
    pair *p = *state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_case(p, p->gl, &cases[i]);
}

/* Random descriptors: every parameter drawn, kept where the output is valid. */
static void test_random(void **state)
{
    pair *p = *state;
    tgt_rng *r = &p->rng;
    int done = 0;
    while (done < tgt_count(60)) {
        size_t groups = 1 + tgt_below(r, 3);
        tcase c = {D(1 + tgt_below(r, 3), groups * (1 + tgt_below(r, 4)), 1 + tgt_below(r, 9), 1 + tgt_below(r, 9),
                     groups * (1 + tgt_below(r, 4)), 1 + tgt_below(r, 5), 1 + tgt_below(r, 5), 1 + tgt_below(r, 3),
                     1 + tgt_below(r, 3), tgt_below(r, 3), tgt_below(r, 3), 1 + tgt_below(r, 2), 1 + tgt_below(r, 2),
                     groups),
                   tgt_below(r, 3), tgt_below(r, 3), (int)tgt_below(r, 2), tgt_below(r, 2)};
        size_t oh, ow;
        if (tgl_conv_transpose2d_output_size(&c.d, c.op_h, c.op_w, &oh, &ow))
            continue;
        check_case(p, p->gl, &c);
        done++;
    }
}

/* The adjoint of tgl_conv2d with the same kernel, stride, padding, dilation and groups (the
 * filter read as OIHW with O = in_channels): <convT(x), z> = <x, conv2d(z)> for random x and z,
 * on the CPU backend and GL (output padding below the stride, where conv2d's output is x's size). */
static void test_adjoint_of_conv2d(void **state)
{
    pair *p = *state;
    tgt_rng *r = &p->rng;
    tgl_backend *bs[2] = {p->cpu, p->gl};
    int done = 0;
    while (done < 12) {
        size_t groups = 1 + tgt_below(r, 2);
        tcase c = {D(1 + tgt_below(r, 2), groups * (1 + tgt_below(r, 3)), 1 + tgt_below(r, 7), 1 + tgt_below(r, 7),
                     groups * (1 + tgt_below(r, 3)), 1 + tgt_below(r, 4), 1 + tgt_below(r, 4), 1 + tgt_below(r, 3),
                     1 + tgt_below(r, 3), tgt_below(r, 2), tgt_below(r, 2), 1 + tgt_below(r, 2), 1 + tgt_below(r, 2),
                     groups),
                   0, 0, 0, 0};
        c.op_h = tgt_below(r, c.d.stride_h);
        c.op_w = tgt_below(r, c.d.stride_w);
        size_t oh, ow;
        if (tgl_conv_transpose2d_output_size(&c.d, c.op_h, c.op_w, &oh, &ow))
            continue;
        tgl_conv2d_desc fwd = c.d; /* z [batch, out_channels, oh, ow] -> [batch, in_channels, in_h, in_w] */
        fwd.in_channels = c.d.out_channels, fwd.out_channels = c.d.in_channels, fwd.in_h = oh, fwd.in_w = ow;
        size_t fh, fw;
        if (tgl_conv2d_output_size(&fwd, &fh, &fw) || fh != c.d.in_h || fw != c.d.in_w)
            fail_msg("conv2d of the transposed output: %zu x %zu, not the input's %zu x %zu", fh, fw, c.d.in_h,
                     c.d.in_w);
        operands o = make_operands(r, &c);
        float *z = malloc(o.n_out * sizeof(float));
        for (size_t i = 0; i < o.n_out; i++)
            z[i] = tgt_uniform(r, -1, 1);
        for (int j = 0; j < 2; j++) {
            tgl_backend *b = bs[j];
            if (!b)
                continue;
            float *y = run_on(b, &c, &o), *back = malloc(o.n_in * sizeof(float));
            tgl_ptr pz = tgt_upload(b, z, o.n_out, 0), pf = tgt_upload(b, o.f, o.n_f, 0), px;
            TGT_OK(b, tgl_alloc(b, o.n_in * sizeof(float), &px));
            TGT_OK(b, tgl_conv2d(b, &fwd, pz, pf, 0, px));
            TGT_OK(b, tgl_copy_dtoh(b, back, px, o.n_in * sizeof(float)));
            double lhs = 0, rhs = 0, scale = 0;
            for (size_t i = 0; i < o.n_out; i++)
                lhs += (double)y[i] * z[i], scale += fabs((double)y[i] * z[i]);
            for (size_t i = 0; i < o.n_in; i++)
                rhs += (double)o.in[i] * back[i];
            if (!(fabs(lhs - rhs) <= 1e-5 * (scale > 0 ? scale : 1)))
                fail_msg("%s: <convT(x), z> = %.9g but <x, conv2d(z)> = %.9g", tgl_backend_name(b), lhs, rhs);
            TGT_OK(b, tgl_free(b, pz));
            TGT_OK(b, tgl_free(b, pf));
            TGT_OK(b, tgl_free(b, px));
            free(y), free(back);
        }
        free(z);
        free_operands(&o);
        done++;
    }
}

/* A small SSBO limit cuts the batch into slabs of images; an image past it is refused. */
static void test_slabs(void **state)
{
    pair *p = *state;
    if (!p->gl)
        skip();
    tgl_backend *gl = tgt_open(TGL_BACKEND_GL);
    tgl_gl_test_set_limits(gl, 4096, NULL);
    tcase c = {D(5, 2, 4, 5, 3, 3, 3, 2, 2, 1, 1, 1, 1, 1), 1, 0, 1, 1}; /* 3 x 8 x 9 outputs: 216 floats */
    check_case(p, gl, &c);
    tcase big = {D(1, 8, 16, 16, 8, 2, 2, 2, 2, 0, 0, 1, 1, 1), 0, 0, 0, 0}; /* 8 x 32 x 32 outputs */
    operands o = make_operands(&p->rng, &big);
    tgl_ptr in = tgt_upload(gl, o.in, o.n_in, 0), f = tgt_upload(gl, o.f, o.n_f, 0), out;
    TGT_OK(gl, tgl_alloc(gl, o.n_out * sizeof(float), &out));
    TGT_EXPECT(gl, tgl_conv_transpose2d(gl, &big.d, 0, 0, in, f, 0, out), TGL_ERR_UNSUPPORTED);
    free_operands(&o);
    tgl_close(gl);
}

static void test_output_size(void **state)
{
    (void)state;
    size_t oh = 0, ow = 0;
    tgl_conv2d_desc d = {.batch = 1, .in_channels = 1, .in_h = 7, .in_w = 6, .out_channels = 1, .kernel_h = 3,
                         .kernel_w = 3, .stride_h = 2, .stride_w = 2, .pad_h = 1, .pad_w = 1};
    TGT_OK(NULL, tgl_conv_transpose2d_output_size(&d, 1, 0, &oh, &ow));
    assert_int_equal(oh, 14); /* (7 - 1) 2 - 2 + 2 + 1 + 1 */
    assert_int_equal(ow, 11);
    TGT_EXPECT(NULL, tgl_conv_transpose2d_output_size(&d, 2, 0, &oh, &ow), TGL_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(tgl_last_error(NULL), "output_padding"));
    d.dilation_h = 3; /* below the dilation is enough */
    TGT_OK(NULL, tgl_conv_transpose2d_output_size(&d, 2, 0, &oh, &ow));
    tgl_conv2d_desc tiny = {.batch = 1, .in_channels = 1, .in_h = 1, .in_w = 1, .out_channels = 1, .kernel_h = 1,
                            .kernel_w = 1, .pad_h = 1};
    TGT_EXPECT(NULL, tgl_conv_transpose2d_output_size(&tiny, 0, 0, &oh, &ow), TGL_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(tgl_last_error(NULL), "no output"));
    tgl_conv2d_desc bad[] = {
        {.batch = 1, .in_channels = 1, .in_h = 4, .in_w = 4, .out_channels = 1, .kernel_h = 0, .kernel_w = 3},
        {.batch = 1, .in_channels = 1, .in_h = 0, .in_w = 4, .out_channels = 1, .kernel_h = 3, .kernel_w = 3},
        {.batch = 1, .in_channels = 3, .in_h = 4, .in_w = 4, .out_channels = 2, .kernel_h = 3, .kernel_w = 3,
         .groups = 2},
        {.batch = 1, .in_channels = 1, .in_h = (size_t)1 << 41, .in_w = 4, .out_channels = 1, .kernel_h = 3,
         .kernel_w = 3},
        {.batch = 1, .in_channels = 1, .in_h = (size_t)1 << 40, .in_w = 4, .out_channels = 1, .kernel_h = 3,
         .kernel_w = 3, .stride_h = (size_t)1 << 40},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        TGT_EXPECT(NULL, tgl_conv_transpose2d_output_size(&bad[i], 0, 0, &oh, &ow), TGL_ERR_INVALID_ARGUMENT);
    TGT_EXPECT(NULL, tgl_conv_transpose2d_output_size(NULL, 0, 0, &oh, &ow), TGL_ERR_INVALID_ARGUMENT);
    TGT_EXPECT(NULL, tgl_conv_transpose2d_output_size(&d, 0, 0, NULL, &ow), TGL_ERR_INVALID_ARGUMENT);
}

/* Refusals on both backends, the output untouched; batch 0 is a no-op. */
static void test_errors(void **state)
{
    pair *p = *state;
    tgl_backend *backends[2] = {p->cpu, p->gl};
    tgl_conv2d_desc d = {.batch = 1, .in_channels = 2, .in_h = 3, .in_w = 3, .out_channels = 2, .kernel_h = 2,
                         .kernel_w = 2, .stride_h = 2, .stride_w = 2}; /* 6 x 6 outputs: 72 floats */
    for (int bi = 0; bi < 2; bi++) {
        tgl_backend *b = backends[bi];
        if (!b)
            continue;
        tgl_ptr in, f, out;
        TGT_OK(b, tgl_alloc(b, 18 * sizeof(float), &in));
        TGT_OK(b, tgl_alloc(b, 16 * sizeof(float), &f));
        TGT_OK(b, tgl_alloc(b, 144 * sizeof(float), &out));
        TGT_OK(b, tgl_fill(b, out, 3.0f, 144));
        TGT_EXPECT(b, tgl_conv_transpose2d(b, NULL, 0, 0, in, f, 0, out), TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_conv_transpose2d(b, &d, 2, 0, in, f, 0, out), TGL_ERR_INVALID_ARGUMENT);
        TGT_EXPECT(b, tgl_conv_transpose2d(b, &d, 0, 0, in, f, 0, out + 100 * sizeof(float)), TGL_ERR_INVALID_POINTER);
        TGT_EXPECT(b, tgl_conv_transpose2d(b, &d, 0, 0, in, f + 4, 0, out), TGL_ERR_INVALID_POINTER);
        TGT_EXPECT(b, tgl_conv_transpose2d(b, &d, 0, 0, in, f, f + 60, out), TGL_ERR_INVALID_POINTER); /* bias past f */
        TGT_EXPECT(b, tgl_conv_transpose2d(b, &d, 0, 0, in, f, out + 70 * sizeof(float), out),
                   TGL_ERR_INVALID_ARGUMENT); /* bias inside output */
        TGT_EXPECT(b, tgl_conv_transpose2d(b, &d, 0, 0, out, f, 0, out + 10 * sizeof(float)),
                   TGL_ERR_INVALID_ARGUMENT); /* input overlapping output */
        TGT_EXPECT(b, tgl_conv_transpose2d(b, &d, 0, 0, in, f, 0, 12345), TGL_ERR_INVALID_POINTER);
        tgl_conv2d_desc none = d;
        none.batch = 0;
        TGT_OK(b, tgl_conv_transpose2d(b, &none, 0, 0, 0, 0, 0, 0));
        float host[144];
        TGT_OK(b, tgl_copy_dtoh(b, host, out, sizeof host));
        for (int i = 0; i < 144; i++)
            if (host[i] != 3.0f)
                fail_msg("%s: a refused call wrote output[%d] = %g", tgl_backend_name(b), i, (double)host[i]);
        TGT_OK(b, tgl_free(b, in));
        TGT_OK(b, tgl_free(b, f));
        TGT_OK(b, tgl_free(b, out));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_output_size), cmocka_unit_test(test_cases),  cmocka_unit_test(test_random),
        cmocka_unit_test(test_adjoint_of_conv2d), cmocka_unit_test(test_slabs), cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests_name("conv_transpose2d", tests, setup, teardown);
}

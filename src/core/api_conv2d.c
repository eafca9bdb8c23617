/* tgl_conv2d_output_size, tgl_conv2d and tgl_conv2d_fused: checks, then the backend;
 * tgl_fold_batchnorm on the host. */
#include "trace.h"
#include "validate.h"

#include <math.h>

/* Fills zero strides, dilations and groups with 1 and computes the output size. b may be NULL
 * (tgl_conv2d_output_size records the message as the thread's open error then). */
static tgl_status normalize(tgl_backend *b, const tgl_conv2d_desc *in, tgl_conv2d_desc *d, size_t *oh, size_t *ow)
{
    if (!in)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "desc: NULL");
    *d = *in;
    size_t *ones[] = {&d->stride_h, &d->stride_w, &d->dilation_h, &d->dilation_w, &d->groups};
    for (size_t i = 0; i < sizeof ones / sizeof ones[0]; i++)
        if (*ones[i] == 0)
            *ones[i] = 1;
    if (d->kernel_h == 0 || d->kernel_w == 0)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "kernel: %zu x %zu is empty", d->kernel_h, d->kernel_w);
    if (d->in_h == 0 || d->in_w == 0)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "input: %zu x %zu is empty", d->in_h, d->in_w);
    if (d->in_channels % d->groups || d->out_channels % d->groups)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "groups: %zu does not divide in_channels %zu and "
                         "out_channels %zu", d->groups, d->in_channels, d->out_channels);
    const size_t limit = (size_t)1 << 40; /* keeps the arithmetic below far from overflow */
    if (d->in_h > limit || d->in_w > limit || d->pad_h > limit || d->pad_w > limit || d->kernel_h > limit ||
        d->kernel_w > limit || d->dilation_h > limit || d->dilation_w > limit)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "desc: a spatial size exceeds 2^40");
    /* dilation (kernel - 1) may pass 2^64 with both factors under the limit: checked */
    size_t span_h, span_w;
    tgl_status st;
    if ((st = tgl__mul(b, "dilation_h * (kernel_h - 1)", d->dilation_h, d->kernel_h - 1, &span_h)) ||
        (st = tgl__mul(b, "dilation_w * (kernel_w - 1)", d->dilation_w, d->kernel_w - 1, &span_w)))
        return st;
    span_h++, span_w++;
    size_t padded_h = d->in_h + 2 * d->pad_h, padded_w = d->in_w + 2 * d->pad_w;
    if (span_h > padded_h || span_w > padded_w)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "kernel: the dilated kernel (%zu x %zu) is larger than the "
                         "padded input (%zu x %zu)", span_h, span_w, padded_h, padded_w);
    *oh = (padded_h - span_h) / d->stride_h + 1;
    *ow = (padded_w - span_w) / d->stride_w + 1;
    return TGL_OK;
}

TGL_API tgl_status tgl_conv2d_output_size(const tgl_conv2d_desc *d, size_t *out_h, size_t *out_w)
{
    tgl_conv2d_desc n;
    size_t oh, ow;
    if (!out_h || !out_w)
        return tgl__fail(NULL, TGL_ERR_INVALID_ARGUMENT, "out_h, out_w: NULL");
    tgl_status st = normalize(NULL, d, &n, &oh, &ow);
    if (st)
        return st;
    *out_h = oh, *out_w = ow;
    return TGL_OK;
}

tgl_status tgl__resolve_conv(tgl_backend *b, const tgl_conv2d_desc *d, size_t f0, size_t f1, size_t out_h,
                             size_t out_w, tgl_ptr input, tgl_ptr filter, tgl_ptr bias, tgl_ptr output, tgl__view v[4],
                             size_t *n_out)
{
    size_t n_in, n_f;
    const size_t F = sizeof(float);
    tgl_status st;
    v[2] = (tgl__view){0};
    if ((st = tgl__count4(b, "input", d->batch, d->in_channels, d->in_h, d->in_w, &n_in)) ||
        (st = tgl__count4(b, "filter", f0, f1, d->kernel_h, d->kernel_w, &n_f)) ||
        (st = tgl__count4(b, "output", d->batch, d->out_channels, out_h, out_w, n_out)) ||
        (st = tgl__resolve_array(b, "input", input, n_in, F, &v[0])) ||
        (st = tgl__resolve_array(b, "filter", filter, n_f, F, &v[1])) ||
        (st = tgl__resolve_array(b, "output", output, *n_out, F, &v[3])) ||
        (st = tgl__check_disjoint(b, "input", v[0], n_in * F, v[3], *n_out * F)) ||
        (st = tgl__check_disjoint(b, "filter", v[1], n_f * F, v[3], *n_out * F)))
        return st;
    if (bias && ((st = tgl__resolve_array(b, "bias", bias, d->out_channels, F, &v[2])) ||
                 (st = tgl__check_disjoint(b, "bias", v[2], d->out_channels * F, v[3], *n_out * F))))
        return st;
    return TGL_OK;
}

/* Validates every argument, then (a residual other than output) copies the residual into output
 * and runs the backend. */
static tgl_status conv2d(tgl_backend *b, const tgl_conv2d_desc *desc, tgl_ptr input, tgl_ptr filter, tgl_ptr bias,
                         tgl_activation act, float slope, tgl_ptr residual, int residual_first, tgl_ptr output)
{
    tgl_status st = tgl__enter(b);
    if (st)
        return st;
    tgl__conv2d c = {.act = act, .slope = slope};
    if ((st = tgl__check_activation(b, act, slope)))
        return st;
    if (residual_first != 0 && residual_first != 1)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "residual_first: %d, 0 or 1", residual_first);
    if ((st = normalize(b, desc, &c.d, &c.out_h, &c.out_w)))
        return st;
    const tgl_conv2d_desc *d = &c.d;
    if (d->batch == 0 || d->in_channels == 0 || d->out_channels == 0)
        return TGL_OK;
    size_t n_out;
    const size_t F = sizeof(float);
    tgl__view v[4];
    if ((st = tgl__resolve_conv(b, d, d->out_channels, d->in_channels / d->groups, c.out_h, c.out_w, input, filter,
                                bias, output, v, &n_out)))
        return st;
    c.in = v[0], c.filter = v[1], c.bias = v[2], c.out = v[3];
    tgl__view res = {0};
    if (residual && ((st = tgl__resolve_array(b, "residual", residual, n_out, F, &res)) ||
                     (st = tgl__check_alias(b, "residual", res, n_out * F, c.out, n_out * F))))
        return st;
    if (!b->vt->conv2d)
        return tgl__unsupported(b, tgl__fn_name(residual || act ? TGL__FN_CONV2D_FUSED : TGL__FN_CONV2D));
    if (residual) {
        c.residual = residual_first ? TGL__RESIDUAL_FIRST : TGL__RESIDUAL_AFTER;
        if ((res.buf != c.out.buf || res.offset != c.out.offset) &&
            (st = tgl__leave(b, b->vt->copy(b, c.out, res, n_out * F))))
            return st;
    }
    return tgl__leave(b, b->vt->conv2d(b, &c));
}

TGL_API tgl_status tgl_conv2d(tgl_backend *b, const tgl_conv2d_desc *desc, tgl_ptr input, tgl_ptr filter,
                              tgl_ptr bias, tgl_ptr output)
{
    if (tgl__hooked(b))
        return TGL__HOOK(CONV2D);
    return conv2d(b, desc, input, filter, bias, TGL_ACTIVATION_NONE, 0.0f, 0, 0, output);
}

TGL_API tgl_status tgl_conv2d_fused(tgl_backend *b, const tgl_conv2d_desc *desc, tgl_ptr input, tgl_ptr filter,
                                    tgl_ptr bias, tgl_activation activation, float slope, tgl_ptr residual,
                                    int residual_first, tgl_ptr output)
{
    if (tgl__hooked(b))
        return TGL__HOOK(CONV2D_FUSED);
    return conv2d(b, desc, input, filter, bias, activation, slope, residual, residual_first, output);
}

TGL_API tgl_status tgl_fold_batchnorm(size_t out_channels, size_t per_channel, float *filter, float *bias,
                                      const float *gamma, const float *beta, const float *mean, const float *var,
                                      float eps)
{
    if (!out_channels)
        return TGL_OK;
    if (!filter || !bias || !gamma || !beta || !mean || !var)
        return tgl__fail(NULL, TGL_ERR_INVALID_ARGUMENT, "tgl_fold_batchnorm: a NULL array (filter %p, bias %p, "
                         "gamma %p, beta %p, mean %p, var %p)", (void *)filter, (void *)bias, (const void *)gamma,
                         (const void *)beta, (const void *)mean, (const void *)var);
    for (size_t o = 0; o < out_channels; o++) { /* checked first: a refused call changes nothing */
        double v = (double)var[o] + (double)eps;
        if (!(v > 0.0) || !isfinite(v) || !isfinite(gamma[o]) || !isfinite(beta[o]) || !isfinite(mean[o]))
            return tgl__fail(NULL, TGL_ERR_INVALID_ARGUMENT, "tgl_fold_batchnorm: channel %zu: var + eps = %g, "
                             "gamma %g, beta %g, mean %g (var + eps must be positive, all finite)", o, v,
                             (double)gamma[o], (double)beta[o], (double)mean[o]);
    }
    for (size_t o = 0; o < out_channels; o++) {
        double s = (double)gamma[o] / sqrt((double)var[o] + (double)eps);
        for (size_t i = 0; i < per_channel; i++)
            filter[o * per_channel + i] = (float)((double)filter[o * per_channel + i] * s);
        bias[o] = (float)(((double)bias[o] - (double)mean[o]) * s + (double)beta[o]);
    }
    return TGL_OK;
}

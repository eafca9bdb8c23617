/* tgl_conv_transpose2d_output_size and tgl_conv_transpose2d: checks, then the backend. */
#include "trace.h"
#include "validate.h"

/* Fills zero strides, dilations and groups with 1, checks the descriptor and output padding, and
 * computes the output size. b may be NULL (the message is then the thread's open error). */
static tgl_status normalize(tgl_backend *b, const tgl_conv2d_desc *in, size_t op_h, size_t op_w, tgl_conv2d_desc *d,
                            size_t *oh, size_t *ow)
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
    const size_t limit = (size_t)1 << 40; /* keeps the sums below far from overflow */
    const size_t sizes[] = {d->in_h, d->in_w, d->pad_h, d->pad_w, d->kernel_h, d->kernel_w, d->dilation_h,
                            d->dilation_w, d->stride_h, d->stride_w, op_h, op_w};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (sizes[i] > limit)
            return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "desc: a spatial size exceeds 2^40");
    if ((op_h >= d->stride_h && op_h >= d->dilation_h) || (op_w >= d->stride_w && op_w >= d->dilation_w))
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "output_padding: %zu x %zu must be below the stride (%zu x %zu) "
                         "or the dilation (%zu x %zu) along each side", op_h, op_w, d->stride_h, d->stride_w,
                         d->dilation_h, d->dilation_w);
    size_t reach_h, reach_w, span_h, span_w;
    tgl_status st;
    if ((st = tgl__mul(b, "(in_h - 1) * stride_h", d->in_h - 1, d->stride_h, &reach_h)) ||
        (st = tgl__mul(b, "(in_w - 1) * stride_w", d->in_w - 1, d->stride_w, &reach_w)) ||
        (st = tgl__mul(b, "dilation_h * (kernel_h - 1)", d->dilation_h, d->kernel_h - 1, &span_h)) ||
        (st = tgl__mul(b, "dilation_w * (kernel_w - 1)", d->dilation_w, d->kernel_w - 1, &span_w)))
        return st;
    /* each term is below 2^80 only as a product of two below 2^40: checked above; sums of three
     * below 2^62 each stay inside size_t */
    size_t full_h = reach_h + span_h + op_h + 1, full_w = reach_w + span_w + op_w + 1;
    if (full_h <= 2 * d->pad_h || full_w <= 2 * d->pad_w)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "padding: %zu x %zu leaves no output of the full %zu x %zu",
                         d->pad_h, d->pad_w, full_h, full_w);
    *oh = full_h - 2 * d->pad_h;
    *ow = full_w - 2 * d->pad_w;
    return TGL_OK;
}

TGL_API tgl_status tgl_conv_transpose2d_output_size(const tgl_conv2d_desc *d, size_t output_padding_h,
                                                    size_t output_padding_w, size_t *out_h, size_t *out_w)
{
    tgl_conv2d_desc n;
    size_t oh, ow;
    if (!out_h || !out_w)
        return tgl__fail(NULL, TGL_ERR_INVALID_ARGUMENT, "out_h, out_w: NULL");
    tgl_status st = normalize(NULL, d, output_padding_h, output_padding_w, &n, &oh, &ow);
    if (st)
        return st;
    *out_h = oh, *out_w = ow;
    return TGL_OK;
}

TGL_API tgl_status tgl_conv_transpose2d(tgl_backend *b, const tgl_conv2d_desc *desc, size_t output_padding_h,
                                        size_t output_padding_w, tgl_ptr input, tgl_ptr filter, tgl_ptr bias,
                                        tgl_ptr output)
{
    if (tgl__hooked(b))
        return TGL__HOOK(CONV_TRANSPOSE2D);
    tgl_status st = tgl__enter(b);
    if (st)
        return st;
    tgl__conv_transpose2d c = {0};
    if ((st = normalize(b, desc, output_padding_h, output_padding_w, &c.d, &c.out_h, &c.out_w)))
        return st;
    const tgl_conv2d_desc *d = &c.d;
    if (d->batch == 0 || d->in_channels == 0 || d->out_channels == 0)
        return TGL_OK;
    size_t n_out;
    tgl__view v[4];
    if ((st = tgl__resolve_conv(b, d, d->in_channels, d->out_channels / d->groups, c.out_h, c.out_w, input, filter,
                                bias, output, v, &n_out)))
        return st;
    c.in = v[0], c.filter = v[1], c.bias = v[2], c.out = v[3];
    if (!b->vt->conv_transpose2d)
        return tgl__unsupported(b, "tgl_conv_transpose2d");
    return tgl__leave(b, b->vt->conv_transpose2d(b, &c));
}

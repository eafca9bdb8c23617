/* tgl_pool2d_output_size, tgl_pool2d, tgl_max_pool2d_indices and tgl_adaptive_pool2d: checks (PyTorch's rules), then the
 * backend. */
#include "trace.h"
#include "validate.h"

/* One dim's output extent by PyTorch's pooling_output_shape: (in + 2 pad - span + (ceil ? stride
 * - 1 : 0)) / stride + 1, the division rounding down, less one in ceil mode when the last window
 * would start in the far padding; 0 when no window fits. In ceil mode a span up to stride - 1
 * past the padded input still gives one window (a 3-wide kernel of stride 3 over 1 pixel), as
 * PyTorch's. Sizes are below 2^40 (checked). */
static size_t out_extent(size_t in, size_t pad, size_t span, size_t stride, int ceil_mode)
{
    size_t reach = in + 2 * pad + (ceil_mode ? stride - 1 : 0);
    if (span > reach)
        return 0;
    size_t n = (reach - span) / stride + 1;
    if (ceil_mode && (n - 1) * stride >= in + pad)
        n--;
    return n;
}

/* Fills zero strides (the kernel) and dilations (1) and computes the output size. b may be
 * NULL (tgl_pool2d_output_size records the message as the thread's open error then). */
static tgl_status normalize(tgl_backend *b, const tgl_pool2d_desc *in, tgl_pool2d_desc *d, size_t *oh, size_t *ow)
{
    if (!in)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "desc: NULL");
    *d = *in;
    if ((unsigned)d->kind > TGL_POOL_AVG)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "kind: %d is neither TGL_POOL_MAX nor TGL_POOL_AVG", (int)d->kind);
    if (d->kernel_h == 0 || d->kernel_w == 0)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "kernel: %zu x %zu is empty", d->kernel_h, d->kernel_w);
    if (d->in_h == 0 || d->in_w == 0)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "input: %zu x %zu is empty", d->in_h, d->in_w);
    const size_t limit = (size_t)1 << 40; /* keeps the arithmetic below far from overflow */
    if (d->in_h > limit || d->in_w > limit || d->pad_h > limit || d->pad_w > limit || d->kernel_h > limit ||
        d->kernel_w > limit || d->dilation_h > limit || d->dilation_w > limit || d->stride_h > limit ||
        d->stride_w > limit)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "desc: a spatial size exceeds 2^40");
    if (d->stride_h == 0)
        d->stride_h = d->kernel_h;
    if (d->stride_w == 0)
        d->stride_w = d->kernel_w;
    if (d->kind == TGL_POOL_AVG && (d->dilation_h > 1 || d->dilation_w > 1))
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "dilation: %zu x %zu; average pooling takes none (0 or 1)",
                         d->dilation_h, d->dilation_w);
    if (d->dilation_h == 0)
        d->dilation_h = 1;
    if (d->dilation_w == 0)
        d->dilation_w = 1;
    if (d->pad_h > d->kernel_h / 2 || d->pad_w > d->kernel_w / 2)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "pad: %zu x %zu is more than half the kernel (%zu x %zu)",
                         d->pad_h, d->pad_w, d->kernel_h, d->kernel_w);
    size_t span_h, span_w;
    tgl_status st;
    if ((st = tgl__mul(b, "dilation_h * (kernel_h - 1)", d->dilation_h, d->kernel_h - 1, &span_h)) ||
        (st = tgl__mul(b, "dilation_w * (kernel_w - 1)", d->dilation_w, d->kernel_w - 1, &span_w)))
        return st;
    *oh = out_extent(d->in_h, d->pad_h, span_h + 1, d->stride_h, d->ceil_mode);
    *ow = out_extent(d->in_w, d->pad_w, span_w + 1, d->stride_w, d->ceil_mode);
    if (*oh == 0 || *ow == 0)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "kernel: the dilated kernel (%zu x %zu) is larger than the "
                         "padded input (%zu x %zu)%s", span_h + 1, span_w + 1, d->in_h + 2 * d->pad_h,
                         d->in_w + 2 * d->pad_w, d->ceil_mode ? " by a stride or more" : "");
    return TGL_OK;
}

TGL_API tgl_status tgl_pool2d_output_size(const tgl_pool2d_desc *d, size_t *out_h, size_t *out_w)
{
    tgl_pool2d_desc n;
    size_t oh = 0, ow = 0;
    if (!out_h || !out_w)
        return tgl__fail(NULL, TGL_ERR_INVALID_ARGUMENT, "out_h, out_w: NULL");
    tgl_status st = normalize(NULL, d, &n, &oh, &ow);
    if (st)
        return st;
    *out_h = oh, *out_w = ow;
    return TGL_OK;
}

/* Both max and average pooling; indices (0: none) with max only. */
static tgl_status pool2d(tgl_backend *b, const tgl_pool2d_desc *desc, tgl_ptr input, tgl_ptr output,
                         tgl_ptr indices, int with_indices)
{
    tgl_status st;
    tgl__pool2d p = {0};
    if ((st = normalize(b, desc, &p.d, &p.out_h, &p.out_w)))
        return st;
    const tgl_pool2d_desc *d = &p.d;
    if (with_indices && d->kind != TGL_POOL_MAX)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "desc: kind %d; indices come with TGL_POOL_MAX only", (int)d->kind);
    if (with_indices && d->in_h > (size_t)INT32_MAX / (d->in_w ? d->in_w : 1)) /* (in_w > 0: normalized) */
        return tgl__fail(b, TGL_ERR_UNSUPPORTED, "input: planes of %zu x %zu pixels; i32 indices reach 2^31 - 1",
                         d->in_h, d->in_w);
    if (d->batch == 0 || d->channels == 0)
        return TGL_OK;
    size_t n_in, n_out;
    const size_t F = sizeof(float);
    if ((st = tgl__count4(b, "input", d->batch, d->channels, d->in_h, d->in_w, &n_in)) ||
        (st = tgl__count4(b, "output", d->batch, d->channels, p.out_h, p.out_w, &n_out)) ||
        (st = tgl__resolve_array(b, "input", input, n_in, F, &p.in)) ||
        (st = tgl__resolve_array(b, "output", output, n_out, F, &p.out)) ||
        (st = tgl__check_disjoint(b, "input", p.in, n_in * F, p.out, n_out * F)))
        return st;
    if (with_indices) {
        if ((st = tgl__resolve_array(b, "indices", indices, n_out, sizeof(int32_t), &p.indices)))
            return st;
        int on_in = tgl__overlaps(p.in, n_in * F, p.indices, n_out * 4);
        if (on_in || tgl__overlaps(p.out, n_out * F, p.indices, n_out * 4))
            return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "indices overlaps %s", on_in ? "input" : "output");
    }
    if (!b->vt->pool2d)
        return tgl__unsupported(b, with_indices ? "tgl_max_pool2d_indices" : "tgl_pool2d");
    return b->vt->pool2d(b, &p);
}

TGL_API tgl_status tgl_pool2d(tgl_backend *b, const tgl_pool2d_desc *desc, tgl_ptr input, tgl_ptr output)
{
    if (tgl__hooked(b))
        return TGL__HOOK(POOL2D);
    tgl_status st = tgl__enter(b);
    return st ? st : tgl__leave(b, pool2d(b, desc, input, output, 0, 0));
}

TGL_API tgl_status tgl_max_pool2d_indices(tgl_backend *b, const tgl_pool2d_desc *desc, tgl_ptr input, tgl_ptr output,
                                          tgl_ptr indices)
{
    if (tgl__hooked(b))
        return TGL__HOOK(MAX_POOL2D_INDICES);
    tgl_status st = tgl__enter(b);
    return st ? st : tgl__leave(b, pool2d(b, desc, input, output, indices, 1));
}

TGL_API tgl_status tgl_adaptive_pool2d(tgl_backend *b, tgl_pool_kind kind, size_t batch, size_t channels, size_t in_h,
                                       size_t in_w, size_t out_h, size_t out_w, tgl_ptr input, tgl_ptr output)
{
    if (tgl__hooked(b))
        return TGL__HOOK(ADAPTIVE_POOL2D);
    tgl_status st = tgl__enter(b);
    if (st)
        return st;
    if ((unsigned)kind > TGL_POOL_AVG)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "kind: %d is neither TGL_POOL_MAX nor TGL_POOL_AVG", (int)kind);
    if (in_h == 0 || in_w == 0 || out_h == 0 || out_w == 0)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "sizes: input %zu x %zu, output %zu x %zu; none may be empty",
                         in_h, in_w, out_h, out_w);
    if (in_h > INT32_MAX || in_w > INT32_MAX || out_h > INT32_MAX || out_w > INT32_MAX)
        return tgl__fail(b, TGL_ERR_UNSUPPORTED, "sizes: input %zu x %zu, output %zu x %zu; sides below 2^31 are taken",
                         in_h, in_w, out_h, out_w);
    if (batch == 0 || channels == 0)
        return TGL_OK;
    tgl__pool2d p = {.d = {.batch = batch, .channels = channels, .in_h = in_h, .in_w = in_w, .kind = kind},
                     .out_h = out_h,
                     .out_w = out_w};
    size_t n_in, n_out;
    const size_t F = sizeof(float);
    if ((st = tgl__count4(b, "input", batch, channels, in_h, in_w, &n_in)) ||
        (st = tgl__count4(b, "output", batch, channels, out_h, out_w, &n_out)) ||
        (st = tgl__resolve_array(b, "input", input, n_in, F, &p.in)) ||
        (st = tgl__resolve_array(b, "output", output, n_out, F, &p.out)) ||
        (st = tgl__check_disjoint(b, "input", p.in, n_in * F, p.out, n_out * F)))
        return st;
    if (!b->vt->adaptive_pool2d)
        return tgl__unsupported(b, "tgl_adaptive_pool2d");
    return tgl__leave(b, b->vt->adaptive_pool2d(b, &p));
}

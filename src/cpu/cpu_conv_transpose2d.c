/* CPU transposed convolution: each output element gathers the taps that reach it (the
 * definition in tensorgl.h), double sums. */
#include "cpu_ops.h"

#include <stdint.h>

/* The input index along one axis that tap k sends to output coordinate o, or -1 for none. */
static int64_t source(size_t o, size_t k, size_t stride, size_t pad, size_t dilation, size_t in)
{
    int64_t t = (int64_t)o + (int64_t)pad - (int64_t)(k * dilation);
    if (t < 0 || t % (int64_t)stride)
        return -1;
    t /= (int64_t)stride;
    return t < (int64_t)in ? t : -1;
}

tgl_status tgl_cpu_conv_transpose2d(tgl_backend *b, const tgl__conv_transpose2d *c)
{
    (void)b;
    const tgl_conv2d_desc *d = &c->d;
    const size_t icg = d->in_channels / d->groups, ocg = d->out_channels / d->groups, khw = d->kernel_h * d->kernel_w;
    const float *in = tgl_cpu_at(c->in), *f = tgl_cpu_at(c->filter), *bias = c->bias.buf ? tgl_cpu_at(c->bias) : NULL;
    float *out = tgl_cpu_at(c->out);
    for (size_t n = 0; n < d->batch; n++)
        for (size_t o = 0; o < d->out_channels; o++) {
            size_t g = o / ocg, oo = o % ocg;
            float *plane = out + (n * d->out_channels + o) * c->out_h * c->out_w;
            for (size_t y = 0; y < c->out_h; y++)
                for (size_t x = 0; x < c->out_w; x++) {
                    double sum = bias ? bias[o] : 0.0;
                    for (size_t ky = 0; ky < d->kernel_h; ky++) {
                        int64_t iy = source(y, ky, d->stride_h, d->pad_h, d->dilation_h, d->in_h);
                        if (iy < 0)
                            continue;
                        for (size_t kx = 0; kx < d->kernel_w; kx++) {
                            int64_t ix = source(x, kx, d->stride_w, d->pad_w, d->dilation_w, d->in_w);
                            if (ix < 0)
                                continue;
                            size_t tap = ky * d->kernel_w + kx;
                            for (size_t ci = 0; ci < icg; ci++) {
                                size_t ch = g * icg + ci, row = (n * d->in_channels + ch) * d->in_h + (size_t)iy;
                                sum += (double)in[row * d->in_w + (size_t)ix] * f[(ch * ocg + oo) * khw + tap];
                            }
                        }
                    }
                    plane[y * c->out_w + x] = (float)sum;
                }
        }
    return TGL_OK;
}

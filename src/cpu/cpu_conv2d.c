/* CPU conv2d: direct loops over the definition (the padding zeros that multiply the filter),
 * double sums, then the fused epilogue. */
#include "cpu_math.h"
#include "cpu_ops.h"

tgl_status tgl_cpu_conv2d(tgl_backend *b, const tgl__conv2d *c)
{
    (void)b;
    const tgl_conv2d_desc *d = &c->d;
    const size_t icg = d->in_channels / d->groups, ocg = d->out_channels / d->groups;
    const float *in = tgl_cpu_at(c->in), *f = tgl_cpu_at(c->filter), *bias = c->bias.buf ? tgl_cpu_at(c->bias) : NULL;
    float *out = tgl_cpu_at(c->out);
    for (size_t n = 0; n < d->batch; n++)
        for (size_t oc = 0; oc < d->out_channels; oc++) {
            size_t g = oc / ocg;
            const float *fo = f + oc * icg * d->kernel_h * d->kernel_w;
            float *plane = out + (n * d->out_channels + oc) * c->out_h * c->out_w;
            for (size_t y = 0; y < c->out_h; y++)
                for (size_t x = 0; x < c->out_w; x++) {
                    double sum = bias ? bias[oc] : 0.0;
                    for (size_t ic = 0; ic < icg; ic++) {
                        const float *ip = in + (n * d->in_channels + g * icg + ic) * d->in_h * d->in_w;
                        const float *fp = fo + ic * d->kernel_h * d->kernel_w;
                        for (size_t ky = 0; ky < d->kernel_h; ky++) {
                            /* Padded coordinates; unsigned wrap-around makes "< 0" fail "< in_h". */
                            size_t iy = y * d->stride_h + ky * d->dilation_h - d->pad_h;
                            int row_in = y * d->stride_h + ky * d->dilation_h >= d->pad_h && iy < d->in_h;
                            for (size_t kx = 0; kx < d->kernel_w; kx++) {
                                size_t ix = x * d->stride_w + kx * d->dilation_w - d->pad_w;
                                int in_image = row_in && x * d->stride_w + kx * d->dilation_w >= d->pad_w && ix < d->in_w;
                                /* the padding is zeros that multiply the filter, as in PyTorch: an
                                 * infinite or NaN tap over it gives NaN */
                                double v = in_image ? (double)ip[iy * d->in_w + ix] : 0.0;
                                sum += v * fp[ky * d->kernel_w + kx];
                            }
                        }
                    }
                    /* the epilogue in f32 steps, as a kernel stores it: the residual is in out */
                    float v = (float)sum, *at = &plane[y * c->out_w + x];
                    if (c->residual == TGL__RESIDUAL_FIRST)
                        v = (float)((double)v + *at);
                    v = tgl_cpu_activation(c->act, c->slope, v);
                    if (c->residual == TGL__RESIDUAL_AFTER)
                        v = (float)((double)v + *at);
                    *at = v;
                }
        }
    return TGL_OK;
}

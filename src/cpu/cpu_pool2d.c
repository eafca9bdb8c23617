/* CPU pooling: PyTorch's loops (aten's max_pool2d and avg_pool2d kernels), averages summed in
 * double; adaptive pooling as aten's adaptive kernels, averages summed in f32 as theirs. Coordinates in the padded frame are signed: a window starts at o * stride - pad. */
#include "cpu_ops.h"

#include <math.h>

/* The taps k in [*lo, *hi) of a window from `start` with step `dil` and `kernel` taps that lie
 * in [0, n): computed, not searched, so a huge kernel over a small input costs nothing. */
static void taps_inside(int64_t start, int64_t dil, int64_t kernel, int64_t n, int64_t *lo, int64_t *hi)
{
    *lo = start < 0 ? (-start + dil - 1) / dil : 0;
    *hi = start >= n ? 0 : (n - 1 - start) / dil + 1;
    *hi = *hi < kernel ? *hi : kernel;
}

/* Max over the window's taps inside the input (NaN wins, as PyTorch's); -inf when it has none.
 * *at gets the taken tap's index in the plane: the first tap's until one is taken (PyTorch's). */
static float max_at(const tgl_pool2d_desc *d, const float *plane, int64_t y0, int64_t x0, int64_t *at)
{
    const int64_t h = (int64_t)d->in_h, w = (int64_t)d->in_w, dh = (int64_t)d->dilation_h, dw = (int64_t)d->dilation_w;
    int64_t ky0, ky1, kx0, kx1;
    taps_inside(y0, dh, (int64_t)d->kernel_h, h, &ky0, &ky1);
    taps_inside(x0, dw, (int64_t)d->kernel_w, w, &kx0, &kx1);
    float m = -INFINITY;
    *at = (y0 + ky0 * dh) * w + x0 + kx0 * dw;
    for (int64_t ky = ky0; ky < ky1; ky++) {
        int64_t y = y0 + ky * dh;
        for (int64_t kx = kx0; kx < kx1; kx++) {
            int64_t x = x0 + kx * dw;
            float v = plane[y * w + x];
            if (v > m || isnan(v)) {
                m = v;
                *at = y * w + x;
            }
        }
    }
    return m;
}

/* The window's sum over the divisor: its size clipped to the padded input (count_include_pad)
 * or its taps inside the input; 0 when none lies inside. */
static float avg_at(const tgl_pool2d_desc *d, const float *plane, int64_t y0, int64_t x0)
{
    const int64_t h = (int64_t)d->in_h, w = (int64_t)d->in_w;
    int64_t y1 = y0 + (int64_t)d->kernel_h, x1 = x0 + (int64_t)d->kernel_w;
    y1 = y1 < h + (int64_t)d->pad_h ? y1 : h + (int64_t)d->pad_h;
    x1 = x1 < w + (int64_t)d->pad_w ? x1 : w + (int64_t)d->pad_w;
    double size = (double)(y1 - y0) * (double)(x1 - x0); /* (each factor below 2^41) */
    y0 = y0 > 0 ? y0 : 0;
    x0 = x0 > 0 ? x0 : 0;
    y1 = y1 < h ? y1 : h;
    x1 = x1 < w ? x1 : w;
    if (y0 >= y1 || x0 >= x1)
        return 0.0f;
    double sum = 0.0;
    for (int64_t y = y0; y < y1; y++)
        for (int64_t x = x0; x < x1; x++)
            sum += plane[y * w + x];
    return (float)(sum / (d->count_include_pad ? size : (double)((y1 - y0) * (x1 - x0))));
}

tgl_status tgl_cpu_pool2d(tgl_backend *b, const tgl__pool2d *p)
{
    (void)b;
    const tgl_pool2d_desc *d = &p->d;
    const float *in = tgl_cpu_at(p->in);
    float *out = tgl_cpu_at(p->out);
    int32_t *idx = tgl_cpu_at(p->indices);
    for (size_t c = 0; c < d->batch * d->channels; c++) {
        const float *plane = in + c * d->in_h * d->in_w;
        float *o = out + c * p->out_h * p->out_w;
        for (size_t oy = 0; oy < p->out_h; oy++)
            for (size_t ox = 0; ox < p->out_w; ox++) {
                int64_t y0 = (int64_t)(oy * d->stride_h) - (int64_t)d->pad_h;
                int64_t x0 = (int64_t)(ox * d->stride_w) - (int64_t)d->pad_w, at = 0;
                size_t e = oy * p->out_w + ox;
                o[e] = d->kind == TGL_POOL_MAX ? max_at(d, plane, y0, x0, &at) : avg_at(d, plane, y0, x0);
                if (idx)
                    idx[c * p->out_h * p->out_w + e] = (int32_t)at; /* below 2^31: checked */
            }
    }
    return TGL_OK;
}

/* PyTorch's adaptive window along one axis: [floor(o in / out), ceil((o + 1) in / out)), in exact
 * integer arithmetic (sides below 2^31, so the products do not wrap). */
static void adaptive_window(size_t o, size_t in, size_t out, size_t *lo, size_t *hi)
{
    *lo = (o / out) * in + ((o % out) * in) / out;
    *hi = 1 + ((o + 1) * in - 1) / out;
}

tgl_status tgl_cpu_adaptive_pool2d(tgl_backend *b, const tgl__pool2d *p)
{
    (void)b;
    const tgl_pool2d_desc *d = &p->d;
    const float *in = tgl_cpu_at(p->in);
    float *out = tgl_cpu_at(p->out);
    for (size_t c = 0; c < d->batch * d->channels; c++) {
        const float *plane = in + c * d->in_h * d->in_w;
        float *o = out + c * p->out_h * p->out_w;
        for (size_t oy = 0; oy < p->out_h; oy++) {
            size_t y0, y1, x0, x1;
            adaptive_window(oy, d->in_h, p->out_h, &y0, &y1);
            for (size_t ox = 0; ox < p->out_w; ox++) {
                adaptive_window(ox, d->in_w, p->out_w, &x0, &x1);
                float acc = d->kind == TGL_POOL_MAX ? -INFINITY : 0.0f;
                for (size_t y = y0; y < y1; y++)
                    for (size_t x = x0; x < x1; x++) {
                        float v = plane[y * d->in_w + x];
                        if (d->kind == TGL_POOL_AVG)
                            acc += v; /* in f32, row by row: PyTorch's sum */
                        else if (v > acc || isnan(v))
                            acc = v;
                    }
                if (d->kind == TGL_POOL_AVG)
                    acc = acc / (float)(y1 - y0) / (float)(x1 - x0);
                o[oy * p->out_w + ox] = acc;
            }
        }
    }
    return TGL_OK;
}

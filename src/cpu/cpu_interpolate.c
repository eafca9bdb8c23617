/* CPU tgl_interpolate: each output row's and column's taps (source indices and weights) computed
 * once per call by PyTorch's arithmetic (the f32 scale, the source index through double as its
 * `scale * (dst + 0.5) - 0.5` does, f32 weights), then each output pixel blended from them in
 * PyTorch's order: the taps along x summed for each tap row, those sums along y. */
#include "cpu_ops.h"

#include <math.h>
#include <stdlib.h>

/* Up to four source indices and their weights along one axis for one output index. */
typedef struct taps {
    int64_t idx[4];
    float w[4];
} taps;

/* A cubic's weights (Keys, a = -0.75) for the fraction t, PyTorch's formulas in f32. */
static void cubic_weights(float t, float *w)
{
    const float a = -0.75f;
    float x1 = t + 1.0f, x2 = 1.0f - t, x3 = x2 + 1.0f;
    w[0] = ((a * x1 - 5.0f * a) * x1 + 8.0f * a) * x1 - 4.0f * a;
    w[1] = ((a + 2.0f) * t - (a + 3.0f)) * t * t + 1.0f;
    w[2] = ((a + 2.0f) * x2 - (a + 3.0f)) * x2 * x2 + 1.0f;
    w[3] = ((a * x3 - 5.0f * a) * x3 + 8.0f * a) * x3 - 4.0f * a;
}

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

/* The taps of output index o along an axis of `in` inputs and `out` outputs, source scale s. */
static void axis_taps(tgl_interp_mode mode, int align, float s, size_t in, size_t out, size_t o, taps *t)
{
    int64_t last = (int64_t)in - 1;
    float r = align ? s * (float)o : (float)((double)s * ((double)o + 0.5) - 0.5); /* PyTorch's source index */
    switch (mode) {
    case TGL_INTERP_NEAREST:
        t->idx[0] = min64((int64_t)floorf(s * (float)o), last);
        t->w[0] = 1.0f;
        break;
    case TGL_INTERP_NEAREST_EXACT:
        t->idx[0] = min64((int64_t)floorf((r < 0.0f ? 0.0f : r) + 0.5f), last);
        t->w[0] = 1.0f;
        break;
    case TGL_INTERP_BILINEAR:
        if (in == out) { /* PyTorch copies an axis that keeps its size */
            t->idx[0] = t->idx[1] = (int64_t)o;
            t->w[0] = 1.0f;
            t->w[1] = 0.0f;
            break;
        }
        r = r < 0.0f ? 0.0f : r;
        t->idx[0] = min64((int64_t)floorf(r), last);
        t->idx[1] = t->idx[0] + (t->idx[0] < last ? 1 : 0);
        t->w[1] = fminf(fmaxf(r - (float)t->idx[0], 0.0f), 1.0f);
        t->w[0] = 1.0f - t->w[1];
        break;
    default: { /* bicubic: the index may be negative; the taps are clamped to the image */
        int64_t i = min64((int64_t)floorf(r), last);
        cubic_weights(fminf(fmaxf(r - (float)i, 0.0f), 1.0f), t->w);
        for (int j = 0; j < 4; j++) {
            int64_t k = i - 1 + j;
            t->idx[j] = k < 0 ? 0 : k > last ? last : k;
        }
        break;
    }
    }
}

tgl_status tgl_cpu_interpolate(tgl_backend *b, const tgl__interpolate *p)
{
    const tgl_interpolate_desc *d = &p->d;
    const float *x = tgl_cpu_at(p->in);
    float *y = tgl_cpu_at(p->out);
    int n = d->mode == TGL_INTERP_BICUBIC ? 4 : d->mode == TGL_INTERP_BILINEAR ? 2 : 1;
    taps *rows = malloc(d->out_h * sizeof *rows), *cols = malloc(d->out_w * sizeof *cols);
    if (!rows || !cols) {
        free(rows);
        free(cols);
        return tgl__fail(b, TGL_ERR_OUT_OF_MEMORY, "tgl_interpolate: no host memory for %zu + %zu taps", d->out_h,
                         d->out_w);
    }
    for (size_t o = 0; o < d->out_h; o++)
        axis_taps(d->mode, d->align_corners, p->scale_h, d->in_h, d->out_h, o, &rows[o]);
    for (size_t o = 0; o < d->out_w; o++)
        axis_taps(d->mode, d->align_corners, p->scale_w, d->in_w, d->out_w, o, &cols[o]);
    size_t planes = d->batch * d->channels;
    for (size_t pl = 0; pl < planes; pl++) {
        const float *src = x + pl * d->in_h * d->in_w;
        float *dst = y + pl * d->out_h * d->out_w;
        for (size_t oy = 0; oy < d->out_h; oy++)
            for (size_t ox = 0; ox < d->out_w; ox++) {
                const taps *ty = &rows[oy], *tx = &cols[ox];
                float acc = 0.0f;
                for (int j = 0; j < n; j++) {
                    const float *line = src + ty->idx[j] * (int64_t)d->in_w;
                    float t = line[tx->idx[0]] * tx->w[0];
                    for (int k = 1; k < n; k++)
                        t += line[tx->idx[k]] * tx->w[k];
                    acc = j ? acc + t * ty->w[j] : t * ty->w[j];
                }
                dst[oy * d->out_w + ox] = acc;
            }
    }
    free(rows);
    free(cols);
    return TGL_OK;
}

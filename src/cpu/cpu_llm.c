/* CPU tgl_rope and tgl_gather_rows. Rope angles are computed in double from the exact
 * frequency, so the oracle carries no f32 angle error. */
#include "cpu_ops.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

tgl_status tgl_cpu_rope(tgl_backend *b, tgl__view in, tgl__view out, size_t rows, size_t seq, size_t heads,
                        size_t head_dim, size_t pos_offset, float theta, tgl_rope_mode mode)
{
    (void)b;
    const float *x = tgl_cpu_at(in);
    float *y = tgl_cpu_at(out);
    size_t half = head_dim / 2;
    for (size_t r = 0; r < rows; r++) {
        double pos = (double)(pos_offset + r % seq);
        for (size_t h = 0; h < heads; h++) {
            size_t base = (r * heads + h) * head_dim;
            for (size_t i = 0; i < half; i++) {
                double angle = pos * pow((double)theta, -2.0 * (double)i / (double)head_dim);
                size_t i0 = mode == TGL_ROPE_NEOX ? i : 2 * i, i1 = mode == TGL_ROPE_NEOX ? i + half : 2 * i + 1;
                double a = x[base + i0], c = x[base + i1], cs = cos(angle), sn = sin(angle);
                y[base + i0] = (float)(a * cs - c * sn);
                y[base + i1] = (float)(a * sn + c * cs);
            }
        }
    }
    return TGL_OK;
}

/* tgl_rope_t: each angle the f32 product position * freq[i], as the GL kernel and the models
 * compute it; its cos and sin in double. In place works: a pair is read before it is written. */
tgl_status tgl_cpu_rope_t(tgl_backend *b, const tgl__rope_t *r)
{
    (void)b;
    const float *x = (const float *)tgl_cpu_at(r->x.view) + r->x.base;
    float *y = (float *)tgl_cpu_at(r->y.view) + r->y.base;
    const int32_t *pos = r->has_pos ? (const int32_t *)tgl_cpu_at(r->pos.view) + r->pos.base : NULL;
    const int64_t *xs = r->x.strides, *ys = r->y.strides, *ps = r->pos.strides;
    size_t rh = r->rotary_dim / 2;
    for (size_t bi = 0; bi < r->batch; bi++) {
        for (size_t s = 0; s < r->seq; s++) {
            float position = pos ? (float)pos[(int64_t)bi * ps[0] + (int64_t)s * ps[1]] : (float)(r->pos_offset + s);
            for (size_t h = 0; h < r->heads; h++) {
                const float *xr = x + (int64_t)bi * xs[0] + (int64_t)s * xs[1] + (int64_t)h * xs[2];
                float *yr = y + (int64_t)bi * ys[0] + (int64_t)s * ys[1] + (int64_t)h * ys[2];
                for (size_t i = 0; i < rh; i++) {
                    float angle = position * r->freq[i];
                    size_t i0 = r->mode == TGL_ROPE_NEOX ? i : 2 * i, i1 = r->mode == TGL_ROPE_NEOX ? i + rh : 2 * i + 1;
                    double a = xr[i0], c = xr[i1], cs = cos((double)angle), sn = sin((double)angle);
                    yr[i0] = (float)(a * cs - c * sn);
                    yr[i1] = (float)(a * sn + c * cs);
                }
                for (size_t d = r->rotary_dim; d < r->head_dim; d++)
                    yr[d] = xr[d];
            }
        }
    }
    return TGL_OK;
}

tgl_status tgl_cpu_gather_rows(tgl_backend *b, tgl__view table, tgl__view ids, tgl__view out, size_t table_rows,
                               size_t cols, size_t n_ids, size_t *bad_pos, int32_t *bad_id)
{
    (void)b;
    const float *t = tgl_cpu_at(table);
    const int32_t *id = tgl_cpu_at(ids);
    float *y = tgl_cpu_at(out);
    for (size_t k = 0; k < n_ids; k++) {
        if (id[k] < 0 || (size_t)id[k] >= table_rows) {
            *bad_pos = k;
            *bad_id = id[k];
            return TGL_ERR_INVALID_ARGUMENT;
        }
    }
    for (size_t k = 0; k < n_ids; k++)
        memcpy(y + k * cols, t + (size_t)id[k] * cols, cols * sizeof(float));
    return TGL_OK;
}

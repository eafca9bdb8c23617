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

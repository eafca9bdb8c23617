/* CPU tgl_fill, tgl_scale_add and the f16 casts. */
#include "cpu_half.h"
#include "cpu_ops.h"

tgl_status tgl_cpu_fill(tgl_backend *b, tgl__view out, float value, size_t n)
{
    (void)b;
    float *y = tgl_cpu_at(out);
    for (size_t i = 0; i < n; i++)
        y[i] = value;
    return TGL_OK;
}

tgl_status tgl_cpu_scale_add(tgl_backend *b, float alpha, tgl__view x, float beta, tgl__view y, size_t n)
{
    (void)b;
    const float *xp = tgl_cpu_at(x);
    float *yp = tgl_cpu_at(y);
    for (size_t i = 0; i < n; i++)
        yp[i] = (float)(beta == 0.0f ? (double)alpha * xp[i] : (double)alpha * xp[i] + (double)beta * yp[i]);
    return TGL_OK;
}

tgl_status tgl_cpu_cast(tgl_backend *b, int to_f16, tgl__view in, tgl__view out, size_t n)
{
    (void)b;
    const unsigned char *src = tgl_cpu_at(in);
    unsigned char *dst = tgl_cpu_at(out);
    for (size_t i = 0; i < n; i++) { /* memcpy: f16 data is only 2-byte aligned */
        if (to_f16) {
            uint32_t x;
            memcpy(&x, src + 4 * i, 4);
            uint16_t h = tgl_f32_to_f16_bits(x);
            memcpy(dst + 2 * i, &h, 2);
        } else {
            uint16_t h;
            memcpy(&h, src + 2 * i, 2);
            uint32_t x = tgl_f16_to_f32_bits(h);
            memcpy(dst + 4 * i, &x, 4);
        }
    }
    return TGL_OK;
}

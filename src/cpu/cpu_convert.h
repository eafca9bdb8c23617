/* Element conversions between the dtypes, as tgl_copy defines them (tensorgl.h): the CPU
 * backend's, and the reference the GL kernels (glsl/common/convert.glsl) are tested against.
 * f16 goes through cpu_half.h; the others use C's own conversions where C defines them as the
 * contract does ((float) of an int32 rounds to nearest even; a cast to int32 truncates). */
#ifndef TGL_CPU_CONVERT_H
#define TGL_CPU_CONVERT_H

#include "cpu_half.h"
#include "tensorgl.h"

#include <math.h>

static inline uint32_t tgl_cpu_f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float tgl_cpu_bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* f32 -> bf16, nearest even; every NaN becomes 0x7FC0 (PyTorch's c10::BFloat16 does the same). */
static inline uint16_t tgl_f32_to_bf16_bits(uint32_t x)
{
    if ((x & 0x7FFFFFFFu) > 0x7F800000u)
        return 0x7FC0u;
    return (uint16_t)((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16);
}

/* f32 -> i32 toward zero, saturating; NaN -> 0. */
static inline int32_t tgl_f32_to_i32(float f)
{
    if (isnan(f))
        return 0;
    if (f >= 2147483648.0f)
        return INT32_MAX;
    if (f <= -2147483648.0f)
        return INT32_MIN;
    return (int32_t)f;
}

/* Element `from` at src converted to `to` at dst (tgl_dtype_size bytes each; not block formats). */
static inline void tgl_cpu_convert(tgl_dtype to, tgl_dtype from, const uint8_t *src, uint8_t *dst)
{
    if (to == from && to != TGL_DTYPE_BOOL) {
        memmove(dst, src, tgl_dtype_size(to)); /* in place: dst may be src */
        return;
    }
    uint32_t f32 = 0; /* the value as f32 bits, for float destinations and float sources */
    int32_t i32 = 0;
    int truth = 0;
    switch (from) {
    case TGL_DTYPE_F32: memcpy(&f32, src, 4); break;
    case TGL_DTYPE_F16: {
        uint16_t h;
        memcpy(&h, src, 2);
        f32 = tgl_f16_to_f32_bits(h);
        break;
    }
    case TGL_DTYPE_BF16: {
        uint16_t h;
        memcpy(&h, src, 2);
        f32 = (uint32_t)h << 16;
        break;
    }
    case TGL_DTYPE_I32: memcpy(&i32, src, 4); f32 = tgl_cpu_f32_bits((float)i32); truth = i32 != 0; break;
    default: truth = src[0] != 0; i32 = truth; f32 = truth ? 0x3F800000u : 0u; break; /* bool */
    }
    if (from == TGL_DTYPE_F32 || from == TGL_DTYPE_F16 || from == TGL_DTYPE_BF16) {
        truth = (f32 & 0x7FFFFFFFu) != 0; /* NaN is true, -0 false */
        i32 = tgl_f32_to_i32(tgl_cpu_bits_f32(f32));
    }
    switch (to) {
    case TGL_DTYPE_F32: memcpy(dst, &f32, 4); break;
    case TGL_DTYPE_F16: {
        uint16_t h = tgl_f32_to_f16_bits(f32);
        memcpy(dst, &h, 2);
        break;
    }
    case TGL_DTYPE_BF16: {
        uint16_t h = tgl_f32_to_bf16_bits(f32);
        memcpy(dst, &h, 2);
        break;
    }
    case TGL_DTYPE_I32: memcpy(dst, &i32, 4); break;
    default: dst[0] = (uint8_t)truth; break; /* bool */
    }
}

/* One element of float or other dtype dt at p as an f32 value, and an f32 value stored as one
 * element of dt (by tgl_cpu_convert's rules). */
static inline float tgl_cpu_load_f32(tgl_dtype dt, const uint8_t *p)
{
    uint8_t f[4];
    float v;
    tgl_cpu_convert(TGL_DTYPE_F32, dt, p, f);
    memcpy(&v, f, 4);
    return v;
}

static inline void tgl_cpu_store_f32(tgl_dtype dt, float v, uint8_t *p)
{
    uint8_t f[4];
    memcpy(f, &v, 4);
    tgl_cpu_convert(dt, TGL_DTYPE_F32, f, p);
}

#endif

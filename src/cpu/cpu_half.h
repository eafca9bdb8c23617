/* IEEE binary16 <-> binary32 by bit manipulation: round to nearest even, with subnormals,
 * overflow to infinity, and quiet NaNs that keep their sign and top payload bits.
 * glsl/common/half.glsl gives the same bits without branches; tests pin this one to hand-worked
 * IEEE cases and the kernels to this one. */
#ifndef TGL_CPU_HALF_H
#define TGL_CPU_HALF_H

#include <stdint.h>
#include <string.h>

static inline uint16_t tgl_f32_to_f16_bits(uint32_t x)
{
    uint32_t sign = (x >> 16) & 0x8000u, exp = (x >> 23) & 0xFFu, mant = x & 0x7FFFFFu;
    if (exp == 0xFFu)
        return (uint16_t)(sign | 0x7C00u | (mant ? 0x200u | (mant >> 13) : 0u));
    int e = (int)exp - 127 + 15; /* the half's biased exponent */
    if (e >= 31)
        return (uint16_t)(sign | 0x7C00u);
    if (e <= 0) {
        if (e < -10)
            return (uint16_t)sign; /* below half the smallest subnormal */
        mant |= 0x800000u;
        uint32_t shift = (uint32_t)(14 - e), h = mant >> shift, rem = mant & ((1u << shift) - 1u);
        uint32_t halfway = 1u << (shift - 1u);
        if (rem > halfway || (rem == halfway && (h & 1u)))
            h++; /* a carry into the exponent gives the smallest normal: correct */
        return (uint16_t)(sign | h);
    }
    uint32_t h = sign | ((uint32_t)e << 10) | (mant >> 13), rem = mant & 0x1FFFu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u)))
        h++; /* a carry out of the largest finite gives infinity: correct */
    return (uint16_t)h;
}

static inline uint32_t tgl_f16_to_f32_bits(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1Fu, mant = h & 0x3FFu;
    if (exp == 0x1Fu)
        return sign | 0x7F800000u | (mant << 13);
    if (exp == 0) {
        if (!mant)
            return sign;
        float v = (float)mant * 5.9604644775390625e-8f; /* mant * 2^-24: exact */
        uint32_t bits;
        memcpy(&bits, &v, sizeof bits);
        return sign | bits;
    }
    return sign | ((exp + 112u) << 23) | (mant << 13);
}

#endif

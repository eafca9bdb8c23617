#ifndef TGL_CONVERT_GLSL
#define TGL_CONVERT_GLSL
// The element conversions of tgl_copy (tensorgl.h), on bit patterns held in uints, so that a
// device that flushes subnormal floats or folds NaN tests changes no result. Bit for bit the
// CPU backend's (src/cpu/cpu_convert.h; tests/ops/test_tensor_ewise.c checks every f16 and bf16
// pattern). f16 comes from common/half.glsl.
#include "common/half.glsl"

// f32 -> bf16: round to nearest even by adding just under half an ulp plus the kept lowest bit
// (a carry into the exponent is right, up to infinity); every NaN is 0x7FC0 (PyTorch's).
uint tgl_f32_to_bf16(uint x)
{
    uint r = (x + 0x7FFFu + ((x >> 16) & 1u)) >> 16;
    return (x & 0x7FFFFFFFu) > 0x7F800000u ? 0x7FC0u : r;
}

// f32 -> i32 toward zero, saturating, NaN -> 0. Only |x| < 2^31 goes through int(), which is
// exact there; the rest is decided on the bits.
uint tgl_f32_to_i32(uint x)
{
    uint a = x & 0x7FFFFFFFu;
    uint t = uint(int(uintBitsToFloat(a < 0x4F000000u ? x : 0u)));
    uint saturated = (x >> 31) != 0u ? 0x80000000u : 0x7FFFFFFFu;
    return a > 0x7F800000u ? 0u : (a >= 0x4F000000u ? saturated : t);
}

// i32 (two's complement bits) -> f32, round to nearest even on the bits: float(int)'s rounding
// is the implementation's in GLSL.
uint tgl_i32_to_f32(uint x)
{
    uint sign = x & 0x80000000u;
    uint a = sign != 0u ? 0u - x : x; // |x|; INT32_MIN stays 2^31
    if (a == 0u)
        return 0u;
    int msb = findMSB(a);
    uint drop = uint(max(msb - 23, 0)); // bits below the 24 a float keeps
    uint kept = a >> drop, rest = a - (kept << drop), half_ulp = (1u << drop) >> 1u;
    kept += drop > 0u && (rest > half_ulp || (rest == half_ulp && (kept & 1u) != 0u)) ? 1u : 0u;
    uint mant = msb <= 23 ? a << uint(max(23 - msb, 0)) : kept; // leading one at bit 23 (24 after a carry)
    return sign | ((uint(msb + 126) << 23) + mant);             // the leading one adds the last exponent step
}
bool tgl_f32_is_nan(uint f)
{
    return (f & 0x7FFFFFFFu) > 0x7F800000u;
}

// Bits of dtype dt (a tgl_dtype value: 0 f32, 1 f16, 2 bf16, 3 i32, 4 bool) as f32 bits: exact
// for the half types, nearest even for i32, 0 or 1 for bool. Kernels pass a constant dt, which
// the compiler folds.
uint tgl_to_f32(uint x, uint dt)
{
    if (dt == 0u)
        return x;
    if (dt == 1u)
        return tgl_f16_to_f32(x);
    if (dt == 2u)
        return x << 16;
    if (dt == 3u)
        return tgl_i32_to_f32(x);
    return x != 0u ? 0x3F800000u : 0u;
}

// tgl_copy's conversion of bits x from dtype `from` to dtype `to` (the result in the low bits).
uint tgl_convert(uint x, uint from, uint to)
{
    if (from == to && to != 4u)
        return x; // the bits as they are
    if (to == 4u) // NaN is true, -0 false
        return (from >= 3u ? x : tgl_to_f32(x, from) & 0x7FFFFFFFu) != 0u ? 1u : 0u;
    if (to == 3u)
        return from == 4u ? (x != 0u ? 1u : 0u) : tgl_f32_to_i32(tgl_to_f32(x, from));
    uint f = tgl_to_f32(x, from);
    return to == 0u ? f : to == 1u ? tgl_f32_to_f16(f) : tgl_f32_to_bf16(f);
}
#endif

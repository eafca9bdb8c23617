// IEEE binary16 <-> binary32 by bit manipulation (packHalf2x16's rounding and subnormal
// handling vary between drivers): round to nearest even, subnormals, overflow to infinity,
// quiet NaNs keeping sign and top payload bits. The results are src/cpu/cpu_half.h's, bit for
// bit (tests/ops/test_fill_cast.c), computed without branches: every case is computed and one
// is selected. llvmpipe runs both arms of a branch that differs between lanes anyway, and on
// the H100 the branching form, inlined 128 times in gemm_f16's stores, took 964 IF blocks of
// NV assembly and kept gemm_f16 4096^3 at 96% of sgemm (99% without branches).
uint tgl_f32_to_f16(uint x)
{
    uint sign = (x >> 16) & 0x8000u, a = x & 0x7FFFFFFFu;
    // Normal halves: rebias the exponent (127 - 15 = 112), then round to nearest even at bit 13
    // by adding just under half an ulp plus the kept lowest bit; a carry into the exponent is
    // the right result, up to infinity from 65520 on.
    uint normal = (a - 0x38000000u + 0x0FFFu + ((a >> 13) & 1u)) >> 13;
    // Subnormal halves (|x| < 2^-14): adding 0.5, whose ulp is 2^-24 (the subnormals' step),
    // makes the float addition round |x| to nearest even there; the bits above 0.5's count
    // the steps (2^10 of them is the smallest normal, also right).
    uint small = floatBitsToUint(uintBitsToFloat(a) + 0.5) - 0x3F000000u;
    uint nan = 0x7E00u | ((a >> 13) & 0x3FFu); // quiet, top payload bits kept
    uint h = a >= 0x47800000u ? 0x7C00u : (a < 0x38800000u ? small : normal); // 2^16: infinity
    return sign | (a > 0x7F800000u ? nan : h);
}

// Subnormal halves (and zeros), mant * 2^-24, as 2^-14 * (1 + mant / 1024) less 2^-14: an OR
// and an exact float subtraction instead of an int-to-float conversion, which GPUs run at a
// quarter of their float rate (the f16 and block-format weight loads convert one per element).
uint tgl_f16_to_f32(uint h)
{
    uint sign = (h & 0x8000u) << 16, e5 = (h >> 10) & 0x1Fu, bits = (h & 0x3FFu) << 13;
    uint normal = sign | ((e5 + 112u) << 23) | bits;
    uint special = sign | 0x7F800000u | bits; // inf, NaN
    uint small = sign | floatBitsToUint(uintBitsToFloat(0x38800000u | bits) - 6.103515625e-05);
    return e5 == 0x1Fu ? special : (e5 == 0u ? small : normal);
}

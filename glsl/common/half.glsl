// IEEE binary16 <-> binary32 by bit manipulation (packHalf2x16's rounding and subnormal
// handling vary between drivers): round to nearest even, subnormals, overflow to infinity,
// quiet NaNs keeping sign and top payload bits. Same algorithm as src/cpu/cpu_half.h.
uint tgl_f32_to_f16(uint x)
{
    uint sign = (x >> 16) & 0x8000u, e8 = (x >> 23) & 0xFFu, mant = x & 0x7FFFFFu;
    if (e8 == 0xFFu)
        return sign | 0x7C00u | (mant != 0u ? (0x200u | (mant >> 13)) : 0u);
    int e = int(e8) - 127 + 15;
    if (e >= 31)
        return sign | 0x7C00u;
    if (e <= 0) {
        if (e < -10)
            return sign;
        mant |= 0x800000u;
        uint shift = uint(14 - e);
        uint h = mant >> shift, rem = mant & ((1u << shift) - 1u), halfway = 1u << (shift - 1u);
        if (rem > halfway || (rem == halfway && (h & 1u) != 0u))
            h += 1u;
        return sign | h;
    }
    uint h = sign | (uint(e) << 10) | (mant >> 13), rem = mant & 0x1FFFu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u) != 0u))
        h += 1u;
    return h;
}

uint tgl_f16_to_f32(uint h)
{
    // Without branches: every case is computed and one is selected (llvmpipe runs both arms of
    // a branch that differs between lanes).
    uint sign = (h & 0x8000u) << 16, e5 = (h >> 10) & 0x1Fu, mant = h & 0x3FFu;
    uint normal = sign | ((e5 + 112u) << 23) | (mant << 13);
    uint special = sign | 0x7F800000u | (mant << 13);                         // inf, NaN
    uint small = sign | floatBitsToUint(float(mant) * 5.9604644775390625e-8); // 0, subnormal
    return e5 == 0x1Fu ? special : (e5 == 0u ? small : normal);
}

#version 430
// tgl_quantize (TO_BLOCKS) and tgl_dequantize between f32 and a block format (WFMT 3 q8_0,
// 4 q4_0; common/weights.glsl): one invocation per block of 32 elements, u_cols / 32 blocks a
// row. The f32 side has any strides (elements, two's complement); the block side starts at
// byte u_w_off, rows u_w_rs bytes apart. Quantizing takes the steps of ggml's reference
// quantizers (src/cpu/cpu_quant.c), bit for bit: divisions correctly rounded (div_rn), products
// rounded before their sums (TGL_PRECISE: no fused multiply-add). A block's bytes
// share their first or last word with the next block (18 and 34 are not multiples of 4): that
// half is written with atomics on its own bits, the whole words with stores.
#extension GL_GOOGLE_include_directive : enable
#include "common/locations.glsl"
#ifndef TGL_WG_SIZE
#define TGL_WG_SIZE 64
#endif
#ifndef WFMT
#define WFMT 4
#endif
#include "common/index.glsl"
#include "common/local_size.glsl"
#include "common/precise.glsl"

#ifdef TO_BLOCKS
layout(std430, binding = 0) buffer Blocks { uint wq[]; };
layout(std430, binding = 1) readonly buffer Floats { float fv[]; };
#else
layout(std430, binding = 0) readonly buffer Blocks { uint wq[]; };
layout(std430, binding = 1) writeonly buffer Floats { float fv[]; };
#endif
#include "common/weights.glsl"

layout(location = LOC_MVW_ROWS) uniform uint u_rows;
layout(location = LOC_MVW_COLS) uniform uint u_cols;
layout(location = LOC_MVW_W_OFF) uniform uint u_w_off;
layout(location = LOC_MVW_W_RS) uniform uint u_w_rs;
layout(location = LOC_MVW_X_OFF) uniform uint u_f_off;
layout(location = LOC_MVW_X_RS) uniform uint u_f_rs;
layout(location = LOC_MVW_X_CS) uniform uint u_f_cs;

#if WFMT == TGL_WFMT_Q8_0
#define BLOCK_BYTES 34u
#else
#define BLOCK_BYTES 18u
#endif
#define HALVES (BLOCK_BYTES / 2u)

#ifdef TO_BLOCKS
// a / b correctly rounded, for finite a >= 0 and b > 0 (GLSL lets a division be 2.5 ulp off,
// and ggml's quantizers divide twice per block): the quotient of the 24-bit significands by
// long division, 24 bits and a rounding bit, the remainder as the sticky bit, to nearest even.
// A subnormal operand or result (blocks whose values are all below ~1e-36, whose binary16
// scale is 0 whatever the quants) and an infinite or NaN one take the device's division.
float div_rn(float a, float b)
{
    uint ab = floatBitsToUint(a), bb = floatBitsToUint(b);
    int ea = int(ab >> 23) - 127, eb = int(bb >> 23) - 127;
    if (a == 0.0 || ea == -127 || eb == -127 || ea == 128 || eb == 128) // zeros, subnormals, inf, NaN
        return a / b;
    uint rem = (ab & 0x7FFFFFu) | 0x800000u, mb = (bb & 0x7FFFFFu) | 0x800000u;
    int e = ea - eb;
    if (rem < mb) { // the quotient's leading bit one place lower
        rem <<= 1;
        e -= 1;
    }
    uint q = 0u;
    for (uint i = 0u; i < 25u; i++) {
        q <<= 1;
        if (rem >= mb) {
            rem -= mb;
            q |= 1u;
        }
        rem <<= 1;
    }
    uint mant = q >> 1;
    if ((q & 1u) != 0u && (rem != 0u || (mant & 1u) != 0u))
        mant++;
    if (mant == 0x1000000u) {
        mant >>= 1;
        e += 1;
    }
    if (e + 127 <= 0 || e + 127 >= 255)
        return a / b;
    return uintBitsToFloat((uint(e + 127) << 23) | (mant & 0x7FFFFFu));
}

// C's roundf: half away from zero (GLSL's round() may go either way at a half). v - trunc(v)
// is exact.
float round_away(float v)
{
    float t = trunc(v);
    return abs(v - t) >= 0.5 ? t + sign(v) : t;
}

void store_block(uint at, uint h[HALVES])
{
    uint first = 0u;
    if ((at & 2u) != 0u) { // the first half shares its word with what comes before
        atomicAnd(wq[at >> 2u], 0x0000FFFFu);
        atomicOr(wq[at >> 2u], h[0] << 16);
        first = 1u;
    }
    uint word = (at + 2u * first) >> 2u;
    for (uint k = first; k + 1u < HALVES; k += 2u, word++)
        wq[word] = h[k] | (h[k + 1u] << 16);
    if (first == 0u) { // the last half shares its word with what follows
        atomicAnd(wq[word], 0xFFFF0000u);
        atomicOr(wq[word], h[HALVES - 1u]);
    }
}
#endif

void main()
{
    uint id = tgl_global_index(), per_row = u_cols / 32u;
    if (id >= u_rows * per_row)
        return;
    uint row = id / per_row, blk = id - row * per_row;
    uint at = u_w_off + row * u_w_rs + blk * BLOCK_BYTES;
    uint f0 = u_f_off + row * u_f_rs + blk * 32u * u_f_cs;
#ifdef TO_BLOCKS
    float v[32];
    for (uint i = 0u; i < 32u; i++)
        v[i] = fv[f0 + i * u_f_cs];
    float amax = 0.0, d;
#if WFMT == TGL_WFMT_Q8_0
    for (uint i = 0u; i < 32u; i++)
        amax = amax > abs(v[i]) ? amax : abs(v[i]);
    d = div_rn(amax, 127.0);
#else
    float m = 0.0;
    for (uint i = 0u; i < 32u; i++) {
        if (amax < abs(v[i])) {
            amax = abs(v[i]);
            m = v[i];
        }
    }
    d = m * -0.125; // m / -8, exactly
#endif
    float inv = d != 0.0 ? sign(d) * div_rn(1.0, abs(d)) : 0.0;
    uint h[HALVES];
    h[0] = tgl_f32_to_f16(floatBitsToUint(d));
#if WFMT == TGL_WFMT_Q8_0
    for (uint k = 0u; k < 16u; k++) {
        uint two = 0u;
        for (uint s = 0u; s < 2u; s++) {
            TGL_PRECISE float p = v[2u * k + s] * inv; // rounded on its own, as C does
            float r = round_away(p);
            int q = r > 127.0 ? 127 : (r < -128.0 ? -128 : (r >= -128.0 ? int(r) : 0)); // NaN: 0
            two |= (uint(q) & 0xFFu) << (8u * s);
        }
        h[1u + k] = two;
    }
#else
    for (uint k = 0u; k < 8u; k++) {
        uint two = 0u;
        for (uint s = 0u; s < 2u; s++) {
            uint i = 2u * k + s;
            TGL_PRECISE float lo = v[i] * inv + 8.5, hi = v[i + 16u] * inv + 8.5; // no fused multiply-add
            uint a = lo >= 15.0 ? 15u : (lo >= 0.0 ? uint(lo) : 0u);
            uint c = hi >= 15.0 ? 15u : (hi >= 0.0 ? uint(hi) : 0u);
            two |= (a | (c << 4)) << (8u * s);
        }
        h[1u + k] = two;
    }
#endif
    store_block(at, h);
#else
    // Each value q * d (q4_0: (q - 8) * d, the difference in integers) rounded as a product of
    // its own, as the CPU's (precise: not fused with what computed q).
    float d = tgl_w_scale(at);
#if WFMT == TGL_WFMT_Q8_0
    for (uint k = 0u; k < 8u; k++) {
        TGL_PRECISE vec4 q = tgl_q8_values(tgl_w_u32(at + 2u + 4u * k)) * d;
        for (uint i = 0u; i < 4u; i++)
            fv[f0 + (4u * k + i) * u_f_cs] = q[i];
    }
#else
    for (uint k = 0u; k < 4u; k++) {
        vec4 ql, qh;
        tgl_q4_values(tgl_w_u32(at + 2u + 4u * k), ql, qh);
        TGL_PRECISE vec4 lo = ql * d;
        TGL_PRECISE vec4 hi = qh * d;
        for (uint i = 0u; i < 4u; i++) {
            fv[f0 + (4u * k + i) * u_f_cs] = lo[i];
            fv[f0 + (16u + 4u * k + i) * u_f_cs] = hi[i];
        }
    }
#endif
#endif
}

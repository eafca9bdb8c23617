#ifndef TGL_WEIGHTS_GLSL
#define TGL_WEIGHTS_GLSL
// Reading the weight formats from 32-bit words, TGL_WQ(i) (by default a uint SSBO named wq,
// declared by the kernel before this file; a kernel may read them from a texture instead):
// f32, f16 and bf16 by element index, and ggml's blocks by byte offset. Blocks start on even
// bytes (18 and 34 are not multiples of 4), so their words are funnelled from two loads where a
// block starts half-way into one. WFMT: 0 f32, 1 f16, 2 bf16, 3 q8_0, 4 q4_0.
#include "common/half.glsl"
#ifndef TGL_WQ
#define TGL_WQ(i) wq[i]
#endif

// A binary16's bits (the low 16 bits of h; both conversions ignore the rest) as a float.
// TGL_WEIGHTS_UNPACK (gemm/matvec_w where the profile's weight_unpack says so; like the f16 GEMM's loads in common/gemm_io.glsl): the
// driver's unpackHalf2x16, one instruction on GPUs, exact for every normal half, while a driver may flush
// subnormal ones (|w| < 2^-14), a change far below a product's rounding. Otherwise the
// bit-exact conversion of common/half.glsl (gathers and tgl_dequantize equal the CPU's bits):
// on the H200 its selects and shifts made an f16 matvec of 4096 x 11008 run 51.8 us against
// 27.6 with unpackHalf2x16 (on llvmpipe unpackHalf2x16 was 6-10% slower).
float tgl_w_half(uint h)
{
#ifdef TGL_WEIGHTS_UNPACK
    return unpackHalf2x16(h).x;
#else
    return uintBitsToFloat(tgl_f16_to_f32(h));
#endif
}

#define TGL_WFMT_Q8_0 3
#define TGL_WFMT_Q4_0 4

// The 16 bits at an even byte offset.
uint tgl_w_u16(uint byte)
{
    uint w = TGL_WQ(byte >> 2u);
    return (byte & 2u) != 0u ? w >> 16 : w & 0xFFFFu;
}

// The 32 bits at an even byte offset.
uint tgl_w_u32(uint byte)
{
    uint a = byte >> 2u;
    if ((byte & 2u) == 0u)
        return TGL_WQ(a);
    return (TGL_WQ(a) >> 16) | (TGL_WQ(a + 1u) << 16);
}

// A block's scale d (its leading binary16) as a float.
float tgl_w_scale(uint block_byte)
{
    return tgl_w_half(tgl_w_u16(block_byte));
}

// Element e of an f32 (WFMT 0), f16 (1) or bf16 (2) weight.
float tgl_w_float(uint e, uint fmt)
{
    if (fmt == 0u)
        return uintBitsToFloat(TGL_WQ(e));
    uint h = (TGL_WQ(e >> 1) >> ((e & 1u) * 16u)) & 0xFFFFu;
    return fmt == 1u ? tgl_w_half(h) : uintBitsToFloat(h << 16);
}

// The words of a block at block_byte, read once: WORDS of them from the word holding its first
// byte (q4_0 5, q8_0 9: a block of 18 or 34 bytes starting 0 or 2 bytes into a word ends in the
// fifth or ninth). Then its scale and its k-th word of quants, funnelled where the block starts
// half-way into a word.
#define TGL_BLOCK_WORDS(fmt) ((fmt) == TGL_WFMT_Q8_0 ? 9u : 5u)
float tgl_block_scale(uint first_word, bool half_in)
{
    return tgl_w_half(half_in ? first_word >> 16 : first_word & 0xFFFFu);
}
uint tgl_block_quants(uint w_k, uint w_k1, bool half_in)
{
    return half_in ? w_k1 : (w_k >> 16) | (w_k1 << 16);
}
// Four f16 (fmt 1) or bf16 (2) elements from their two words.
vec4 tgl_w_half4(uvec2 p, uint fmt)
{
#ifdef TGL_WEIGHTS_UNPACK
    if (fmt == 1u)
        return vec4(unpackHalf2x16(p.x), unpackHalf2x16(p.y));
#endif
    uvec4 h = uvec4(p.x & 0xFFFFu, p.x >> 16, p.y & 0xFFFFu, p.y >> 16);
    if (fmt == 2u)
        return uintBitsToFloat(h << 16);
    return vec4(tgl_w_half(h.x), tgl_w_half(h.y), tgl_w_half(h.z), tgl_w_half(h.w));
}
// Elements e..e+3 of a float weight (e a multiple of 4).
vec4 tgl_w_float4(uint e, uint fmt)
{
    if (fmt == 0u)
        return uintBitsToFloat(uvec4(TGL_WQ(e), TGL_WQ(e + 1u), TGL_WQ(e + 2u), TGL_WQ(e + 3u)));
    return tgl_w_half4(uvec2(TGL_WQ(e >> 1), TGL_WQ((e >> 1) + 1u)), fmt);
}

// Small unsigned integers read as floats without a shift and a conversion each: the field
// w & (mask << b), its bits inside the mantissa (b + width <= 23), with the exponent of
// 2^(23 - b) is the float 2^(23 - b) + n exactly, so subtracting 2^(23 - b) + bias gives
// n - bias exactly, as the conversion would (q4_0, H200, 4096 x 11008, alternated runs:
// 23.5 / 23.5 -> 22.5 / 22.4 us).
vec4 tgl_w_fields(uvec4 w, uvec4 b, uint mask, float bias)
{
    return uintBitsToFloat((w & (uvec4(mask) << b)) | ((uvec4(150u) - b) << 23)) -
           (vec4(uvec4(1u) << (uvec4(23u) - b)) + bias);
}
// Quants 4 consecutive elements of a q8_0 word, as signed integers (a conversion each: the
// field trick above, on the bytes with their sign bit flipped, ran the H200's q8_0 products 5%
// slower).
vec4 tgl_q8_values(uint v)
{
    int s = int(v);
    return vec4(bitfieldExtract(s, 0, 8), bitfieldExtract(s, 8, 8), bitfieldExtract(s, 16, 8), bitfieldExtract(s, 24, 8));
}
// A q4_0 word: elements 4k..4k+3 (lo) and 16+4k..16+4k+3 (hi), less 8.
void tgl_q4_values(uint v, out vec4 lo, out vec4 hi)
{
    uint u = v >> 16; // the nibbles at bits 20..31 at 4..15
    lo = tgl_w_fields(uvec4(v, v, v, u), uvec4(0u, 8u, 16u, 8u), 15u, 8.0);
    hi = tgl_w_fields(uvec4(v, v, u, u), uvec4(4u, 12u, 4u, 12u), 15u, 8.0);
}

#endif

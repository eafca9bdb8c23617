#version 430
// The element-wise descriptor ops over out's index space, walked by its row-major linear index:
// COPY (out = input 0 converted from IN_DTYPE to OUT_DTYPE), COMPARE (out = input 0 op input 1,
// u_compare a tgl_compare_op, bool out) and WHERE (out = input 0 ? input 1 : input 2, inputs 1
// and 2 of out's dtype). Each operand is bound from the lowest element it reaches, so its
// offsets are small non-negative numbers even with negative strides; the strides are two's
// complement uints and their sums wrap to the right offset. Inputs repeat along stride-0 dims
// (broadcast). IN_DTYPE and OUT_DTYPE are tgl_dtype values (0 f32, 1 f16, 2 bf16, 3 i32,
// 4 bool; WHERE's condition is bool); everything is computed on bits (common/convert.glsl), so
// a device that flushes subnormals or folds NaN tests changes no result. Elements of 1 or 2
// bytes are packed in uints, element k of a word in bits 8 * size * k on.
// Plain: an invocation per element, linear index u_start + i. An out element below 4 bytes is
// written by atomicAnd then atomicOr on its word: invocations writing other elements of that
// word (any strides) keep each other's bits, and bytes of the word outside the tensor keep theirs.
// WORDS (an out below 4 bytes that is row-major dense, the host checked): an invocation per out
// word (u_start the dispatch's first), computing the elements the word holds and storing it
// whole; a word the tensor covers in part is merged with the bytes around it (no other
// invocation of the dispatch touches it; dispatches are ordered by barriers).
// LINEAR (every operand row-major dense, the host checked): offsets without coordinates
// (llvmpipe indexes the stride arrays lane by lane: a 16M f32 -> bf16 copy ran 3x slower
// through them).
#extension GL_GOOGLE_include_directive : enable
#include "common/locations.glsl"
#ifndef TGL_WG_SIZE
#define TGL_WG_SIZE 64
#endif
#include "common/index.glsl"
#include "common/convert.glsl"
#include "common/local_size.glsl"

// Standalone (the file as written, without the host's defines): an f32 copy.
#ifndef IN_DTYPE
#define IN_DTYPE 0
#endif
#ifndef OUT_DTYPE
#define OUT_DTYPE 0
#endif
#if defined(WHERE)
#define NIN 3
#elif defined(COMPARE)
#define NIN 2
#else
#define NIN 1
#endif
#if OUT_DTYPE == 0 || OUT_DTYPE == 3
#define OUT_BYTES 4
#elif OUT_DTYPE == 4
#define OUT_BYTES 1
#else
#define OUT_BYTES 2
#endif

layout(std430, binding = 0) readonly buffer In0 { uint x0[]; };
#if NIN > 1
layout(std430, binding = 1) readonly buffer In1 { uint x1[]; };
#endif
#if NIN > 2
layout(std430, binding = 2) readonly buffer In2 { uint x2[]; };
#endif
layout(std430, binding = 3) buffer Out { uint y[]; };
layout(location = LOC_TEW_N) uniform uint u_n;               // plain: elements of this dispatch; WORDS: of the box
layout(location = LOC_TEW_START) uniform uint u_start;       // plain: first linear index; WORDS: first word
layout(location = LOC_TEW_NDIM) uniform uint u_ndim;
layout(location = LOC_TEW_COMPARE) uniform uint u_compare;
layout(location = LOC_TEW_OUT_BASE) uniform uint u_out_base; // element (0, ..., 0) in each window, in elements
layout(location = LOC_TEW_BASE0) uniform uint u_base0;
layout(location = LOC_TEW_BASE1) uniform uint u_base1;
layout(location = LOC_TEW_BASE2) uniform uint u_base2;
layout(location = LOC_TEW_SHAPE) uniform uint u_shape[8];
layout(location = LOC_TEW_OUT_STRIDE) uniform uint u_out_stride[8];
layout(location = LOC_TEW_STRIDE0) uniform uint u_stride0[8];
#if NIN > 1
layout(location = LOC_TEW_STRIDE1) uniform uint u_stride1[8];
#endif
#if NIN > 2
layout(location = LOC_TEW_STRIDE2) uniform uint u_stride2[8];
#endif

// Element e of a packed array of 4-, 2- or 1-byte elements.
#define LOAD_4(arr, e) arr[e]
#define LOAD_2(arr, e) ((arr[(e) >> 1] >> (16u * ((e) & 1u))) & 0xFFFFu)
#define LOAD_1(arr, e) ((arr[(e) >> 2] >> (8u * ((e) & 3u))) & 0xFFu)
#if IN_DTYPE == 0 || IN_DTYPE == 3
#define LOAD_IN(arr, e) LOAD_4(arr, e)
#elif IN_DTYPE == 4
#define LOAD_IN(arr, e) LOAD_1(arr, e)
#else
#define LOAD_IN(arr, e) LOAD_2(arr, e)
#endif

// The operands' element offsets (in their windows) of linear index i: the inputs', then out's.
// The outermost coordinate needs no division.
void locate(uint i, out uint o0, out uint o1, out uint o2, out uint oy)
{
    o0 = u_base0 + i;
    o1 = u_base1 + i;
    o2 = u_base2 + i;
    oy = u_out_base + i;
#ifndef LINEAR
    uint rest = i;
    o0 = u_base0;
    o1 = u_base1;
    o2 = u_base2;
    oy = u_out_base;
    for (int k = int(u_ndim) - 1; k > 0; k--) {
        uint c = rest % u_shape[k];
        rest /= u_shape[k];
        o0 += c * u_stride0[k];
#if NIN > 1
        o1 += c * u_stride1[k];
#endif
#if NIN > 2
        o2 += c * u_stride2[k];
#endif
        oy += c * u_out_stride[k];
    }
    if (u_ndim > 0u) { // rest is the outermost coordinate
        o0 += rest * u_stride0[0];
#if NIN > 1
        o1 += rest * u_stride1[0];
#endif
#if NIN > 2
        o2 += rest * u_stride2[0];
#endif
        oy += rest * u_out_stride[0];
    }
#endif
}

// An ordered integer for f32 bits that are not NaN: -0 and +0 alike, subnormals kept.
int float_key(uint f)
{
    return (f & 0x80000000u) != 0u ? -int(f & 0x7FFFFFFFu) : int(f);
}

// The value of out's element at linear index i, in out's dtype (low bits).
uint value(uint i)
{
    uint o0, o1, o2, oy;
    locate(i, o0, o1, o2, oy);
#if defined(WHERE)
    return LOAD_1(x0, o0) != 0u ? tgl_convert(LOAD_IN(x1, o1), uint(IN_DTYPE), uint(OUT_DTYPE))
                                : tgl_convert(LOAD_IN(x2, o2), uint(IN_DTYPE), uint(OUT_DTYPE));
#elif defined(COMPARE)
    uint a = LOAD_IN(x0, o0), b = LOAD_IN(x1, o1);
#if IN_DTYPE == 3
    int ka = int(a), kb = int(b);
#elif IN_DTYPE == 4
    int ka = a != 0u ? 1 : 0, kb = b != 0u ? 1 : 0;
#else
    uint fa = tgl_to_f32(a, uint(IN_DTYPE)), fb = tgl_to_f32(b, uint(IN_DTYPE));
    if (tgl_f32_is_nan(fa) || tgl_f32_is_nan(fb))
        return u_compare == 1u ? 1u : 0u; // NaN: only ne holds
    int ka = float_key(fa), kb = float_key(fb);
#endif
    bool r = u_compare == 0u ? ka == kb
             : u_compare == 1u ? ka != kb
             : u_compare == 2u ? ka < kb
             : u_compare == 3u ? ka <= kb
             : u_compare == 4u ? ka > kb
                               : ka >= kb;
    return r ? 1u : 0u;
#else
    return tgl_convert(LOAD_IN(x0, o0), uint(IN_DTYPE), uint(OUT_DTYPE));
#endif
}

// out's element offset of linear index i (plain variant).
uint out_offset(uint i)
{
    uint o0, o1, o2, oy;
    locate(i, o0, o1, o2, oy);
    return oy;
}

void main()
{
#if OUT_BYTES < 4
    const uint per = uint(4 / OUT_BYTES), bits = uint(8 * OUT_BYTES), mask = (1u << bits) - 1u;
#endif
#ifdef WORDS
    uint w = u_start + tgl_global_index();
    if (w >= (u_out_base + u_n + per - 1u) / per)
        return;
    uint word = 0u, keep = 0xFFFFFFFFu;
    for (uint k = 0u; k < per; k++) {
        uint slot = w * per + k; // element of the out window
        if (slot < u_out_base || slot - u_out_base >= u_n)
            continue;
        word |= value(slot - u_out_base) << (bits * k);
        keep &= ~(mask << (bits * k));
    }
    y[w] = keep == 0u ? word : (y[w] & keep) | word;
#else
    uint i = tgl_global_index();
    if (i >= u_n)
        return;
    uint v = value(u_start + i), at = out_offset(u_start + i);
#if OUT_BYTES == 4
    y[at] = v;
#else
    uint w = at / per, shift = bits * (at % per);
    atomicAnd(y[w], ~(mask << shift));
    atomicOr(y[w], v << shift);
#endif
#endif
}

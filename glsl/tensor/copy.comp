#version 430
// tgl_copy: dst at index c = convert(src at index c) over dst's index space, walked by its
// row-major linear index. Each operand is bound from the lowest element it reaches, so its
// offsets are small non-negative numbers even with negative strides; the strides are two's
// complement uints and their sums wrap to the right offset. src repeats along stride-0 dims
// (broadcast). SRC_DTYPE and DST_DTYPE are tgl_dtype values (0 f32, 1 f16, 2 bf16, 3 i32,
// 4 bool); conversions are common/convert.glsl's, on bits. Elements of 1 or 2 bytes are packed
// in uints, element k of a word in bits 8 * size * k on.
// Plain: an invocation per element, linear index u_start + i. A dst element below 4 bytes is
// written by atomicAnd then atomicOr on its word: invocations writing other elements of that
// word (any strides) keep each other's bits, and bytes of the word outside the tensor keep theirs.
// WORDS (a dst below 4 bytes that is row-major dense, the host checked): an invocation per dst
// word (u_start the dispatch's first), converting the elements the word holds and storing it
// whole; a word the tensor covers in part is merged with the bytes around it (no other
// invocation of the dispatch touches it; dispatches are ordered by barriers).
#extension GL_GOOGLE_include_directive : enable
#include "common/locations.glsl"
#ifndef TGL_WG_SIZE
#define TGL_WG_SIZE 64
#endif
#include "common/index.glsl"
#include "common/convert.glsl"
#include "common/local_size.glsl"

#if SRC_DTYPE == 0 || SRC_DTYPE == 3
#define SRC_BYTES 4
#elif SRC_DTYPE == 4
#define SRC_BYTES 1
#else
#define SRC_BYTES 2
#endif
#if DST_DTYPE == 0 || DST_DTYPE == 3
#define DST_BYTES 4
#elif DST_DTYPE == 4
#define DST_BYTES 1
#else
#define DST_BYTES 2
#endif

layout(std430, binding = 0) readonly buffer Src { uint s[]; };
layout(std430, binding = 1) buffer Dst { uint d[]; };
layout(location = LOC_COPY_N) uniform uint u_n;               // plain: elements of this dispatch; WORDS: of the box
layout(location = LOC_COPY_START) uniform uint u_start;       // plain: first linear index; WORDS: first word
layout(location = LOC_COPY_NDIM) uniform uint u_ndim;
layout(location = LOC_COPY_SRC_BASE) uniform uint u_src_base; // element (0, ..., 0) in the windows, in elements
layout(location = LOC_COPY_DST_BASE) uniform uint u_dst_base;
layout(location = LOC_COPY_SHAPE) uniform uint u_shape[8];
layout(location = LOC_COPY_SRC_STRIDE) uniform uint u_src_stride[8];
layout(location = LOC_COPY_DST_STRIDE) uniform uint u_dst_stride[8];

uint load_src(uint e)
{
#if SRC_BYTES == 4
    return s[e];
#else
    const uint per = uint(4 / SRC_BYTES), bits = uint(8 * SRC_BYTES);
    return (s[e / per] >> (bits * (e % per))) & ((1u << bits) - 1u);
#endif
}

// src's value as f32 bits (float and bool sources; i32 rounds to nearest even)
uint src_f32(uint x)
{
#if SRC_DTYPE == 0
    return x;
#elif SRC_DTYPE == 1
    return tgl_f16_to_f32(x);
#elif SRC_DTYPE == 2
    return x << 16;
#elif SRC_DTYPE == 3
    return tgl_i32_to_f32(x);
#else
    return x != 0u ? 0x3F800000u : 0u;
#endif
}

uint convert(uint x)
{
#if SRC_DTYPE == DST_DTYPE && DST_DTYPE != 4
    return x; // the bits as they are
#elif DST_DTYPE == 4
#if SRC_DTYPE == 3 || SRC_DTYPE == 4
    return x != 0u ? 1u : 0u;
#else
    return (src_f32(x) & 0x7FFFFFFFu) != 0u ? 1u : 0u; // NaN is true, -0 false
#endif
#elif DST_DTYPE == 3
#if SRC_DTYPE == 4
    return x != 0u ? 1u : 0u;
#else
    return tgl_f32_to_i32(src_f32(x));
#endif
#elif DST_DTYPE == 0
    return src_f32(x);
#elif DST_DTYPE == 1
    return tgl_f32_to_f16(src_f32(x));
#else
    return tgl_f32_to_bf16(src_f32(x));
#endif
}

// The two operands' element offsets (in their windows) of linear index i. The outermost
// coordinate needs no division. LINEAR (both operands row-major dense, the host checked): no
// coordinates at all (llvmpipe indexes the stride arrays lane by lane: a 16M f32 -> bf16 cast
// ran 3x slower through them).
void locate(uint i, out uint so, out uint dso)
{
#ifdef LINEAR
    so = u_src_base + i;
    dso = u_dst_base + i;
    return;
#endif
    uint rest = i;
    so = u_src_base;
    dso = u_dst_base;
    for (int k = int(u_ndim) - 1; k > 0; k--) {
        uint c = rest % u_shape[k];
        rest /= u_shape[k];
        so += c * u_src_stride[k];
        dso += c * u_dst_stride[k];
    }
    if (u_ndim > 0u) {
        so += rest * u_src_stride[0];
        dso += rest * u_dst_stride[0];
    }
}

void main()
{
#if DST_BYTES < 4
    const uint per = uint(4 / DST_BYTES), bits = uint(8 * DST_BYTES), mask = (1u << bits) - 1u;
#endif
#ifdef WORDS
    uint w = u_start + tgl_global_index();
    if (w >= (u_dst_base + u_n + per - 1u) / per)
        return;
    uint word = 0u, keep = 0xFFFFFFFFu;
    for (uint k = 0u; k < per; k++) {
        uint slot = w * per + k; // element of the dst window
        if (slot < u_dst_base || slot - u_dst_base >= u_n)
            continue;
        uint so, dso;
        locate(slot - u_dst_base, so, dso);
        word |= convert(load_src(so)) << (bits * k);
        keep &= ~(mask << (bits * k));
    }
    d[w] = keep == 0u ? word : (d[w] & keep) | word;
#else
    uint i = tgl_global_index();
    if (i >= u_n)
        return;
    uint so, dso;
    locate(u_start + i, so, dso);
    uint v = convert(load_src(so));
#if DST_BYTES == 4
    d[dso] = v;
#else
    uint w = dso / per, at = bits * (dso % per);
    atomicAnd(d[w], ~(mask << at));
    atomicOr(d[w], v << at);
#endif
#endif
}

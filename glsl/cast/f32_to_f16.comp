#version 430
// f32 -> f16. Halves are packed two per uint (element 2k in the low bits). Invocation w owns
// word w of the output window; a word the range covers only in part is read, merged and
// written back, so the neighbouring half outside the range keeps its value (no other
// invocation touches that word). Data moves as uint bits so NaN payloads survive.
#extension GL_GOOGLE_include_directive : enable
#include "common/locations.glsl"
#include "common/unroll.glsl"
#ifndef TGL_WG_SIZE
#define TGL_WG_SIZE 64
#endif
#include "common/index.glsl"
#include "common/sweep.glsl"
#include "common/half.glsl"

#include "common/local_size.glsl"
#ifdef TGL_VEC4
// TGL_VEC4: invocation w converts floats 4w..4w+3 of the window (one uvec4 load of their
// bits) into output uvec2 w (two words, four halves). The host runs it where both windows
// start 16-byte aligned, over whole groups of eight; the plain variant takes the elements
// before and after, whose words it does not share (the split falls on a multiple of 8 halves).
layout(std430, binding = 0) readonly buffer Src { uvec4 x[]; };
layout(std430, binding = 1) writeonly buffer Dst { uvec2 h[]; };
layout(location = LOC_CAST_N) uniform uint u_n;      // groups of four
layout(location = LOC_CAST_IN_OFF) uniform uint u_x_off;  // in uvec4s
layout(location = LOC_CAST_OUT_OFF) uniform uint u_h_off;  // in uvec2s

uint pack_two(uint lo, uint hi)
{
    return tgl_f32_to_f16(lo) | (tgl_f32_to_f16(hi) << 16);
}

void main()
{
    uint w = tgl_global_index();
    if (w >= u_n)
        return;
    w = tgl_sweep(w, u_n);
    uvec4 a = x[u_x_off + w];
    h[u_h_off + w] = uvec2(pack_two(a.x, a.y), pack_two(a.z, a.w));
}
#else
layout(std430, binding = 0) readonly buffer Src { uint x[]; };
layout(std430, binding = 1) buffer Dst { uint h[]; };
layout(location = LOC_CAST_N) uniform uint u_n;      // elements
layout(location = LOC_CAST_IN_OFF) uniform uint u_x_off;  // in floats
layout(location = LOC_CAST_OUT_OFF) uniform uint u_h_off;  // in halves (may be odd)

void main()
{
    uint w = tgl_global_index();
    uint words = (u_h_off + u_n + 1u) / 2u;
    if (w >= words)
        return;
    w = tgl_sweep(w, words);
    uint word = 0u, keep = 0xFFFFFFFFu;
    TGL_UNROLL for (uint c = 0u; c < 2u; c++) {
        uint slot = 2u * w + c; // half index within the window
        if (slot < u_h_off || slot >= u_h_off + u_n)
            continue;
        word |= tgl_f32_to_f16(x[u_x_off + slot - u_h_off]) << (16u * c);
        keep &= ~(0xFFFFu << (16u * c));
    }
    h[w] = keep == 0u ? word : (h[w] & keep) | word;
}
#endif

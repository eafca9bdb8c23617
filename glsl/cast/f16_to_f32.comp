#version 430
// f16 -> f32, one output element per invocation; halves are packed two per uint (element 2k
// in the low bits) and the window may start at an odd half. Results are written as uint bits
// so NaN payloads survive.
// TGL_WIDE (llvmpipe, desktop GL): each invocation converts eight halves read as two RGBA16UI
// texels (llvmpipe gathers texels, while each SSBO load is a loop over its lanes) and stores the
// eight floats as one dvec4 (common/wide_store.glsl: only bits move); the host runs it over whole
// workgroups with no bounds test, the windows aligned (u_h_off in texels, u_y_off in dvec4s), and
// sends what is left to the plain variant.
#extension GL_GOOGLE_include_directive : enable
#include "common/locations.glsl"
#ifndef TGL_WG_SIZE
#define TGL_WG_SIZE 64
#endif
#include "common/index.glsl"
#include "common/sweep.glsl"
#include "common/half.glsl"
#include "common/wide_store.glsl"

#include "common/local_size.glsl"
#ifdef TGL_WIDE
layout(location = LOC_TEXTURE0, binding = 0) uniform highp usamplerBuffer h_tex;
layout(std430, binding = 1) writeonly buffer Dst { dvec4 y2[]; };
layout(location = LOC_CAST_IN_OFF) uniform uint u_h_off;  // in texels of four halves
layout(location = LOC_CAST_OUT_OFF) uniform uint u_y_off;  // in dvec4s

uvec4 convert4(uvec4 h)
{
    return uvec4(tgl_f16_to_f32(h.x), tgl_f16_to_f32(h.y), tgl_f16_to_f32(h.z), tgl_f16_to_f32(h.w));
}

void main()
{
    uint i = tgl_sweep(tgl_global_index(), tgl_grid_invocations()); // an exact grid
    uint t = u_h_off + 2u * i;
    y2[u_y_off + i] = tgl_wide_bits(convert4(texelFetch(h_tex, int(t))), convert4(texelFetch(h_tex, int(t + 1u))));
}
#elif defined(TGL_VEC4)
// TGL_VEC4: invocation w converts halves 4w..4w+3 of the window (one uvec2 load) into floats
// 4w..4w+3 (one uvec4 store of their bits); the host runs it where both windows start 16-byte
// aligned, over whole groups of eight, and sends the elements around them to the plain variant.
layout(std430, binding = 0) readonly buffer Src { uvec2 h2[]; };
layout(std430, binding = 1) writeonly buffer Dst { uvec4 y4[]; };
layout(location = LOC_CAST_N) uniform uint u_n;      // groups of four
layout(location = LOC_CAST_IN_OFF) uniform uint u_h_off;  // in uvec2s
layout(location = LOC_CAST_OUT_OFF) uniform uint u_y_off;  // in uvec4s

uvec2 convert2(uint word)
{
    return uvec2(tgl_f16_to_f32(word & 0xFFFFu), tgl_f16_to_f32(word >> 16));
}

void main()
{
    uint w = tgl_global_index();
    if (w >= u_n)
        return;
    w = tgl_sweep(w, u_n);
    uvec2 v = h2[u_h_off + w];
    y4[u_y_off + w] = uvec4(convert2(v.x), convert2(v.y));
}
#else
layout(std430, binding = 0) readonly buffer Src { uint h[]; };
layout(std430, binding = 1) writeonly buffer Dst { uint y[]; };
layout(location = LOC_CAST_N) uniform uint u_n;
layout(location = LOC_CAST_IN_OFF) uniform uint u_h_off;  // in halves (may be odd)
layout(location = LOC_CAST_OUT_OFF) uniform uint u_y_off;  // in floats

void main()
{
    uint i = tgl_global_index();
    if (i >= u_n)
        return;
    i = tgl_sweep(i, u_n);
    uint slot = u_h_off + i;
    uint half_bits = (h[slot / 2u] >> (16u * (slot % 2u))) & 0xFFFFu;
    y[u_y_off + i] = tgl_f16_to_f32(half_bits);
}
#endif

#version 430
// f16 -> f32, one output element per invocation; halves are packed two per uint (element 2k
// in the low bits) and the window may start at an odd half. Results are written as uint bits
// so NaN payloads survive.
#extension GL_GOOGLE_include_directive : enable
#ifndef TGL_WG_SIZE
#define TGL_WG_SIZE 64
#endif
#include "common/index.glsl"
#include "common/half.glsl"

#include "common/local_size.glsl"
layout(std430, binding = 0) readonly buffer Src { uint h[]; };
layout(std430, binding = 1) writeonly buffer Dst { uint y[]; };
layout(location = 0) uniform uint u_n;
layout(location = 1) uniform uint u_h_off;  // in halves (may be odd)
layout(location = 2) uniform uint u_y_off;  // in floats

void main()
{
    uint i = tgl_global_index();
    if (i >= u_n)
        return;
    uint slot = u_h_off + i;
    uint half_bits = (h[slot / 2u] >> (16u * (slot % 2u))) & 0xFFFFu;
    y[u_y_off + i] = tgl_f16_to_f32(half_bits);
}

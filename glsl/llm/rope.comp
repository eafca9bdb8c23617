#version 430
// Rotary position embedding on rows of [heads, head_dim]: one invocation per rotated pair.
// Row r is token s = (u_row0 + r) % u_seq of the call, at position pos_offset + s. Pair i's
// angle is phase[i] + s * inv_freq[i]: the host computes inv_freq and phase[i] =
// (pos_offset * inv_freq) mod 2 pi in double, so a deep position costs no accuracy and the f32
// error grows only with s. The angle is reduced mod 2 pi with a three-part constant
// (Cody-Waite) before sin/cos, whose accuracy drivers only promise near [-pi, pi].
#extension GL_GOOGLE_include_directive : enable
#ifndef TGL_WG_SIZE
#define TGL_WG_SIZE 64
#endif
#include "common/index.glsl"
#include "common/reduce.glsl"

#include "common/local_size.glsl"
layout(std430, binding = 0) readonly buffer Src { float x[]; };
layout(std430, binding = 1) writeonly buffer Dst { float y[]; };
layout(std430, binding = 2) readonly buffer Freq { float freq[]; }; // inv_freq[half], phase[half]
layout(location = 0) uniform uint u_pairs;      // rows * heads * head_dim / 2 in this dispatch
layout(location = 1) uniform uint u_x_off;
layout(location = 2) uniform uint u_y_off;
layout(location = 3) uniform uint u_head_dim;
layout(location = 4) uniform uint u_heads;
layout(location = 5) uniform uint u_seq;
layout(location = 6) uniform uint u_row0;       // the first row's index in the call

// 2 pi = C1 + C2 + C3 (to 7e-15); C1 has 8 significant bits and C2 12, so k * C1 and k * C2
// are exact for k < 2^12..2^16, i.e. angles up to ~2.5e4; beyond that the reduction's error
// stays below the rounding the f32 angle already carries (|angle| * 2^-24).
const float TWO_PI_C1 = 6.28125;
const float TWO_PI_C2 = 1.9350051879882812e-3;
const float TWO_PI_C3 = 3.019916050561733e-7;

float reduce_angle(float a)
{
    float k = floor(a * 0.15915494309189535 + 0.5);
    TGL_PRECISE float r = a - k * TWO_PI_C1;
    r = r - k * TWO_PI_C2;
    r = r - k * TWO_PI_C3;
    return r;
}

void main()
{
    uint p = tgl_global_index();
    if (p >= u_pairs)
        return;
    uint half_dim = u_head_dim / 2u;
    uint i = p % half_dim;
    uint vec = p / half_dim;              // (row, head) index
    uint row = vec / u_heads;
    uint base = vec * u_head_dim;
#ifdef INTERLEAVED
    uint i0 = 2u * i, i1 = 2u * i + 1u;
#else
    uint i0 = i, i1 = i + half_dim;
#endif
    float tok = float((u_row0 + row) % u_seq);
    float angle = reduce_angle(freq[half_dim + i] + tok * freq[i]);
    float c = cos(angle), s = sin(angle);
    float a = x[u_x_off + base + i0], b = x[u_x_off + base + i1];
    y[u_y_off + base + i0] = a * c - b * s;
    y[u_y_off + base + i1] = a * s + b * c;
}

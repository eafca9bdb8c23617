#version 430
// Rotary position embedding on rows of [heads, head_dim]: one invocation per rotated pair.
// Row r is token s = (u_row0 + r) % u_seq of the call, at position pos_offset + s. Pair i's
// angle is phase[i] + s * inv_freq[i]: the host computes inv_freq and phase[i] =
// (pos_offset * inv_freq) mod 2 pi in double, so a deep position costs no accuracy and the f32
// error grows only with s. The angle is reduced mod 2 pi before sin/cos (common/angle.glsl).
// HEAD_LOOP (for llvmpipe, with TGL_TEX): one invocation per (row, pair index i), rotating pair
// i of every head of the row with one sin/cos, and x read through a buffer texture. llvmpipe
// divides lane by lane and evaluates sin/cos as polynomials, both paid per invocation, and
// gathers texels where each SSBO load is a loop over its lanes: rope of [2048, 32, 128] there
// went from 38 to 27 ms. With TGL_VEC4 (head_dim a multiple of 8, x and y 16-byte aligned) an
// invocation takes four neighbouring pair indices, reading and writing vec4s: 5.0-6.4 ms.
#extension GL_GOOGLE_include_directive : enable
#include "common/locations.glsl"
#ifndef TGL_WG_SIZE
#define TGL_WG_SIZE 64
#endif
#include "common/index.glsl"
#include "common/reduce.glsl"

#include "common/texel.glsl"
#include "common/angle.glsl"

#include "common/local_size.glsl"
#ifdef TGL_TEX
layout(location = LOC_TEXTURE0, binding = 0) uniform highp samplerBuffer x_tex;
#define X_AT(i) TGL_READ(x_tex, i)
#else
layout(std430, binding = 0) readonly buffer Src { float x[]; };
#define X_AT(i) x[i]
#endif
#ifdef TGL_VEC4
layout(std430, binding = 1) writeonly buffer Dst { vec4 y4[]; };
#else
layout(std430, binding = 1) writeonly buffer Dst { float y[]; };
#endif
layout(std430, binding = 2) readonly buffer Freq { float freq[]; }; // inv_freq[half], phase[half]
layout(location = LOC_ROPE_PAIRS) uniform uint u_pairs;      // rows * heads * head_dim / 2 in this dispatch
                                                // (HEAD_LOOP: rows * head_dim / 2; with
                                                // TGL_VEC4 a quarter of that)
layout(location = LOC_ROPE_X_OFF) uniform uint u_x_off;
layout(location = LOC_ROPE_Y_OFF) uniform uint u_y_off;
layout(location = LOC_ROPE_HEAD_DIM) uniform uint u_head_dim;
layout(location = LOC_ROPE_HEADS) uniform uint u_heads;
layout(location = LOC_ROPE_SEQ) uniform uint u_seq;
layout(location = LOC_ROPE_ROW0) uniform uint u_row0;       // the first row's index in the call

#ifdef TGL_VEC4
void main()
{
    uint p = tgl_global_index();
    if (p >= u_pairs)
        return;
    uint half_dim = u_head_dim / 2u, quads = half_dim / 4u; // vec4s of pair indices per head
    uint j = p % quads, row = p / quads, i = 4u * j;
    float tok = float((u_row0 + row) % u_seq);
    vec4 inv_freq = vec4(freq[i], freq[i + 1u], freq[i + 2u], freq[i + 3u]);
    vec4 phase = vec4(freq[half_dim + i], freq[half_dim + i + 1u], freq[half_dim + i + 2u], freq[half_dim + i + 3u]);
    vec4 angle = tgl_reduce_angle(phase + tok * inv_freq);
    vec4 c = cos(angle), s = sin(angle);
    uint step = u_head_dim / 4u, xb = (u_x_off + row * u_heads * u_head_dim) / 4u;
    uint yb = (u_y_off + row * u_heads * u_head_dim) / 4u;
    for (uint h = 0u; h < u_heads; h++, xb += step, yb += step) {
#ifdef INTERLEAVED
        // pairs i..i+3 are the eight floats from 2i on: (lo.x, lo.y), (lo.z, lo.w), (hi.x, hi.y), ...
        vec4 lo = TGL_READ(x_tex, xb + 2u * j), hi = TGL_READ(x_tex, xb + 2u * j + 1u);
        vec4 a = vec4(lo.xz, hi.xz), b = vec4(lo.yw, hi.yw);
        vec4 ra = a * c - b * s, rb = a * s + b * c;
        y4[yb + 2u * j] = vec4(ra.x, rb.x, ra.y, rb.y);
        y4[yb + 2u * j + 1u] = vec4(ra.z, rb.z, ra.w, rb.w);
#else
        vec4 a = TGL_READ(x_tex, xb + j), b = TGL_READ(x_tex, xb + quads + j);
        y4[yb + j] = a * c - b * s;
        y4[yb + quads + j] = a * s + b * c;
#endif
    }
}
#else
void main()
{
    uint p = tgl_global_index();
    if (p >= u_pairs)
        return;
    uint half_dim = u_head_dim / 2u;
    uint i = p % half_dim;
#ifdef INTERLEAVED
    uint i0 = 2u * i, i1 = 2u * i + 1u;
#else
    uint i0 = i, i1 = i + half_dim;
#endif
#ifdef HEAD_LOOP
    uint row = p / half_dim;
    uint base = row * u_heads * u_head_dim;
#else
    uint vec = p / half_dim; // (row, head) index
    uint row = vec / u_heads;
    uint base = vec * u_head_dim;
#endif
    float tok = float((u_row0 + row) % u_seq);
    float angle = tgl_reduce_angle(freq[half_dim + i] + tok * freq[i]);
    float c = cos(angle), s = sin(angle);
#ifdef HEAD_LOOP
    for (uint h = 0u; h < u_heads; h++, base += u_head_dim) {
#endif
        float a = X_AT(u_x_off + base + i0), b = X_AT(u_x_off + base + i1);
        y[u_y_off + base + i0] = a * c - b * s;
        y[u_y_off + base + i1] = a * s + b * c;
#ifdef HEAD_LOOP
    }
#endif
}
#endif

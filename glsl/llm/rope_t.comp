#version 430
// tgl_rope_t: rotary position embedding over strided [batch, seq, heads, head_dim] with
// per-token positions, partial rotation and host-scaled frequencies. One invocation per
// (batch, token, head, pair slot j < head_dim / 2): slot j < rotary_dim / 2 rotates its pair
// ((j, j + rotary_dim / 2), or (2j, 2j + 1) with INTERLEAVED); a later slot copies dims 2j and
// 2j + 1, which lie past rotary_dim. The angle is the f32 product position * freq[j], as the
// models compute it (precise: no fused operation), reduced mod 2 pi (common/angle.glsl).
// Strides come as two's complement uints: their wrapping sums from an operand's offset (the
// window holds every element reached) give each element's index. POSITIONS: positions from an
// int buffer; else token s of the dispatch sits at u_pos_base + s.
#extension GL_GOOGLE_include_directive : enable
#include "common/locations.glsl"
#ifndef TGL_WG_SIZE
#define TGL_WG_SIZE 64
#endif
#include "common/index.glsl"
#include "common/angle.glsl"
#include "common/local_size.glsl"

layout(std430, binding = 0) readonly buffer Src { float x[]; };
layout(std430, binding = 1) writeonly buffer Dst { float y[]; };
layout(std430, binding = 2) readonly buffer Freq { float freq[]; };
#ifdef POSITIONS
layout(std430, binding = 3) readonly buffer Pos { int pos[]; };
#endif
layout(location = LOC_ROPE_T_ITEMS) uniform uint u_items;   // invocations of this dispatch
layout(location = LOC_ROPE_T_HALF) uniform uint u_half;     // head_dim / 2
layout(location = LOC_ROPE_T_RHALF) uniform uint u_rhalf;   // rotary_dim / 2
layout(location = LOC_ROPE_T_HEADS) uniform uint u_heads;
layout(location = LOC_ROPE_T_SEQ) uniform uint u_seq;       // tokens per batch entry in this dispatch
layout(location = LOC_ROPE_T_X_OFF) uniform uint u_x_off;   // element (b0, s0, 0, 0) in x's window
layout(location = LOC_ROPE_T_Y_OFF) uniform uint u_y_off;
layout(location = LOC_ROPE_T_POS_OFF) uniform uint u_pos_off;
layout(location = LOC_ROPE_T_POS_BASE) uniform uint u_pos_base;
layout(location = LOC_ROPE_T_STRIDES) uniform uint u_strides[8]; // x: batch, seq, head; y: the same; pos: batch, seq

void main()
{
    uint p = tgl_global_index();
    if (p >= u_items)
        return;
    uint j = p % u_half, t = p / u_half;
    uint h = t % u_heads, r = t / u_heads;
    uint s = r % u_seq, bi = r / u_seq;
    uint xb = u_x_off + bi * u_strides[0] + s * u_strides[1] + h * u_strides[2];
    uint yb = u_y_off + bi * u_strides[3] + s * u_strides[4] + h * u_strides[5];
    if (j >= u_rhalf) {
        y[yb + 2u * j] = x[xb + 2u * j];
        y[yb + 2u * j + 1u] = x[xb + 2u * j + 1u];
        return;
    }
#ifdef POSITIONS
    float position = float(pos[u_pos_off + bi * u_strides[6] + s * u_strides[7]]);
#else
    float position = float(u_pos_base + s);
#endif
    TGL_PRECISE float angle = position * freq[j];
    float a = tgl_reduce_angle(angle);
    float c = cos(a), sn = sin(a);
#ifdef INTERLEAVED
    uint i0 = 2u * j, i1 = 2u * j + 1u;
#else
    uint i0 = j, i1 = j + u_rhalf;
#endif
    float x0 = x[xb + i0], x1 = x[xb + i1];
    y[yb + i0] = x0 * c - x1 * sn;
    y[yb + i1] = x0 * sn + x1 * c;
}

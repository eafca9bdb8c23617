#version 430
// argmax / argmin of lines of a tensor seen as [outer, len, inner]: workgroup g takes line g.
// Each invocation scans its strided share in ascending order, then the group combines
// (value, index) pairs in a tree. NaN ranks above every number (ARG_MAX) or below (ARG_MIN),
// and among equals the smaller index wins, so the result is the first extreme element.
// ARG_CARRY (lines longer than the SSBO block limit, scanned piece by piece in order): indices
// are counted from u_j_base, and with u_carry the best (value, index) of the earlier pieces,
// held in best_v[] and y[], competes (and wins ties: its indices are smaller); the winner is
// written back to both.
#extension GL_GOOGLE_include_directive : enable
#ifndef TGL_WG_SIZE
#define TGL_WG_SIZE 64
#endif
#include "common/reduce.glsl"
#include "common/texel.glsl"

#include "common/local_size.glsl"
// TGL_TEX: the input through a buffer texture (common/texel.glsl), for llvmpipe.
#ifdef TGL_TEX
layout(location = 60, binding = 0) uniform highp samplerBuffer x_tex;
#define X_AT(i) TGL_READ(x_tex, i)
#else
layout(std430, binding = 0) readonly buffer Src { float x[]; };
#define X_AT(i) x[i]
#endif
#ifdef ARG_CARRY
layout(std430, binding = 1) buffer Dst { int y[]; };
layout(std430, binding = 2) buffer Best { float best_v[]; };
layout(location = 2) uniform uint u_j_base;
layout(location = 3) uniform uint u_carry;
layout(location = 6) uniform uint u_v_off;
#else
layout(std430, binding = 1) writeonly buffer Dst { int y[]; };
#endif
layout(location = 0) uniform uint u_len;
layout(location = 1) uniform uint u_inner;
layout(location = 4) uniform uint u_x_off;
layout(location = 5) uniform uint u_y_off;
layout(location = 7) uniform uint u_groups;

const uint NONE = 0xFFFFFFFFu;
shared float s_val[TGL_WG_SIZE];
shared uint s_idx[TGL_WG_SIZE];

// Whether (av, ai) should replace (bv, bi) as the best so far.
bool better(float av, uint ai, float bv, uint bi)
{
    if (ai == NONE)
        return false;
    if (bi == NONE)
        return true;
    bool an = isnan(av), bn = isnan(bv);
    if (an || bn)
        return an && (!bn || ai < bi);
    if (av != bv)
#ifdef ARG_MIN
        return av < bv;
#else
        return av > bv;
#endif
    return ai < bi;
}

void main()
{
    uint g = tgl_group_index();
    if (g >= u_groups)
        return;
    uint tid = gl_LocalInvocationIndex;
    uint o = g / u_inner, i = g % u_inner;
    uint base = u_x_off + o * u_len * u_inner + i;
    float bv = 0.0;
    uint bi = NONE;
    for (uint j = tid; j < u_len; j += uint(TGL_WG_SIZE)) {
        float v = X_AT(base + j * u_inner);
        if (better(v, j, bv, bi)) {
            bv = v;
            bi = j;
        }
    }
    s_val[tid] = bv;
    s_idx[tid] = bi;
    memoryBarrierShared();
    barrier();
    for (uint stride = uint(TGL_WG_SIZE) / 2u; stride > 0u; stride >>= 1) {
        if (tid < stride && better(s_val[tid + stride], s_idx[tid + stride], s_val[tid], s_idx[tid])) {
            s_val[tid] = s_val[tid + stride];
            s_idx[tid] = s_idx[tid + stride];
        }
        memoryBarrierShared();
        barrier();
    }
    if (tid == 0u) {
#ifdef ARG_CARRY
        float best = s_val[0];
        uint at = s_idx[0] == NONE ? NONE : s_idx[0] + u_j_base;
        if (u_carry != 0u && !better(best, at, best_v[u_v_off + g], uint(y[u_y_off + g]))) {
            best = best_v[u_v_off + g];
            at = uint(y[u_y_off + g]);
        }
        best_v[u_v_off + g] = best;
        y[u_y_off + g] = int(at);
#else
        y[u_y_off + g] = int(s_idx[0]);
#endif
    }
}

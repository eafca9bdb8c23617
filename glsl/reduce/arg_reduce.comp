#version 430
// argmax / argmin of lines of a tensor seen as [outer, len, inner]: workgroup g takes line g.
// Each invocation scans its strided share in ascending order, then the group combines
// (value, index) pairs in a tree. NaN ranks above every number (ARG_MAX) or below (ARG_MIN),
// and among equals the smaller index wins, so the result is the first extreme element.
// ARG_CARRY (lines longer than the SSBO block limit, scanned piece by piece in order): indices
// are counted from u_j_base, and with u_carry the best (value, index) of the earlier pieces,
// held in best_v[] and y[], competes (and wins ties: its indices are smaller); the winner is
// written back to both.
// TGL_VEC4 (llvmpipe): contiguous lines of whole vec4s, read a vec4 at a time.
#extension GL_GOOGLE_include_directive : enable
#include "common/locations.glsl"
#ifndef TGL_WG_SIZE
#define TGL_WG_SIZE 64
#endif
#include "common/reduce.glsl"
#include "common/texel.glsl"

#include "common/local_size.glsl"
#include "common/sweep.glsl"
// TGL_TEX: the input through a buffer texture (common/texel.glsl), for llvmpipe.
#ifdef TGL_TEX
TGL_TEXTURE(LOC_TEXTURE0, 0, x_tex);
#define X_AT(i) TGL_READ(x_tex, i)
#elif defined(TGL_VEC4)
layout(std430, binding = 0) readonly buffer Src { vec4 x[]; };
#define X_AT(i) x[i]
#else
layout(std430, binding = 0) readonly buffer Src { float x[]; };
#define X_AT(i) x[i]
#endif
#ifdef ARG_CARRY
layout(std430, binding = 1) buffer Dst { int y[]; };
layout(std430, binding = 2) buffer Best { float best_v[]; };
layout(location = LOC_RED_J_BASE) uniform uint u_j_base;
layout(location = LOC_RED_CARRY) uniform uint u_carry;
layout(location = LOC_RED_V_OFF) uniform uint u_v_off;
#else
layout(std430, binding = 1) writeonly buffer Dst { int y[]; };
#endif
layout(location = LOC_RED_LEN) uniform uint u_len;
layout(location = LOC_RED_INNER) uniform uint u_inner;
layout(location = LOC_RED_X_OFF) uniform uint u_x_off;
layout(location = LOC_RED_Y_OFF) uniform uint u_y_off;
layout(location = LOC_RED_GROUPS) uniform uint u_groups;

const uint NONE = 0xFFFFFFFFu;
shared float s_val[TGL_WG_SIZE];
shared uint s_idx[TGL_WG_SIZE];

// Whether (av, ai) should replace (bv, bi) as the best so far. Without branches (llvmpipe runs
// both arms of a branch that differs between lanes): every case is a select.
bool better(float av, uint ai, float bv, uint bi)
{
    bool an = isnan(av), bn = isnan(bv);
#ifdef ARG_MIN
    bool beats = av < bv;
#else
    bool beats = av > bv;
#endif
    bool wins = an ? (!bn || ai < bi) : (!bn && (beats || (av == bv && ai < bi)));
    return ai != NONE && (bi == NONE || wins);
}

void main()
{
    uint g = tgl_group_index();
    if (g >= u_groups)
        return;
    g = tgl_sweep(g, u_groups);
    uint tid = gl_LocalInvocationIndex;
    uint o = g / u_inner, i = g % u_inner;
    uint base = u_x_off + o * u_len * u_inner + i;
    float bv = 0.0;
    uint bi = NONE;
#ifdef TGL_VEC4
    // Contiguous lines of whole vec4s (inner 1, base a multiple of 4): the best of each
    // component, then of the four.
    vec4 cv = vec4(0.0);
    uvec4 ci = uvec4(NONE);
    for (uint j = tid; j < u_len / 4u; j += uint(TGL_WG_SIZE)) {
        vec4 v = X_AT(base / 4u + j);
        uvec4 at = uvec4(4u * j) + uvec4(0u, 1u, 2u, 3u);
        for (int c = 0; c < 4; c++)
            if (better(v[c], at[c], cv[c], ci[c])) {
                cv[c] = v[c];
                ci[c] = at[c];
            }
    }
    for (int c = 0; c < 4; c++)
        if (better(cv[c], ci[c], bv, bi)) {
            bv = cv[c];
            bi = ci[c];
        }
#else
    for (uint j = tid; j < u_len; j += uint(TGL_WG_SIZE)) {
        float v = X_AT(base + j * u_inner);
        if (better(v, j, bv, bi)) {
            bv = v;
            bi = j;
        }
    }
#endif
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

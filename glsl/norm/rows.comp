#version 430
// Row-wise ops, one workgroup per row of u_cols elements: SOFTMAX, LOG_SOFTMAX, RMSNORM or
// LAYERNORM (one is defined), with HAS_WEIGHT / HAS_BIAS for the optional per-column operands.
// Every pass reads the whole row before the last one writes it, so out may alias in.
#extension GL_GOOGLE_include_directive : enable
#ifndef TGL_WG_SIZE
#define TGL_WG_SIZE 64
#endif
#include "common/math.glsl"
#include "common/reduce.glsl"
#ifndef ROW_PER_INVOCATION
#include "common/group.glsl"
#endif
#include "common/index.glsl"
#include "common/texel.glsl"

#if !defined(SOFTMAX) && !defined(LOG_SOFTMAX) && !defined(LAYERNORM) && !defined(RMSNORM)
#define RMSNORM // no op chosen: only for standalone validation of this file
#endif

layout(local_size_x = TGL_WG_SIZE) in;
// TGL_TEX: the row read through a buffer texture (common/texel.glsl), for llvmpipe.
#ifdef TGL_TEX
layout(binding = 0) uniform highp samplerBuffer x_tex;
#define X_AT(i) TGL_READ(x_tex, i)
#else
layout(std430, binding = 0) readonly buffer Src { float x[]; };
#define X_AT(i) x[i]
#endif
layout(std430, binding = 1) writeonly buffer Dst { float y[]; };
#ifdef HAS_WEIGHT
layout(std430, binding = 2) readonly buffer Weight { float w[]; };
layout(location = 4) uniform uint u_w_off;
#endif
#ifdef HAS_BIAS
layout(std430, binding = 3) readonly buffer Bias { float bias[]; };
layout(location = 5) uniform uint u_b_off;
#endif
layout(location = 0) uniform uint u_cols;
layout(location = 1) uniform uint u_rows;
layout(location = 2) uniform uint u_x_off;
layout(location = 3) uniform uint u_y_off;
#if defined(RMSNORM) || defined(LAYERNORM)
layout(location = 6) uniform float u_eps;
#endif

// ROW_PER_INVOCATION (llvmpipe): each invocation walks a whole row alone, with no barriers and
// no shared memory (llvmpipe switches all of a group's coroutines at each barrier); the group
// reductions then reduce nothing. The host keeps it to rows of at most 8192: llvmpipe stops an
// invocation's loops after 65535 iterations in all (the passes over a longer row would pass it).
#ifdef ROW_PER_INVOCATION
#define ROW_INDEX tgl_global_index()
#define FIRST 0u
#define STEP 1u
#define GROUP_SUM(v) (v)
#define GROUP_MAX(v) (v)
#else
#define ROW_INDEX tgl_group_index()
#define FIRST gl_LocalInvocationIndex
#define STEP uint(TGL_WG_SIZE)
#define GROUP_SUM(v) tgl_group_sum(v)
#define GROUP_MAX(v) tgl_group_max(v)
#endif

void main()
{
    uint row = ROW_INDEX;
    if (row >= u_rows)
        return; // uniform across the workgroup, or (per invocation) no barrier follows
    uint tid = FIRST;
    uint xr = u_x_off + row * u_cols, yr = u_y_off + row * u_cols;
    const uint step = STEP;

#if defined(SOFTMAX) || defined(LOG_SOFTMAX)
    float m = -tgl_inf();
    for (uint j = tid; j < u_cols; j += step)
        m = max(m, X_AT(xr + j));
    m = GROUP_MAX(m);
    float s = 0.0;
    for (uint j = tid; j < u_cols; j += step)
        s += exp(X_AT(xr + j) - m);
    s = GROUP_SUM(s);
#ifdef SOFTMAX
    float inv = 1.0 / s;
    for (uint j = tid; j < u_cols; j += step)
        y[yr + j] = exp(X_AT(xr + j) - m) * inv;
#else
    float shift = m + log(s);
    for (uint j = tid; j < u_cols; j += step)
        y[yr + j] = X_AT(xr + j) - shift;
#endif
#else // RMSNORM, LAYERNORM
    float mean = 0.0;
#ifdef LAYERNORM
    float t = 0.0;
    for (uint j = tid; j < u_cols; j += step)
        t += X_AT(xr + j);
    mean = GROUP_SUM(t) / float(u_cols);
#endif
    float ss = 0.0;
    for (uint j = tid; j < u_cols; j += step) {
        float d = X_AT(xr + j) - mean;
        ss += d * d;
    }
    float inv = inversesqrt(GROUP_SUM(ss) / float(u_cols) + u_eps);
    for (uint j = tid; j < u_cols; j += step) {
        float v = (X_AT(xr + j) - mean) * inv;
#ifdef HAS_WEIGHT
        v *= w[u_w_off + j];
#endif
#ifdef HAS_BIAS
        v += bias[u_b_off + j];
#endif
        y[yr + j] = v;
    }
#endif
}

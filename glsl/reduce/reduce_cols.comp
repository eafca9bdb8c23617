#version 430
// Reduces lines of a tensor seen as [outer, len, inner] when the lines are strided (inner >= 32):
// one invocation per (line, chunk), x over the inner index, so neighbouring invocations read
// neighbouring elements (coalesced on GPUs; no barriers or shared memory, which llvmpipe runs
// slowly). gl_WorkGroupID.y = o * u_splits + part: the part-th chunk of u_chunk indices along
// the line. Each invocation accumulates its chunk in order (compensated for sums) and writes
// y[(o * inner + i) * u_splits + part] * u_scale: the result when u_splits is 1, else partials
// that reduce.comp combines (each line's contiguous). REDUCE_CARRY: as in reduce.comp.
#extension GL_GOOGLE_include_directive : enable
#ifndef TGL_WG_SIZE
#define TGL_WG_SIZE 64
#endif
#include "common/math.glsl"
#include "common/reduce.glsl"
#include "common/texel.glsl"

#if defined(OP_PROD)
#define IDENTITY 1.0
#define COMBINE(a, b) ((a) * (b))
#elif defined(OP_MAX)
#define IDENTITY (-tgl_inf())
#define COMBINE(a, b) tgl_max(a, b)
#elif defined(OP_MIN)
#define IDENTITY tgl_inf()
#define COMBINE(a, b) tgl_min(a, b)
#else // OP_SUM (mean is a sum with u_scale = 1 / len)
#define OP_SUM_COMPENSATED
#define IDENTITY 0.0
#define COMBINE(a, b) ((a) + (b))
#endif

#include "common/local_size.glsl"
#ifdef TGL_TEX
layout(location = 60, binding = 0) uniform highp samplerBuffer x_tex;
#define X_AT(i) TGL_READ(x_tex, i)
#else
layout(std430, binding = 0) readonly buffer Src { float x[]; };
#define X_AT(i) x[i]
#endif
#ifdef REDUCE_CARRY
layout(std430, binding = 1) buffer Dst { float y[]; };
#else
layout(std430, binding = 1) writeonly buffer Dst { float y[]; };
#endif
layout(location = 0) uniform uint u_len;
layout(location = 1) uniform uint u_inner;
layout(location = 2) uniform uint u_chunk;
layout(location = 3) uniform uint u_splits;
layout(location = 4) uniform uint u_x_off;
layout(location = 5) uniform uint u_y_off;
layout(location = 6) uniform float u_scale;

void main()
{
    uint i = gl_GlobalInvocationID.x;
    if (i >= u_inner)
        return;
    uint o = gl_WorkGroupID.y / u_splits, part = gl_WorkGroupID.y % u_splits;
    uint j0 = part * u_chunk;
    uint j1 = min(u_len, j0 + u_chunk);
    uint at = u_x_off + (o * u_len + j0) * u_inner + i;

    TGL_PRECISE float acc = IDENTITY;
#ifdef OP_SUM_COMPENSATED
    TGL_PRECISE float comp = 0.0; // Kahan: the low-order bits the running sum lost
#endif
    for (uint j = j0; j < j1; j++, at += u_inner) {
        float v = X_AT(at);
#ifdef OP_SUM_COMPENSATED
        TGL_PRECISE float yv = v - comp;
        TGL_PRECISE float t = acc + yv;
        comp = isinf(t) ? 0.0 : (t - acc) - yv;
        acc = t;
#else
        acc = COMBINE(acc, v);
#endif
    }
    uint k = u_y_off + (o * u_inner + i) * u_splits + part;
#ifdef REDUCE_CARRY
    y[k] = COMBINE(y[k], acc) * u_scale;
#else
    y[k] = acc * u_scale;
#endif
}

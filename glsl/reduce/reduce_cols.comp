#version 430
// Reduces lines of a tensor seen as [outer, len, inner] when the lines are strided (inner >= 32):
// one invocation per (line, chunk), x over the inner index, so neighbouring invocations read
// neighbouring elements (coalesced on GPUs; no barriers or shared memory, which llvmpipe runs
// slowly). gl_WorkGroupID.y = o * u_splits + part: the part-th chunk of u_chunk indices along
// the line. Each invocation accumulates its chunk in order (compensated for sums) and writes
// y[(o * inner + i) * u_splits + part] * u_scale: the result when u_splits is 1, else partials
// that reduce.comp combines (each line's contiguous). REDUCE_CARRY and sums that overflow f32
// over finite elements (taken again, scaled): as in reduce.comp.
// TGL_VEC4 (inner a multiple of 4, the data 16-byte aligned in its window): each invocation
// reduces four neighbouring lines as a vec4, a quarter of the loads (on llvmpipe, of its
// texel-fetch calls), each component compensated on its own.
#extension GL_GOOGLE_include_directive : enable
#include "common/locations.glsl"
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
#include "common/sweep.glsl"
#ifdef TGL_VEC4
#define T vec4
#define VW 4u
#define LANE(v, c) (v)[c]
#else
#define T float
#define VW 1u
#define LANE(v, c) (v)
#endif
#ifdef TGL_TEX
TGL_TEXTURE(LOC_TEXTURE0, 0, x_tex);
#define X_AT(i) TGL_READ(x_tex, i)
#else
layout(std430, binding = 0) readonly buffer Src { T x[]; };
#define X_AT(i) x[i]
#endif
#ifdef REDUCE_CARRY
layout(std430, binding = 1) buffer Dst { float y[]; };
#else
layout(std430, binding = 1) writeonly buffer Dst { float y[]; };
#endif
layout(location = LOC_RED_LEN) uniform uint u_len;
layout(location = LOC_RED_INNER) uniform uint u_inner;
layout(location = LOC_RED_CHUNK) uniform uint u_chunk;
layout(location = LOC_RED_SPLITS) uniform uint u_splits;
layout(location = LOC_RED_X_OFF) uniform uint u_x_off;
layout(location = LOC_RED_Y_OFF) uniform uint u_y_off;
layout(location = LOC_RED_SCALE) uniform float u_scale;

void main()
{
    uint i = gl_GlobalInvocationID.x; // in units of T along the inner index
    if (i >= u_inner / VW)
        return;
    uint gy = tgl_sweep(gl_WorkGroupID.y, gl_NumWorkGroups.y); // the grid's y: exactly lines x splits
    uint o = gy / u_splits, part = gy % u_splits;
    uint j0 = part * u_chunk;
    uint j1 = min(u_len, j0 + u_chunk);
    uint step = u_inner / VW, at = (u_x_off + (o * u_len + j0) * u_inner) / VW + i;

    TGL_PRECISE T acc = T(IDENTITY);
#ifdef OP_SUM_COMPENSATED
    TGL_PRECISE T comp = T(0.0); // Kahan: the low-order bits the running sum lost
#endif
    for (uint j = j0; j < j1; j++, at += step) {
        T v = X_AT(at);
#ifdef OP_SUM_COMPENSATED
        TGL_PRECISE T yv = v - comp;
        TGL_PRECISE T t = acc + yv;
        comp = mix((t - acc) - yv, T(0.0), isinf(t));
        acc = t;
#else
        acc = COMBINE(acc, v);
#endif
    }
#ifdef OP_SUM_COMPENSATED
    // As reduce.comp's rescan, per line (each component on its own): a total that overflowed
    // over finite elements is taken again, scaled by a power of two, and scaled back.
    TGL_PRECISE T res = (acc - comp) * u_scale;
    bool again = false;
    for (uint c = 0u; c < VW; c++)
        again = again || tgl_not_finite(LANE(res, c));
    if (again) {
        uint at0 = (u_x_off + (o * u_len + j0) * u_inner) / VW + i;
        T big = T(0.0);
        for (uint j = j0, a = at0; j < j1; j++, a += step)
            big = max(big, tgl_magnitude(X_AT(a)));
        for (uint c = 0u; c < VW; c++) {
            float m = LANE(big, c);
            if (!tgl_not_finite(LANE(res, c)) || tgl_not_finite(m))
                continue;
            int e = tgl_rescan_exponent(m);
            float s = ldexp(1.0, 32 - e);
            TGL_PRECISE float sum = 0.0, cs = 0.0;
            for (uint j = j0, a = at0; j < j1; j++, a += step) {
                TGL_PRECISE float yv = LANE(X_AT(a), c) * s - cs;
                TGL_PRECISE float t = sum + yv;
                cs = (t - sum) - yv;
                sum = t;
            }
            LANE(res, c) = ldexp((sum - cs) * u_scale, e - 32);
        }
    }
#endif
    for (uint c = 0u; c < VW; c++) {
        uint k = u_y_off + (o * u_inner + i * VW + c) * u_splits + part;
#ifdef OP_SUM_COMPENSATED
        float r = LANE(res, c);
#ifdef REDUCE_CARRY
        r += y[k]; // the earlier pieces, each scaled already
#endif
#else
        float r = LANE(acc, c);
#ifdef REDUCE_CARRY
        r = COMBINE(y[k], r);
#endif
        r *= u_scale;
#endif
        y[k] = r;
    }
}

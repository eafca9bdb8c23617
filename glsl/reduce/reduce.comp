#version 430
// Reduces lines of a tensor seen as [outer, len, inner]: workgroup g takes output g / u_splits
// and the g % u_splits-th chunk of its line (u_chunk elements, stride u_inner), and writes
// y[g] * u_scale. With u_splits > 1 the host runs a second pass over the partials. Each
// invocation accumulates a strided part of the chunk (compensated for sums), then the group
// combines in a tree of shared-memory steps (TGL_WG_SIZE is a power of two).
// Sums whose f32 running total overflowed while every element is finite (the CPU's double does
// not overflow there) are taken again, scaled: see "The rescan" in main.
// REDUCE_CARRY (lines longer than the SSBO block limit, reduced piece by piece): y[g] already
// holds the result of the line's earlier pieces; a sum's piece is scaled before it is added in
// (for a mean every piece carries 1 / len), other ops combine first and are scaled after.
// TGL_VEC4 (contiguous lines, u_inner == 1, with u_x_off, u_len and u_chunk multiples of 4):
// each invocation reads whole vec4s and keeps one running result (and compensation) per lane,
// folded together before the tree; on llvmpipe a quarter of the loop trips and texel fetches.
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
#define COMBINE4(a, b) vec4(COMBINE((a).x, (b).x), COMBINE((a).y, (b).y), COMBINE((a).z, (b).z), COMBINE((a).w, (b).w))
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
layout(location = LOC_RED_GROUPS) uniform uint u_groups;

shared float s_val[TGL_WG_SIZE];

// The group's combination of each invocation's v, in s_val[0] for all to read: a tree of
// shared-memory steps (TGL_WG_SIZE is a power of two). s_val must not be being read (a
// barrier after the last read of s_val[0]).
#define GROUP_TREE(v, OP)                                                   \
    {                                                                       \
        s_val[tid] = v;                                                     \
        memoryBarrierShared();                                              \
        barrier();                                                          \
        for (uint stride = uint(TGL_WG_SIZE) / 2u; stride > 0u; stride >>= 1) { \
            if (tid < stride)                                               \
                s_val[tid] = OP(s_val[tid], s_val[tid + stride]);           \
            memoryBarrierShared();                                          \
            barrier();                                                      \
        }                                                                   \
    }

#ifdef OP_SUM_COMPENSATED
#ifdef TGL_VEC4
#define T vec4
#define HSUM(v) (((v).x + (v).y) + ((v).z + (v).w))
#define HMAX(v) max(max((v).x, (v).y), max((v).z, (v).w))
#else
#define T float
#define HSUM(v) (v)
#define HMAX(v) (v)
#endif
#define TGL_MAX2(a, b) max(a, b)
#define TGL_ADD2(a, b) ((a) + (b))
// This invocation's elements of the chunk [j0, j1) times s (a power of two), summed compensated;
// with s == 0, their largest magnitude instead (NaN as +inf).
float own_part(uint base, uint j0, uint j1, uint tid, float s)
{
    TGL_PRECISE T acc = T(0.0), comp = T(0.0);
#ifdef TGL_VEC4
    for (uint j = j0 / 4u + tid; j < j1 / 4u; j += uint(TGL_WG_SIZE)) {
        T v = X_AT(base / 4u + j);
#else
    for (uint j = j0 + tid; j < j1; j += uint(TGL_WG_SIZE)) {
        T v = X_AT(base + j * u_inner);
#endif
        if (s == 0.0) {
            acc = max(acc, tgl_magnitude(v));
        } else {
            TGL_PRECISE T yv = v * s - comp;
            TGL_PRECISE T t = acc + yv;
            comp = (t - acc) - yv;
            acc = t;
        }
    }
    if (s == 0.0)
        return HMAX(acc);
    acc -= comp;
    return HSUM(acc);
}
#endif

void main()
{
    uint g = tgl_group_index();
    if (g >= u_groups)
        return; // uniform across the workgroup: no barrier is skipped by only some invocations
    g = tgl_sweep(g, u_groups);
    uint tid = gl_LocalInvocationIndex;
    uint line = g / u_splits, part = g % u_splits;
    uint o = line / u_inner, i = line % u_inner;
    uint j0 = part * u_chunk;
    uint j1 = min(u_len, j0 + u_chunk);
    uint base = u_x_off + o * u_len * u_inner + i;

    TGL_PRECISE float acc = IDENTITY;
#ifdef TGL_VEC4
    TGL_PRECISE vec4 acc4 = vec4(IDENTITY);
#ifdef OP_SUM_COMPENSATED
    TGL_PRECISE vec4 comp4 = vec4(0.0); // Kahan, per lane
#define ACCUMULATE4(v)                                         \
    {                                                          \
        TGL_PRECISE vec4 yv = (v) - comp4;                     \
        TGL_PRECISE vec4 t = acc4 + yv;                        \
        comp4 = mix((t - acc4) - yv, vec4(0.0), isinf(t));     \
        acc4 = t;                                              \
    }
#else
#define ACCUMULATE4(v) acc4 = COMBINE4(acc4, v)
#endif
    // Four of the invocation's vec4s are combined first and the running result takes their
    // combination: for sums, the compensated step (five operations and a select per lane) then
    // runs once per four vec4s, and the plain sum of four adds an error of about 2 ulps of
    // their magnitude, which the compensation then carries. On llvmpipe, where the loop is
    // bound by instruction count, sum of 16M floats went from 3.3-3.9 to 2.0-2.1 ms.
    const uint W = uint(TGL_WG_SIZE);
    uint j = j0 / 4u + tid, e = j1 / 4u, xb = base / 4u;
    for (; j + 3u * W < e; j += 4u * W) {
        vec4 v = COMBINE4(COMBINE4(X_AT(xb + j), X_AT(xb + j + W)), COMBINE4(X_AT(xb + j + 2u * W), X_AT(xb + j + 3u * W)));
        ACCUMULATE4(v);
    }
    for (; j < e; j += W) {
        vec4 v = X_AT(xb + j);
        ACCUMULATE4(v);
    }
#ifdef OP_SUM_COMPENSATED
    acc4 -= comp4; // each lane's best estimate, then pairwise
#endif
    acc = COMBINE(COMBINE(acc4.x, acc4.y), COMBINE(acc4.z, acc4.w));
#else
#ifdef OP_SUM_COMPENSATED
    TGL_PRECISE float comp = 0.0; // Kahan: the low-order bits the running sum lost
#endif
    for (uint j = j0 + tid; j < j1; j += uint(TGL_WG_SIZE)) {
        float v = X_AT(base + j * u_inner);
#ifdef OP_SUM_COMPENSATED
        TGL_PRECISE float yv = v - comp;
        TGL_PRECISE float t = acc + yv;
        comp = isinf(t) ? 0.0 : (t - acc) - yv;
        acc = t;
#else
        acc = COMBINE(acc, v);
#endif
    }
#endif
    GROUP_TREE(acc, COMBINE);
    float r = s_val[0];
#ifdef OP_SUM_COMPENSATED
    // The rescan: a running total that overflowed over finite elements (this chunk's largest
    // magnitude is finite) is taken again with every element scaled by the power of two that
    // brings that magnitude to about 2^32, so nothing overflows and nothing becomes subnormal;
    // the result (times u_scale first, for a mean) is scaled back exactly. r is the group's:
    // the branch is uniform. A NaN or an infinite element keeps the plain result, as on the CPU.
    r *= u_scale;
    if (tgl_not_finite(r)) {
        barrier(); // every invocation has read s_val[0]
        GROUP_TREE(own_part(base, j0, j1, tid, 0.0), TGL_MAX2);
        float big = s_val[0];
        if (!tgl_not_finite(big)) {
            int e = tgl_rescan_exponent(big);
            barrier();
            GROUP_TREE(own_part(base, j0, j1, tid, ldexp(1.0, 32 - e)), TGL_ADD2);
            r = ldexp(s_val[0] * u_scale, e - 32);
        }
    }
#ifdef REDUCE_CARRY
    r += y[u_y_off + g];
#endif
#else
#ifdef REDUCE_CARRY
    r = COMBINE(y[u_y_off + g], r);
#endif
    r *= u_scale;
#endif
    if (tid == 0u)
        y[u_y_off + g] = r;
}

#version 430
// Row-wise ops, one workgroup per row of u_cols elements: SOFTMAX, LOG_SOFTMAX, RMSNORM or
// LAYERNORM (one is defined), with HAS_WEIGHT / HAS_BIAS for the optional per-column operands.
// Every pass reads the whole row before the last one writes it, so out may alias in.
#extension GL_GOOGLE_include_directive : enable
#include "common/locations.glsl"
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
#include "common/wide_store.glsl"

#if !defined(SOFTMAX) && !defined(LOG_SOFTMAX) && !defined(LAYERNORM) && !defined(RMSNORM)
#define RMSNORM // no op chosen: only for standalone validation of this file
#endif

#include "common/local_size.glsl"
#include "common/sweep.glsl"
// TGL_VEC4 (u_cols and every operand's offset multiples of 4): each step takes a vec4 of the
// row, and the lanes are folded before the group reductions (llvmpipe: a quarter of the texel
// fetches, loop trips and scattered stores).
#ifdef TGL_VEC4
#define T vec4
#define VW 4u
#define HSUM(v) (((v).x + (v).y) + ((v).z + (v).w))
#define HMAX(v) max(max((v).x, (v).y), max((v).z, (v).w))
#define FIRST_OF(v) (v).x
#else
#define T float
#define VW 1u
#define HSUM(v) (v)
#define HMAX(v) (v)
#define FIRST_OF(v) (v)
#endif
// TGL_TEX: the row read through a buffer texture (common/texel.glsl), for llvmpipe.
#ifdef TGL_TEX
layout(location = LOC_TEXTURE0, binding = 0) uniform highp samplerBuffer x_tex;
#define X_AT(i) TGL_READ(x_tex, i)
#else
layout(std430, binding = 0) readonly buffer Src { T x[]; };
#define X_AT(i) x[i]
#endif
#ifdef TGL_WIDE
layout(std430, binding = 1) writeonly buffer Dst { dvec4 y[]; };
#else
layout(std430, binding = 1) writeonly buffer Dst { T y[]; };
#endif
#ifdef HAS_WEIGHT
layout(std430, binding = 2) readonly buffer Weight { T w[]; };
layout(location = LOC_ROWS_W_OFF) uniform uint u_w_off;
#endif
#ifdef HAS_BIAS
layout(std430, binding = 3) readonly buffer Bias { T bias[]; };
layout(location = LOC_ROWS_B_OFF) uniform uint u_b_off;
#endif
layout(location = LOC_ROWS_COLS) uniform uint u_cols;
layout(location = LOC_ROWS_ROWS) uniform uint u_rows;
layout(location = LOC_ROWS_X_OFF) uniform uint u_x_off;
layout(location = LOC_ROWS_Y_OFF) uniform uint u_y_off;
#if defined(RMSNORM) || defined(LAYERNORM)
layout(location = LOC_ROWS_EPS) uniform float u_eps;
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

// The last pass: y[j] = OUT_AT(j) over the row. TGL_WIDE (llvmpipe, with TGL_VEC4 and
// ROW_PER_INVOCATION; the host sees that the row holds whole pairs of vec4s and that the
// output starts 32-byte aligned in its window) stores two vec4s at a time (common/wide_store.glsl).
#ifdef TGL_WIDE
#define STORE_ROW() for (uint j = 0u; j < n; j += 2u) y[(yr + j) / 2u] = tgl_wide(OUT_AT(j), OUT_AT(j + 1u))
#else
#define STORE_ROW() for (uint j = tid; j < n; j += step) y[yr + j] = OUT_AT(j)
#endif

#if defined(RMSNORM) || defined(LAYERNORM)
// Element j of the normalised row that starts at xr: ((x * scale - shift) - mean) * inv, where
// mean is the mean of x * scale - shift (layernorm shifts by the row's first element, scaled;
// rmsnorm by nothing; scale is 1 but for rows whose sums overflow f32, see main).
T norm_at(uint xr, uint j, float scale, float shift, float mean, float inv)
{
    T v = ((X_AT(xr + j) * scale - shift) - mean) * inv;
#ifdef HAS_WEIGHT
    v *= w[u_w_off / VW + j];
#endif
#ifdef HAS_BIAS
    v += bias[u_b_off / VW + j];
#endif
    return v;
}
#endif

// Llvmpipe's row-per-invocation layernorm takes the mean and the variance in one pass (each
// pass costs its texel fetches there); the workgroup kernel keeps two.
#if defined(LAYERNORM) && defined(ROW_PER_INVOCATION)
#define LAYERNORM_ONE_PASS
#endif

#ifdef LAYERNORM_ONE_PASS
// Folds a block of nb elements, with mean bm and sum of squared deviations from it bm2, into
// the running count, mean and sum of squared deviations (Chan, Golub and LeVeque's pairwise
// update: as stable as two passes over the row).
void merge_block(inout float cnt, inout float mean, inout float m2, float nb, float bm, float bm2)
{
    float nn = cnt + nb, f = nb / nn, delta = bm - mean;
    mean += delta * f;
    m2 += bm2 + delta * delta * cnt * f;
    cnt = nn;
}
#endif

void main()
{
    uint row = ROW_INDEX;
    if (row >= u_rows)
        return; // uniform across the workgroup, or (per invocation) no barrier follows
    row = tgl_sweep(row, u_rows);
    uint tid = FIRST;
    // Offsets and lengths in units of T.
    uint n = u_cols / VW, xr = (u_x_off + row * u_cols) / VW, yr = (u_y_off + row * u_cols) / VW;
    const uint step = STEP;

#if defined(SOFTMAX) || defined(LOG_SOFTMAX)
#ifdef ROW_PER_INVOCATION
    // The max and the sum of exponentials in one pass over the row (llvmpipe, where each pass
    // costs its texel fetches): the sum so far is rescaled whenever the max grows, once per
    // four steps by a single exp. m starts at the lowest finite float, not -inf, so that
    // m - nm and x - nm are never -inf - -inf: -inf elements add 0.
    float m = -3.40282347e38;
    T sv = T(0.0);
    uint j = 0u;
    for (; j + 4u <= n; j += 4u) {
        T a = X_AT(xr + j), b = X_AT(xr + j + 1u), c = X_AT(xr + j + 2u), d = X_AT(xr + j + 3u);
        float nm = max(m, HMAX(max(max(a, b), max(c, d))));
        sv = sv * exp(m - nm) + ((exp(a - nm) + exp(b - nm)) + (exp(c - nm) + exp(d - nm)));
        m = nm;
    }
    for (; j < n; j++) {
        T a = X_AT(xr + j);
        float nm = max(m, HMAX(a));
        sv = sv * exp(m - nm) + exp(a - nm);
        m = nm;
    }
    float s = HSUM(sv);
#else
    T mv = T(-tgl_inf());
    for (uint j = tid; j < n; j += step)
        mv = max(mv, X_AT(xr + j));
    float m = GROUP_MAX(HMAX(mv));
    T sv = T(0.0);
    for (uint j = tid; j < n; j += step)
        sv += exp(X_AT(xr + j) - m);
    float s = GROUP_SUM(HSUM(sv));
#endif
#ifdef SOFTMAX
    float inv = 1.0 / s;
#define OUT_AT(j) (exp(X_AT(xr + (j)) - m) * inv)
#else
    float shift = m + log(s);
#define OUT_AT(j) (X_AT(xr + (j)) - shift)
#endif
    STORE_ROW();
#else // RMSNORM, LAYERNORM
    // Layernorm works on x - x0, x0 the row's first element: for rows far from zero (a large
    // mean, a small spread) the differences are exact where a mean of x itself would be off
    // by up to half a unit in the last place of that mean.
    float shift = 0.0, mean = 0.0, inv;
#ifdef LAYERNORM
    if (n > 0u)
        shift = FIRST_OF(X_AT(xr));
#ifdef LAYERNORM_ONE_PASS
    // Each trip's four steps are reduced on their own (their mean, then their squared
    // deviations from it) and merged.
    float cnt = 0.0, m2 = 0.0;
    uint j = 0u;
    for (; j + 4u <= n; j += 4u) {
        T a = X_AT(xr + j) - shift, b = X_AT(xr + j + 1u) - shift;
        T c = X_AT(xr + j + 2u) - shift, d = X_AT(xr + j + 3u) - shift;
        float bm = HSUM((a + b) + (c + d)) * (0.25 / float(VW));
        a -= bm;
        b -= bm;
        c -= bm;
        d -= bm;
        merge_block(cnt, mean, m2, float(4u * VW), bm, HSUM((a * a + b * b) + (c * c + d * d)));
    }
    for (; j < n; j++) {
        T a = X_AT(xr + j) - shift;
        float bm = HSUM(a) * (1.0 / float(VW));
        a -= bm;
        merge_block(cnt, mean, m2, float(VW), bm, HSUM(a * a));
    }
    float sq = m2;
#else
    T t = T(0.0);
    for (uint j = tid; j < n; j += step)
        t += X_AT(xr + j) - shift;
    mean = GROUP_SUM(HSUM(t)) / float(u_cols);
#endif
#endif
#ifndef LAYERNORM_ONE_PASS
    T ss = T(0.0);
    for (uint j = tid; j < n; j += step) {
        T d = (X_AT(xr + j) - shift) - mean;
        ss += d * d;
    }
    float sq = GROUP_SUM(HSUM(ss));
#endif
    inv = inversesqrt(sq / float(u_cols) + u_eps);
    float scale = 1.0;
    if (tgl_not_finite(sq) || tgl_not_finite(mean)) { // uniform: both are the group's
        // Finite values whose sum or squares overflow f32 (the CPU's double does not): the row
        // again, scaled by the power of two that brings its largest magnitude to about 2^32 (a
        // normal number: a device that flushes subnormals changes nothing), eps alike. A NaN or
        // an infinite element keeps the plain result, as on the CPU.
        T mv = T(0.0);
        for (uint j = tid; j < n; j += step)
            mv = max(mv, tgl_magnitude(X_AT(xr + j)));
        float big = GROUP_MAX(HMAX(mv));
        if (!tgl_not_finite(big)) {
            scale = ldexp(1.0, 32 - tgl_rescan_exponent(big));
            shift *= scale;
#ifdef LAYERNORM
            T t2 = T(0.0);
            for (uint j = tid; j < n; j += step)
                t2 += X_AT(xr + j) * scale - shift;
            mean = GROUP_SUM(HSUM(t2)) / float(u_cols);
#endif
            T s2 = T(0.0);
            for (uint j = tid; j < n; j += step) {
                T d = (X_AT(xr + j) * scale - shift) - mean;
                s2 += d * d;
            }
            inv = inversesqrt(GROUP_SUM(HSUM(s2)) / float(u_cols) + u_eps * scale * scale);
        }
    }
#define OUT_AT(j) norm_at(xr, j, scale, shift, mean, inv)
    STORE_ROW();
#endif
}

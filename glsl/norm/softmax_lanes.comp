#version 450
// Softmax or log-softmax (SOFTMAX / LOG_SOFTMAX) of rows of up to LANES x REGS vec4s, for
// llvmpipe: LANES invocations (one SIMD vector there) per row, each holding REGS vec4s of it in
// registers, so the row is fetched once (rows.comp's row-per-invocation kernel fetches it twice,
// and takes two exponentials per element to this kernel's one). Invocation `lane` of a row holds
// the pairs of vec4s 2 lane, 2 lane + 1 of every run of 2 LANES vec4s: neighbouring invocations
// read neighbouring texels, and each pair goes out as one dvec4 (common/wide_store.glsl). The
// host takes it for rows of whole pairs of vec4s (u_cols a multiple of 8), read through a
// buffer texture, with the output starting 32-byte aligned; EXACT: u_cols is LANES x REGS x 4,
// so no element needs a test. A workgroup takes ROWS rows (llvmpipe pays a cost per workgroup:
// 4096 x 1024 ran 2.9-3.0 ms at one row per workgroup, 2.6-2.7 at 8, 16 or 32).
// A row's max and sum are combined across its invocations with readInvocationARB: the host
// makes LANES llvmpipe's SIMD width, which is its subgroup size, so each row's invocations are
// one subgroup. No barrier: llvmpipe pays for each by switching coroutines, and even a
// shared-memory fallback behind a uniform branch on gl_SubGroupSizeARB took 4096 x 1024 from
// 2.9 to 4.8 ms. Under another subgroup size the kernel gives NaN rather than wrong rows.
// GLSL 4.50: glslang declares ARB_shader_ballot's functions from there on (Mesa from 4.30).
// Every invocation reads its part of the row before any stores (the stores wait for the max,
// which needs every part), so out may alias in.
#extension GL_GOOGLE_include_directive : enable
#include "common/locations.glsl"
#extension GL_ARB_shader_ballot : require
#define TGL_VEC4
#define TGL_TEX
#define TGL_WIDE
#ifndef LANES
#define LANES 8
#define REGS 32
#define ROWS 8
#define SOFTMAX
#endif
#ifndef TGL_WG_SIZE // the host defines it (gl_source.c); for standalone validation
#define TGL_WG_SIZE (LANES * ROWS)
#endif
#if REGS % 2 != 0
#error REGS must be even: the vec4s go out in pairs
#endif
#include "common/math.glsl"
#include "common/index.glsl"
#include "common/texel.glsl"
#include "common/wide_store.glsl"
#include "common/sweep.glsl"
#include "common/unroll.glsl"

layout(local_size_x = LANES * ROWS) in;
layout(location = LOC_TEXTURE0, binding = 0) uniform highp samplerBuffer x_tex;
layout(std430, binding = 1) writeonly buffer Dst { dvec4 y[]; };
layout(location = LOC_ROWS_COLS) uniform uint u_cols;
layout(location = LOC_ROWS_ROWS) uniform uint u_rows;
layout(location = LOC_ROWS_X_OFF) uniform uint u_x_off;
layout(location = LOC_ROWS_Y_OFF) uniform uint u_y_off;

#define HSUM(v) (((v).x + (v).y) + ((v).z + (v).w))
#define HMAX(v) max(max((v).x, (v).y), max((v).z, (v).w))

void main()
{
    uint row = tgl_group_index() * uint(ROWS) + gl_LocalInvocationIndex / uint(LANES);
    if (row >= u_rows)
        return; // uniform across the row's subgroup, and no barrier follows
    row = tgl_sweep(row, u_rows);
    uint lane = gl_LocalInvocationIndex % uint(LANES);
    uint n = u_cols / 4u, xr = (u_x_off + row * u_cols) / 4u, yr = (u_y_off + row * u_cols) / 4u;

    // The row's max. It starts at the lowest finite float, as rows.comp's does: a row of only
    // -inf then gives NaN (-inf - m is -inf, its sum 0) on both kernels, as on the CPU.
    vec4 v[REGS];
    float mx = -3.40282347e38;
    TGL_UNROLL for (uint k = 0u; k < uint(REGS / 2); k++) {
        uint j = k * uint(2 * LANES) + 2u * lane;
#ifdef EXACT
        v[2u * k] = TGL_READ(x_tex, xr + j);
        v[2u * k + 1u] = TGL_READ(x_tex, xr + j + 1u);
#else
        bool in_row = j < n; // n is even: a pair is in the row or out of it whole
        v[2u * k] = in_row ? TGL_READ(x_tex, xr + j) : vec4(-tgl_inf()); // adds 0 to the sum
        v[2u * k + 1u] = in_row ? TGL_READ(x_tex, xr + j + 1u) : vec4(-tgl_inf());
#endif
        mx = max(mx, max(HMAX(v[2u * k]), HMAX(v[2u * k + 1u])));
    }
    float m = readInvocationARB(mx, 0u);
    TGL_UNROLL for (uint i = 1u; i < uint(LANES); i++)
        m = max(m, readInvocationARB(mx, i));
    if (gl_SubGroupSizeARB != uint(LANES))
        m = uintBitsToFloat(0x7fc00000u); // the host misjudged the subgroup: NaN, not a wrong row

    // The sum of exponentials; softmax keeps them, log-softmax keeps x - m.
    vec4 sv = vec4(0.0);
    TGL_UNROLL for (uint k = 0u; k < uint(REGS); k++) {
#ifdef SOFTMAX
        v[k] = exp(v[k] - m);
        sv += v[k];
#else
        v[k] -= m;
        sv += exp(v[k]);
#endif
    }
    float part = HSUM(sv), s = readInvocationARB(part, 0u);
    TGL_UNROLL for (uint i = 1u; i < uint(LANES); i++)
        s += readInvocationARB(part, i); // the same order in every lane: the same s

#ifdef SOFTMAX
    float inv = 1.0 / s;
#define OUT(k) (v[k] * inv)
#else
    float ls = log(s);
#define OUT(k) (v[k] - ls)
#endif
    TGL_UNROLL for (uint k = 0u; k < uint(REGS / 2); k++) {
        uint j = k * uint(2 * LANES) + 2u * lane;
#ifndef EXACT
        if (j < n)
#endif
            y[(yr + j) / 2u] = tgl_wide(OUT(2u * k), OUT(2u * k + 1u));
    }
}

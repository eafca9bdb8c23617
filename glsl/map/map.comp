#version 430
// tgl_map: y[i] = MAP_EXPR, an expression the host generates from the parsed tree (never from
// the user's text) out of the names below: X0.. for the inputs the expression uses (renumbered
// in order), TGL_NUM(k) for its k-th number (MAP_NUMS of them, set as uniforms), and the functions of
// common/math.glsl plus the helpers here. Inputs sit at bindings 0..MAP_INPUTS-1 with their
// offsets at locations 1..MAP_INPUTS; the output at binding MAP_INPUTS, its offset at
// location MAP_INPUTS + 1 (the element-wise runner's layout). TGL_VEC4 and TGL_ITEMS as in
// elementwise/unary.comp. TGL_TEX (only with at most 4 inputs, the texture units the
// dispatcher binds) reads the inputs through buffer textures (common/texel.glsl).
#extension GL_GOOGLE_include_directive : enable
#include "common/locations.glsl"
#include "common/precise.glsl"
#include "common/unroll.glsl"
#ifndef TGL_WG_SIZE
#define TGL_WG_SIZE 64
#endif
#ifndef TGL_ITEMS
#define TGL_ITEMS 1
#endif
#include "common/index.glsl"
#include "common/sweep.glsl"
#include "common/math.glsl"
#include "common/trig.glsl"
#include "common/texel.glsl"
#include "common/wide_store.glsl"

#ifndef MAP_EXPR // only for standalone validation of this file
#define MAP_INPUTS 2
#define MAP_OUT_BINDING 2
#define MAP_OUT_LOC 3
#define MAP_NUMS 1
#define MAP_EXPR tgl_select(X0, tgl_square(X1), tgl_recip(tgl_add(tgl_neg(X0), TGL_NUM(0))))
#endif

#ifdef TGL_VEC4
#define ELEM vec4
#else
#define ELEM float
#endif
// The expression's numbers are uniforms, not literals: a compiler folds a*0 to 0 and a+0 to a
// around a literal even under `precise` (llvmpipe does), which IEEE forbids (inf*0 is NaN,
// -0+0 is +0). It also lets expressions that differ only in their numbers share a program.
#if MAP_NUMS > 0
layout(location = LOC_MAP_NUM0) uniform float u_num[MAP_NUMS];
#endif
#define TGL_NUM(k) ELEM(u_num[k])

#include "common/local_size.glsl"
#if MAP_INPUTS > 0
#ifdef TGL_TEX
TGL_TEXTURE(LOC_TEXTURE0, 0, in0_tex);
#define X0 TGL_READ(in0_tex, u_off0 + i)
#else
layout(std430, binding = 0) readonly buffer In0 { ELEM in0[]; };
#define X0 in0[u_off0 + i]
#endif
layout(location = LOC_EW_OFF0) uniform uint u_off0;
#endif
#if MAP_INPUTS > 1
#ifdef TGL_TEX
TGL_TEXTURE(LOC_TEXTURE1, 1, in1_tex);
#define X1 TGL_READ(in1_tex, u_off1 + i)
#else
layout(std430, binding = 1) readonly buffer In1 { ELEM in1[]; };
#define X1 in1[u_off1 + i]
#endif
layout(location = LOC_EW_OFF1) uniform uint u_off1;
#endif
#if MAP_INPUTS > 2
#ifdef TGL_TEX
TGL_TEXTURE(LOC_TEXTURE2, 2, in2_tex);
#define X2 TGL_READ(in2_tex, u_off2 + i)
#else
layout(std430, binding = 2) readonly buffer In2 { ELEM in2[]; };
#define X2 in2[u_off2 + i]
#endif
layout(location = LOC_EW_OFF2) uniform uint u_off2;
#endif
#if MAP_INPUTS > 3
#ifdef TGL_TEX
TGL_TEXTURE(LOC_TEXTURE3, 3, in3_tex);
#define X3 TGL_READ(in3_tex, u_off3 + i)
#else
layout(std430, binding = 3) readonly buffer In3 { ELEM in3[]; };
#define X3 in3[u_off3 + i]
#endif
layout(location = LOC_EW_OFF3) uniform uint u_off3;
#endif
#if MAP_INPUTS > 4
layout(std430, binding = 4) readonly buffer In4 { ELEM in4[]; };
layout(location = LOC_EW_OFF4) uniform uint u_off4;
#define X4 in4[u_off4 + i]
#endif
#if MAP_INPUTS > 5
layout(std430, binding = 5) readonly buffer In5 { ELEM in5[]; };
layout(location = LOC_EW_OFF5) uniform uint u_off5;
#define X5 in5[u_off5 + i]
#endif
#if MAP_INPUTS > 6
layout(std430, binding = 6) readonly buffer In6 { ELEM in6[]; };
layout(location = LOC_EW_OFF6) uniform uint u_off6;
#define X6 in6[u_off6 + i]
#endif
#if MAP_INPUTS > 7
layout(std430, binding = 7) readonly buffer In7 { ELEM in7[]; };
layout(location = LOC_EW_OFF7) uniform uint u_off7;
#define X7 in7[u_off7 + i]
#endif
#ifdef TGL_WIDE
layout(std430, binding = MAP_OUT_BINDING) writeonly buffer Dst { dvec4 y[]; };
#else
layout(std430, binding = MAP_OUT_BINDING) writeonly buffer Dst { ELEM y[]; };
#endif
layout(location = LOC_EW_N) uniform uint u_n;
layout(location = MAP_OUT_LOC) uniform uint u_y_off;

#include "common/map_ops.glsl"

void main()
{
#ifdef TGL_WIDE
    // an exact grid (see common/wide_store.glsl), so every invocation has its mirror
    uint w = tgl_sweep(tgl_global_index(), tgl_grid_invocations()) * TGL_WIDE_PAIRS;
    TGL_UNROLL for (uint k = 0u; k < TGL_WIDE_PAIRS; k++) {
        uint i = 2u * (w + k);
        TGL_PRECISE vec4 lo = MAP_EXPR; // precise: no folding IEEE forbids (a*0, a+0, a-a)
        i++;
        TGL_PRECISE vec4 hi = MAP_EXPR;
        y[u_y_off / 2u + w + k] = tgl_wide(lo, hi);
    }
#else
    uint first = tgl_global_index(), stride = tgl_grid_invocations();
    TGL_UNROLL for (uint k = 0u; k < uint(TGL_ITEMS); k++) {
        uint i = first + k * stride;
        if (i >= u_n)
            return;
        i = tgl_sweep(i, u_n);
        TGL_PRECISE ELEM v = MAP_EXPR; // precise: no folding IEEE forbids (a*0, a+0, a-a)
        y[u_y_off + i] = v;
    }
#endif
}

#version 430
// y[i] = u_alpha * x[i] + u_beta * y[i]; with u_beta == 0 the old y is not read, so a NaN in it
// cannot leak. TGL_VEC4 as in unary.comp.
#extension GL_GOOGLE_include_directive : enable
#include "common/locations.glsl"
#include "common/unroll.glsl"
#ifndef TGL_WG_SIZE
#define TGL_WG_SIZE 64
#endif
#ifndef TGL_ITEMS
#define TGL_ITEMS 1
#endif
#include "common/index.glsl"
#include "common/sweep.glsl"
#include "common/texel.glsl"
#include "common/wide_store.glsl"

#ifdef TGL_VEC4
#define ELEM vec4
#else
#define ELEM float
#endif

#include "common/local_size.glsl"
#ifdef TGL_TEX
TGL_TEXTURE(LOC_TEXTURE0, 0, x_tex);
#define X_AT(i) TGL_READ(x_tex, i)
#else
layout(std430, binding = 0) readonly buffer Src { ELEM x[]; };
#define X_AT(i) x[i]
#endif
#ifdef TGL_WIDE
layout(std430, binding = 1) buffer Dst { dvec4 y[]; };
#else
layout(std430, binding = 1) buffer Dst { ELEM y[]; };
#endif
layout(location = LOC_EW_N) uniform uint u_n;
layout(location = LOC_EW_OFF0) uniform uint u_x_off;
layout(location = LOC_EW_OFF1) uniform uint u_y_off;
layout(location = LOC_EW_PARAM0) uniform float u_alpha;
layout(location = LOC_EW_PARAM1) uniform float u_beta;

// Each invocation takes TGL_ITEMS elements (vec4s with TGL_VEC4), one grid apart, so accesses
// stay coalesced; u_n counts in the same unit.
void main()
{
#ifdef TGL_WIDE
    // an exact grid (see common/wide_store.glsl), so every invocation has its mirror
    uint w = tgl_sweep(tgl_global_index(), tgl_grid_invocations()) * TGL_WIDE_PAIRS;
    TGL_UNROLL for (uint k = 0u; k < TGL_WIDE_PAIRS; k++) {
        uint i = 2u * (w + k), at = u_y_off / 2u + w + k;
        vec4 lo = u_alpha * X_AT(u_x_off + i), hi = u_alpha * X_AT(u_x_off + i + 1u);
        if (u_beta != 0.0) { // uniform: the old y is read only when it counts
            dvec4 old = y[at];
            lo += u_beta * tgl_unwide(old, 0u);
            hi += u_beta * tgl_unwide(old, 1u);
        }
        y[at] = tgl_wide(lo, hi);
    }
#else
    uint first = tgl_global_index(), stride = tgl_grid_invocations();
    TGL_UNROLL for (uint k = 0u; k < uint(TGL_ITEMS); k++) {
        uint i = first + k * stride;
        if (i >= u_n)
            return;
        i = tgl_sweep(i, u_n);
        ELEM ax = u_alpha * X_AT(u_x_off + i);
        y[u_y_off + i] = u_beta == 0.0 ? ax : ax + u_beta * y[u_y_off + i];
    }
#endif
}

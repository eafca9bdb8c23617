#version 430
// out[i] = u_value. TGL_VEC4 and TGL_WIDE as in unary.comp.
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
#include "common/wide_store.glsl"

#ifdef TGL_VEC4
#define ELEM vec4
#else
#define ELEM float
#endif

#include "common/local_size.glsl"
#ifdef TGL_WIDE
layout(std430, binding = 0) writeonly buffer Dst { dvec4 y[]; };
#else
layout(std430, binding = 0) writeonly buffer Dst { ELEM y[]; };
#endif
layout(location = LOC_EW_N) uniform uint u_n;
layout(location = LOC_EW_OFF0) uniform uint u_y_off;
layout(location = LOC_EW_PARAM0) uniform float u_value;

// Each invocation takes TGL_ITEMS elements (vec4s with TGL_VEC4), one grid apart, so accesses
// stay coalesced; u_n counts in the same unit.
void main()
{
#ifdef TGL_WIDE
    // an exact grid (see common/wide_store.glsl), so every invocation has its mirror
    uint w = tgl_sweep(tgl_global_index(), tgl_grid_invocations()) * TGL_WIDE_PAIRS;
    dvec4 v = tgl_wide(vec4(u_value), vec4(u_value));
    TGL_UNROLL for (uint k = 0u; k < TGL_WIDE_PAIRS; k++)
        y[u_y_off / 2u + w + k] = v;
#else
    uint first = tgl_global_index(), stride = tgl_grid_invocations();
    TGL_UNROLL for (uint k = 0u; k < uint(TGL_ITEMS); k++) {
        uint i = first + k * stride;
        if (i >= u_n)
            return;
        i = tgl_sweep(i, u_n);
        y[u_y_off + i] = ELEM(u_value);
    }
#endif
}

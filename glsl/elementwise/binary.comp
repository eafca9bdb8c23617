#version 430
// out[i] = a[i] op b[i]. One define picks the op (OP_ADD ... OP_POW); TGL_VEC4 as in unary.comp.
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
#include "common/math.glsl"

#include "common/binary_ops.glsl"

#ifdef TGL_VEC4
#define ELEM vec4
#else
#define ELEM float
#endif

#include "common/local_size.glsl"
#ifdef TGL_TEX
TGL_TEXTURE(LOC_TEXTURE0, 0, a_tex);
TGL_TEXTURE(LOC_TEXTURE1, 1, b_tex);
#define A_AT(i) TGL_READ(a_tex, i)
#define B_AT(i) TGL_READ(b_tex, i)
#else
layout(std430, binding = 0) readonly buffer SrcA { ELEM a[]; };
layout(std430, binding = 1) readonly buffer SrcB { ELEM b[]; };
#define A_AT(i) a[i]
#define B_AT(i) b[i]
#endif
#ifdef TGL_WIDE
layout(std430, binding = 2) writeonly buffer Dst { dvec4 y[]; };
#else
layout(std430, binding = 2) writeonly buffer Dst { ELEM y[]; };
#endif
layout(location = LOC_EW_N) uniform uint u_n;
layout(location = LOC_EW_OFF0) uniform uint u_a_off;
layout(location = LOC_EW_OFF1) uniform uint u_b_off;
layout(location = LOC_EW_OFF2) uniform uint u_y_off;

// Each invocation takes TGL_ITEMS elements (vec4s with TGL_VEC4), one grid apart, so accesses
// stay coalesced; u_n counts in the same unit.
void main()
{
#ifdef TGL_WIDE
    // an exact grid (see common/wide_store.glsl), so every invocation has its mirror
    uint w = tgl_sweep(tgl_global_index(), tgl_grid_invocations()) * TGL_WIDE_PAIRS;
    TGL_UNROLL for (uint k = 0u; k < TGL_WIDE_PAIRS; k++) {
        uint i = 2u * (w + k);
        vec4 lo = BINARY(A_AT(u_a_off + i), B_AT(u_b_off + i));
        i++;
        y[u_y_off / 2u + w + k] = tgl_wide(lo, BINARY(A_AT(u_a_off + i), B_AT(u_b_off + i)));
    }
#else
    uint first = tgl_global_index(), stride = tgl_grid_invocations();
    TGL_UNROLL for (uint k = 0u; k < uint(TGL_ITEMS); k++) {
        uint i = first + k * stride;
        if (i >= u_n)
            return;
        i = tgl_sweep(i, u_n);
        y[u_y_off + i] = BINARY(A_AT(u_a_off + i), B_AT(u_b_off + i));
    }
#endif
}

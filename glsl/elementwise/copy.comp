#version 430
// dst[i] = src[i] on 32-bit words, bit for bit (uint, never through float registers, so NaN
// payloads and non-float data survive): tgl_copy_dtod on GPUs, where this runs at memory
// bandwidth while glCopyBufferSubData may not. TGL_VEC4 as in unary.comp.
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

#ifdef TGL_VEC4
#define ELEM uvec4
#else
#define ELEM uint
#endif

#include "common/local_size.glsl"
layout(std430, binding = 0) readonly buffer Src { ELEM x[]; };
layout(std430, binding = 1) writeonly buffer Dst { ELEM y[]; };
layout(location = LOC_EW_N) uniform uint u_n;      // words (uvec4s with TGL_VEC4) in this dispatch
layout(location = LOC_EW_OFF0) uniform uint u_x_off;  // window offsets, in ELEM units
layout(location = LOC_EW_OFF1) uniform uint u_y_off;

void main()
{
    uint first = tgl_global_index(), stride = tgl_grid_invocations();
    TGL_UNROLL for (uint k = 0u; k < uint(TGL_ITEMS); k++) {
        uint i = first + k * stride;
        if (i >= u_n)
            return;
        i = tgl_sweep(i, u_n);
        y[u_y_off + i] = x[u_x_off + i];
    }
}

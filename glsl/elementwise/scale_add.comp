#version 430
// y[i] = u_alpha * x[i] + u_beta * y[i]; with u_beta == 0 the old y is not read, so a NaN in it
// cannot leak. TGL_VEC4 as in unary.comp.
#extension GL_GOOGLE_include_directive : enable
#ifndef TGL_WG_SIZE
#define TGL_WG_SIZE 64
#endif
#include "common/index.glsl"

#ifdef TGL_VEC4
#define ELEM vec4
#else
#define ELEM float
#endif

layout(local_size_x = TGL_WG_SIZE) in;
layout(std430, binding = 0) readonly buffer Src { ELEM x[]; };
layout(std430, binding = 1) buffer Dst { ELEM y[]; };
layout(location = 0) uniform uint u_n;
layout(location = 1) uniform uint u_x_off;
layout(location = 2) uniform uint u_y_off;
layout(location = 8) uniform float u_alpha;
layout(location = 9) uniform float u_beta;

void main()
{
    uint i = tgl_global_index();
#ifdef TGL_VEC4
    uint first = i * 4u;
    if (first >= u_n)
        return;
    if (first + 4u <= u_n) {
        vec4 ax = u_alpha * x[u_x_off + i];
        y[u_y_off + i] = u_beta == 0.0 ? ax : ax + u_beta * y[u_y_off + i];
        return;
    }
    for (uint c = 0u; c < u_n - first; c++) {
        float ax = u_alpha * x[u_x_off + i][c];
        y[u_y_off + i][c] = u_beta == 0.0 ? ax : ax + u_beta * y[u_y_off + i][c];
    }
#else
    if (i < u_n) {
        float ax = u_alpha * x[u_x_off + i];
        y[u_y_off + i] = u_beta == 0.0 ? ax : ax + u_beta * y[u_y_off + i];
    }
#endif
}

#version 430
// out[i] = u_value. TGL_VEC4 as in unary.comp.
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
layout(std430, binding = 0) writeonly buffer Dst { ELEM y[]; };
layout(location = 0) uniform uint u_n;
layout(location = 1) uniform uint u_y_off;
layout(location = 8) uniform float u_value;

void main()
{
    uint i = tgl_global_index();
#ifdef TGL_VEC4
    // u_n counts vec4s here: the host sends a tail of 1..3 elements to the scalar variant
    if (i >= u_n)
        return;
    y[u_y_off + i] = vec4(u_value);
#else
    if (i < u_n)
        y[u_y_off + i] = u_value;
#endif
}

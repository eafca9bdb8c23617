#version 430
// out[i] = a[i] op b[i]. One define picks the op (OP_ADD ... OP_POW); TGL_VEC4 as in unary.comp.
#extension GL_GOOGLE_include_directive : enable
#ifndef TGL_WG_SIZE
#define TGL_WG_SIZE 64
#endif
#include "common/index.glsl"
#include "common/math.glsl"

#if defined(OP_ADD)
#define BINARY(a, b) ((a) + (b))
#elif defined(OP_SUB)
#define BINARY(a, b) ((a) - (b))
#elif defined(OP_MUL)
#define BINARY(a, b) ((a) * (b))
#elif defined(OP_DIV)
#define BINARY(a, b) ((a) / (b))
#elif defined(OP_MAX)
#define BINARY(a, b) tgl_max(a, b)
#elif defined(OP_MIN)
#define BINARY(a, b) tgl_min(a, b)
#elif defined(OP_POW)
#define BINARY(a, b) tgl_pow(a, b)
#else
#define BINARY(a, b) (a) // no op chosen: only for standalone validation of this file
#endif

#ifdef TGL_VEC4
#define ELEM vec4
#else
#define ELEM float
#endif

layout(local_size_x = TGL_WG_SIZE) in;
layout(std430, binding = 0) readonly buffer SrcA { ELEM a[]; };
layout(std430, binding = 1) readonly buffer SrcB { ELEM b[]; };
layout(std430, binding = 2) writeonly buffer Dst { ELEM y[]; };
layout(location = 0) uniform uint u_n;
layout(location = 1) uniform uint u_a_off;
layout(location = 2) uniform uint u_b_off;
layout(location = 3) uniform uint u_y_off;

void main()
{
    uint i = tgl_global_index();
#ifdef TGL_VEC4
    // u_n counts vec4s here: the host sends a tail of 1..3 elements to the scalar variant
    if (i >= u_n)
        return;
    y[u_y_off + i] = BINARY(a[u_a_off + i], b[u_b_off + i]);
#else
    if (i < u_n)
        y[u_y_off + i] = BINARY(a[u_a_off + i], b[u_b_off + i]);
#endif
}

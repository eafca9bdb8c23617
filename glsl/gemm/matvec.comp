#version 430
// y = W x for a dense row-major W (rows x u_cols). ROW_PER_INVOCATION: each invocation sums
// one row on its own, with no barrier (llvmpipe, where a barrier switches every coroutine of
// the group); otherwise one workgroup per row, strided over the columns, then a tree sum.
// VEC4: u_cols and the window offsets are multiples of 4, so W and x load as vec4s.
#extension GL_GOOGLE_include_directive : enable
#ifndef TGL_WG_SIZE
#define TGL_WG_SIZE 64
#endif
#include "common/index.glsl"
#ifndef ROW_PER_INVOCATION
#include "common/group.glsl"
#endif

layout(local_size_x = TGL_WG_SIZE) in;
#ifdef VEC4
layout(std430, binding = 0) readonly buffer MatW { vec4 w[]; };
layout(std430, binding = 1) readonly buffer VecX { vec4 x[]; };
#else
layout(std430, binding = 0) readonly buffer MatW { float w[]; };
layout(std430, binding = 1) readonly buffer VecX { float x[]; };
#endif
layout(std430, binding = 2) writeonly buffer VecY { float y[]; };
layout(location = 0) uniform uint u_rows;
layout(location = 1) uniform uint u_cols;
layout(location = 2) uniform uint u_w_off; // in elements (a multiple of 4 with VEC4)
layout(location = 3) uniform uint u_x_off;
layout(location = 4) uniform uint u_y_off;

#ifdef VEC4
#define TGL_DOT(wi, xi) dot(w[(wi) >> 2u], x[(xi) >> 2u])
#define TGL_STEP 4u
#else
#define TGL_DOT(wi, xi) (w[wi] * x[xi])
#define TGL_STEP 1u
#endif

void main()
{
#ifdef ROW_PER_INVOCATION
    uint row = tgl_global_index();
    if (row >= u_rows)
        return;
    uint wr = u_w_off + row * u_cols;
    float s = 0.0;
    for (uint c = 0u; c < u_cols; c += TGL_STEP)
        s += TGL_DOT(wr + c, u_x_off + c);
    y[u_y_off + row] = s;
#else
    uint row = tgl_group_index();
    if (row >= u_rows)
        return; // uniform across the workgroup
    uint wr = u_w_off + row * u_cols;
    float s = 0.0;
    for (uint c = gl_LocalInvocationIndex * TGL_STEP; c < u_cols; c += uint(TGL_WG_SIZE) * TGL_STEP)
        s += TGL_DOT(wr + c, u_x_off + c);
    s = tgl_group_sum(s);
    if (gl_LocalInvocationIndex == 0u)
        y[u_y_off + row] = s;
#endif
}

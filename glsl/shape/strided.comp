#version 430
// Strided gather, one output element per invocation: output element u_start + i (row-major over
// u_shape) has coordinates c; it reads a[sum c_d * u_a_stride[d]] (and b likewise) and writes
// BINARY(a, b), or a alone with COPY. A stride of 0 broadcasts. Serves tgl_binary_broadcast
// (OP_* defines) and tgl_permute (COPY).
#extension GL_GOOGLE_include_directive : enable
#ifndef TGL_WG_SIZE
#define TGL_WG_SIZE 64
#endif
#include "common/index.glsl"
#include "common/math.glsl"
#ifndef COPY
#include "common/binary_ops.glsl"
#endif

layout(local_size_x = TGL_WG_SIZE) in;
layout(std430, binding = 0) readonly buffer SrcA { float a[]; };
#ifndef COPY
layout(std430, binding = 1) readonly buffer SrcB { float b[]; };
#endif
layout(std430, binding = 2) writeonly buffer Dst { float y[]; };
layout(location = 0) uniform uint u_n;
layout(location = 1) uniform uint u_start;
layout(location = 2) uniform uint u_ndim;
layout(location = 3) uniform uint u_a_off;
layout(location = 4) uniform uint u_b_off;
layout(location = 5) uniform uint u_y_off;
layout(location = 8) uniform uint u_shape[8];
layout(location = 16) uniform uint u_a_stride[8];
#ifndef COPY
layout(location = 24) uniform uint u_b_stride[8];
#endif

void main()
{
    uint i = tgl_global_index();
    if (i >= u_n)
        return;
    uint rest = u_start + i, ia = 0u;
#ifndef COPY
    uint ib = 0u;
#endif
    for (int d = int(u_ndim) - 1; d >= 0; d--) {
        uint c = rest % u_shape[d];
        rest /= u_shape[d];
        ia += c * u_a_stride[d];
#ifndef COPY
        ib += c * u_b_stride[d];
#endif
    }
#ifdef COPY
    y[u_y_off + i] = a[u_a_off + ia];
#else
    y[u_y_off + i] = BINARY(a[u_a_off + ia], b[u_b_off + ib]);
#endif
}

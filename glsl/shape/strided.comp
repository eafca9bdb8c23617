#version 430
// Strided gather, one output element per invocation: output element u_start + i (row-major over
// u_shape) has coordinates c; it reads a[sum c_d * u_a_stride[d]] (and b likewise) and writes
// BINARY(a, b), or a alone with COPY. A stride of 0 broadcasts. Serves tgl_binary_broadcast
// (OP_* defines) and tgl_permute (COPY).
// ROWS: a 2-D grid, x over the last dimension, y over the rows (u_start counts rows): only the
// row index is split into coordinates, from the workgroup id, the same for a whole group, so
// llvmpipe divides once per group instead of once per element and dimension.
// BOX: operands larger than the SSBO block limit; the host runs boxes of the index space whose
// windows fit, and u_shape is the box's extents: the output is written through u_y_stride too
// (a box's outputs are not contiguous in general).
#extension GL_GOOGLE_include_directive : enable
#ifndef TGL_WG_SIZE
#define TGL_WG_SIZE 64
#endif
#include "common/index.glsl"
#include "common/math.glsl"
#include "common/texel.glsl"
#ifndef COPY
#include "common/binary_ops.glsl"
#endif

#include "common/local_size.glsl"
// TGL_TEX: the inputs through buffer textures (common/texel.glsl), for llvmpipe.
#ifdef TGL_TEX
layout(location = 60, binding = 0) uniform highp samplerBuffer a_tex;
#define A_AT(i) TGL_READ(a_tex, i)
#else
layout(std430, binding = 0) readonly buffer SrcA { float a[]; };
#define A_AT(i) a[i]
#endif
#ifndef COPY
#ifdef TGL_TEX
layout(location = 61, binding = 1) uniform highp samplerBuffer b_tex;
#define B_AT(i) TGL_READ(b_tex, i)
#else
layout(std430, binding = 1) readonly buffer SrcB { float b[]; };
#define B_AT(i) b[i]
#endif
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
#ifdef BOX
layout(location = 32) uniform uint u_y_stride[8];
#define Y_INDEX iy
#else
#define Y_INDEX i
#endif

void main()
{
#ifdef ROWS
    uint last = u_ndim - 1u, inner = u_shape[last], x = gl_GlobalInvocationID.x;
    if (x >= inner)
        return;
    uint i = gl_WorkGroupID.y * inner + x, rest = u_start + gl_WorkGroupID.y;
    uint ia = x * u_a_stride[last];
#ifndef COPY
    uint ib = x * u_b_stride[last];
#endif
#ifdef BOX
    uint iy = x * u_y_stride[last];
#endif
    for (int d = int(last) - 1; d >= 0; d--) {
#else
    uint i = tgl_global_index();
    if (i >= u_n)
        return;
    uint rest = u_start + i, ia = 0u;
#ifndef COPY
    uint ib = 0u;
#endif
#ifdef BOX
    uint iy = 0u;
#endif
    for (int d = int(u_ndim) - 1; d >= 0; d--) {
#endif
        uint c = rest % u_shape[d];
        rest /= u_shape[d];
        ia += c * u_a_stride[d];
#ifndef COPY
        ib += c * u_b_stride[d];
#endif
#ifdef BOX
        iy += c * u_y_stride[d];
#endif
    }
#ifdef COPY
    y[u_y_off + Y_INDEX] = A_AT(u_a_off + ia);
#else
    y[u_y_off + Y_INDEX] = BINARY(A_AT(u_a_off + ia), B_AT(u_b_off + ib));
#endif
}

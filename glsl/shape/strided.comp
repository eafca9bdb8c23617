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
// VEC (with ROWS): rows of whole vec4s at a 16-byte-aligned output; each invocation writes one
// vec4 of a row, so a row-bias add or a permute that keeps the last axis moves vec4s. An input
// with A_RUN (B_RUN) is contiguous along the row and every row starts 16-byte aligned: one
// RGBA32F texel with TGL_TEX (llvmpipe), one vec4 of a vec4 array without (GPUs); otherwise
// four floats at its stride (the same one four times for a stride of 0). Compile-time choices,
// as llvmpipe runs both arms of a branch on a uniform (a row-bias add of 1024 x 1024: 2.0 ms
// with the choice in a uniform, 0.9 without).
// Coordinates: a row index splits into one coordinate per axis, outermost last; the outermost
// needs no division (llvmpipe divides lane by lane), so 2-D operands divide nowhere.
#extension GL_GOOGLE_include_directive : enable
#include "common/locations.glsl"
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
layout(location = LOC_TEXTURE0, binding = 0) uniform highp samplerBuffer a_tex;
#define A_AT(i) TGL_READ(a_tex, i)
#elif defined(VEC) && defined(A_RUN)
layout(std430, binding = 0) readonly buffer SrcA { vec4 a4[]; };
#else
layout(std430, binding = 0) readonly buffer SrcA { float a[]; };
#define A_AT(i) a[i]
#endif
#ifndef COPY
#ifdef TGL_TEX
layout(location = LOC_TEXTURE1, binding = 1) uniform highp samplerBuffer b_tex;
#define B_AT(i) TGL_READ(b_tex, i)
#elif defined(VEC) && defined(B_RUN)
layout(std430, binding = 1) readonly buffer SrcB { vec4 b4[]; };
#else
layout(std430, binding = 1) readonly buffer SrcB { float b[]; };
#define B_AT(i) b[i]
#endif
#endif
#ifdef VEC
#include "common/wide_store.glsl"
#ifdef TGL_WIDE
layout(std430, binding = 2) writeonly buffer Dst { dvec4 y8[]; };
#else
layout(std430, binding = 2) writeonly buffer Dst { vec4 y4[]; };
#endif
#else
layout(std430, binding = 2) writeonly buffer Dst { float y[]; };
#endif
layout(location = LOC_STRIDED_N) uniform uint u_n;
layout(location = LOC_STRIDED_START) uniform uint u_start;
layout(location = LOC_STRIDED_NDIM) uniform uint u_ndim;
layout(location = LOC_STRIDED_A_OFF) uniform uint u_a_off;
layout(location = LOC_STRIDED_B_OFF) uniform uint u_b_off;
layout(location = LOC_STRIDED_Y_OFF) uniform uint u_y_off;
#ifdef VEC
// The last axis's extent and strides as plain uniforms: llvmpipe indexes a uniform array with a
// run-time index lane by lane (a row-bias add of 1024 x 1024, best of 15: 1.35-1.43 -> 1.19-1.26 ms).
layout(location = LOC_STRIDED_INNER) uniform uint u_inner;
layout(location = LOC_STRIDED_A_STEP) uniform uint u_a_step;
layout(location = LOC_STRIDED_B_STEP) uniform uint u_b_step;

#ifdef TGL_TEX
// The four elements from element i on at the given stride.
vec4 fetch4(highp samplerBuffer t, uint i, uint stride)
{
    return vec4(texelFetch(t, int(i)).x, texelFetch(t, int(i + stride)).x, texelFetch(t, int(i + 2u * stride)).x,
                texelFetch(t, int(i + 3u * stride)).x);
}
#ifdef A_RUN
#define A_VEC(i) texelFetch(a_tex, int((i) / 4u))
#else
#define A_VEC(i) fetch4(a_tex, i, u_a_step)
#endif
#ifdef B_RUN
#define B_VEC(i) texelFetch(b_tex, int((i) / 4u))
#else
#define B_VEC(i) fetch4(b_tex, i, u_b_step)
#endif
#else // storage buffers (GPUs): a run as a vec4 array, otherwise four floats at the stride
#define FETCH4(arr, i, stride) vec4(arr[i], arr[(i) + (stride)], arr[(i) + 2u * (stride)], arr[(i) + 3u * (stride)])
#ifdef A_RUN
#define A_VEC(i) a4[(i) / 4u]
#else
#define A_VEC(i) FETCH4(a, i, u_a_step)
#endif
#ifdef B_RUN
#define B_VEC(i) b4[(i) / 4u]
#else
#define B_VEC(i) FETCH4(b, i, u_b_step)
#endif
#endif
#endif
layout(location = LOC_STRIDED_SHAPE) uniform uint u_shape[8];
layout(location = LOC_STRIDED_A_STRIDE) uniform uint u_a_stride[8];
#ifndef COPY
layout(location = LOC_STRIDED_B_STRIDE) uniform uint u_b_stride[8];
#endif
#ifdef BOX
layout(location = LOC_STRIDED_Y_STRIDE) uniform uint u_y_stride[8];
#define Y_INDEX iy
#else
#define Y_INDEX i
#endif

void main()
{
#ifdef VEC
    // TGL_WIDE (desktop GL): each invocation writes two vec4s of the row as one dvec4
    // (common/wide_store.glsl); the host asks for rows of whole pairs at a 32-byte-aligned output.
#ifdef TGL_WIDE
#define PER 8u
#else
#define PER 4u
#endif
    uint last = u_ndim - 1u, inner = u_inner, x = gl_GlobalInvocationID.x;
    if (x >= inner / PER)
        return;
    uint rest = u_start + gl_WorkGroupID.y;
    uint ia = PER * x * u_a_step;
#ifndef COPY
    uint ib = PER * x * u_b_step;
#endif
    for (int d = int(last) - 1; d > 0; d--) {
        uint c = rest % u_shape[d];
        rest /= u_shape[d];
        ia += c * u_a_stride[d];
#ifndef COPY
        ib += c * u_b_stride[d];
#endif
    }
    // rest is now the outermost coordinate (0 when the operand is 1-D: one row, u_start 0)
    ia += rest * u_a_stride[0];
#ifndef COPY
    ib += rest * u_b_stride[0];
#endif
    uint iy = (u_y_off + gl_WorkGroupID.y * inner) / PER + x;
#ifdef COPY
#define VALUE(k) A_VEC(u_a_off + ia + (k) * u_a_step)
#else
#define VALUE(k) BINARY(A_VEC(u_a_off + ia + (k) * u_a_step), B_VEC(u_b_off + ib + (k) * u_b_step))
#endif
#ifdef TGL_WIDE
    y8[iy] = tgl_wide(VALUE(0u), VALUE(4u));
#else
    y4[iy] = VALUE(0u);
#endif
#else
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
    for (int d = int(last) - 1; d > 0; d--) {
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
    for (int d = int(u_ndim) - 1; d > 0; d--) {
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
    // rest is now the outermost coordinate (for ROWS over a 1-D operand 0: one row, u_start 0)
    ia += rest * u_a_stride[0];
#ifndef COPY
    ib += rest * u_b_stride[0];
#endif
#ifdef BOX
    iy += rest * u_y_stride[0];
#endif
#ifdef COPY
    y[u_y_off + Y_INDEX] = A_AT(u_a_off + ia);
#else
    y[u_y_off + Y_INDEX] = BINARY(A_AT(u_a_off + ia), B_AT(u_b_off + ib));
#endif
#endif // VEC
}

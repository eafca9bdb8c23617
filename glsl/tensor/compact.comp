#version 430
// The placement pass of tgl_masked_select (SELECT) and tgl_nonzero (NONZERO): an invocation per
// element of the index space (u_ndim dims of u_shape, row-major index u_start + i of the whole),
// of which the host binds a run whose windows fit: each operand's window starts at the run's
// bounding box, whose origin u_lo the coordinates are taken from (strides two's complement, sums
// wrapping to the right offset). An element is taken where its flag is: SELECT's bool mask
// (any non-zero byte), NONZERO's in of dtype DTYPE (a number other than +-0, NaN too: read from
// the bits, so a device that flushes subnormals changes nothing). A taken element's place is
// k = prefix - 1, prefix the core's inclusive count of taken elements at its index (dense i32s:
// u_prefix_base + the whole index, wrapping). Out's window holds the places [u_pos_lo,
// u_pos_lo + u_pos_len): an element placed outside it is left to another dispatch. SELECT
// writes in's element (DTYPE, bits as they are; bool 0 or 1) at out element k * u_out_step;
// NONZERO writes the coordinates as i32s at row k (u_out_step) and column d (u_out_col). An out
// element below 4 bytes is written by atomicAnd then atomicOr on its word, so invocations that
// write the other elements of the word keep theirs.
#extension GL_GOOGLE_include_directive : enable
#include "common/locations.glsl"
#ifndef TGL_WG_SIZE
#define TGL_WG_SIZE 64
#endif
#include "common/index.glsl"
#include "common/local_size.glsl"

// Standalone (the file as written, without the host's defines): f32 masked_select.
#ifndef DTYPE
#define DTYPE 0
#endif
#if !defined(NONZERO) && !defined(SELECT)
#define SELECT
#endif
#if DTYPE == 0 || DTYPE == 3
#define BYTES 4
#elif DTYPE == 4
#define BYTES 1
#else
#define BYTES 2
#endif

#define LOAD_4(arr, e) arr[e]
#define LOAD_2(arr, e) ((arr[(e) >> 1] >> (16u * ((e) & 1u))) & 0xFFFFu)
#define LOAD_1(arr, e) ((arr[(e) >> 2] >> (8u * ((e) & 3u))) & 0xFFu)
#if BYTES == 4
#define LOAD_DATA(arr, e) LOAD_4(arr, e)
#elif BYTES == 2
#define LOAD_DATA(arr, e) LOAD_2(arr, e)
#else
#define LOAD_DATA(arr, e) LOAD_1(arr, e)
#endif

layout(std430, binding = 0) readonly buffer Flag { uint fl[]; };
layout(std430, binding = 1) readonly buffer Prefix { uint pre[]; };
layout(std430, binding = 2) buffer Out { uint y[]; };
#ifdef SELECT
layout(std430, binding = 3) readonly buffer Val { uint va[]; };
#endif
layout(location = LOC_CMP_N) uniform uint u_n;
layout(location = LOC_CMP_START) uniform uint u_start;
layout(location = LOC_CMP_NDIM) uniform uint u_ndim;
layout(location = LOC_CMP_FLAG_BASE) uniform uint u_flag_base;
layout(location = LOC_CMP_VAL_BASE) uniform uint u_val_base;
layout(location = LOC_CMP_PREFIX_BASE) uniform uint u_prefix_base;
layout(location = LOC_CMP_OUT_BASE) uniform uint u_out_base;
layout(location = LOC_CMP_OUT_STEP) uniform uint u_out_step;
layout(location = LOC_CMP_OUT_COL) uniform uint u_out_col;
layout(location = LOC_CMP_POS_LO) uniform uint u_pos_lo;
layout(location = LOC_CMP_POS_LEN) uniform uint u_pos_len;
layout(location = LOC_CMP_SHAPE) uniform uint u_shape[8];
layout(location = LOC_CMP_LO) uniform uint u_lo[8];
layout(location = LOC_CMP_FLAG_STRIDE) uniform uint u_flag_stride[8];
layout(location = LOC_CMP_VAL_STRIDE) uniform uint u_val_stride[8];

void main()
{
    uint i = tgl_global_index();
    if (i >= u_n)
        return;
    uint g = u_start + i;
    // the flag's (and the value's) offset from the coordinates, innermost dim first
    uint rest = g, f = u_flag_base, v = u_val_base;
    for (int d = int(u_ndim) - 1; d >= 0; d--) {
        uint c = rest % u_shape[d] - u_lo[d];
        rest /= u_shape[d];
        f += c * u_flag_stride[d];
        v += c * u_val_stride[d];
    }
#ifdef NONZERO
    uint bits = LOAD_DATA(fl, f);
#if DTYPE == 0
    bits &= 0x7FFFFFFFu;
#elif DTYPE == 1 || DTYPE == 2
    bits &= 0x7FFFu;
#endif
#else
    uint bits = LOAD_1(fl, f);
#endif
    if (bits == 0u)
        return;
    uint k = pre[u_prefix_base + g] - 1u - u_pos_lo; // the place in out's window
    if (k >= u_pos_len)
        return;
    uint at = u_out_base + k * u_out_step;
#ifdef NONZERO
    rest = g;
    for (int d = int(u_ndim) - 1; d >= 0; d--) {
        y[at + uint(d) * u_out_col] = rest % u_shape[d];
        rest /= u_shape[d];
    }
#else
    uint x = LOAD_DATA(va, v);
#if DTYPE == 4
    x = x != 0u ? 1u : 0u;
#endif
#if BYTES == 4
    y[at] = x;
#else
    const uint per = uint(4 / BYTES), mask = (1u << uint(8 * BYTES)) - 1u;
    uint shift = uint(8 * BYTES) * (at % per);
    atomicAnd(y[at / per], ~(mask << shift));
    atomicOr(y[at / per], x << shift);
#endif
#endif
}

#version 430
// y = W x for a dense row-major W (rows x u_cols). ROW_PER_INVOCATION: each invocation sums
// one row on its own, with no barrier (llvmpipe, where a barrier switches every coroutine of
// the group); otherwise one workgroup per row, strided over the columns, then a tree sum.
// VEC4: u_cols and the window offsets are multiples of 4, so W and x load as vec4s. TEX: W
// and x are read through buffer textures over the same ranges (units 0 and 1; RGBA32F with
// VEC4, else R32F), which llvmpipe gathers where it loops over SIMD lanes for SSBO loads.
// EPILOGUE (tgl_matvec_t_fused on such profiles): y = tgl_gemm_fused's epilogue of alpha * the
// sum (common/epilogue.glsl), y read where it says, the bias indexed by the row.
#extension GL_GOOGLE_include_directive : enable
#include "common/locations.glsl"
#ifndef TGL_WG_SIZE
#define TGL_WG_SIZE 64
#endif
#include "common/index.glsl"
#ifndef ROW_PER_INVOCATION
#include "common/group.glsl"
#endif

#include "common/local_size.glsl"
#ifdef TEX
layout(location = LOC_TEXTURE0, binding = 0) uniform highp samplerBuffer w_tex;
layout(location = LOC_TEXTURE1, binding = 1) uniform highp samplerBuffer x_tex;
#elif defined(VEC4)
layout(std430, binding = 0) readonly buffer MatW { vec4 w[]; };
layout(std430, binding = 1) readonly buffer VecX { vec4 x[]; };
#else
layout(std430, binding = 0) readonly buffer MatW { float w[]; };
layout(std430, binding = 1) readonly buffer VecX { float x[]; };
#endif
layout(location = LOC_MV_ROWS) uniform uint u_rows;
layout(location = LOC_MV_COLS) uniform uint u_cols;
layout(location = LOC_MV_W_OFF) uniform uint u_w_off; // in elements (a multiple of 4 with VEC4)
layout(location = LOC_MV_X_OFF) uniform uint u_x_off;
layout(location = LOC_MV_Y_OFF) uniform uint u_y_off;
#include "common/matvec_store.glsl"

// TGL_W / TGL_X load 4 elements (VEC4) or 1 at an element index.
#if defined(TEX) && defined(VEC4)
#define TGL_W(i) texelFetch(w_tex, int((i) >> 2u))
#define TGL_X(i) texelFetch(x_tex, int((i) >> 2u))
#elif defined(TEX)
#define TGL_W(i) texelFetch(w_tex, int(i)).x
#define TGL_X(i) texelFetch(x_tex, int(i)).x
#elif defined(VEC4)
#define TGL_W(i) w[(i) >> 2u]
#define TGL_X(i) x[(i) >> 2u]
#else
#define TGL_W(i) w[i]
#define TGL_X(i) x[i]
#endif
#ifdef VEC4
#define TGL_DOT(wi, xi) dot(TGL_W(wi), TGL_X(xi))
#define TGL_STEP 4u
#else
#define TGL_DOT(wi, xi) (TGL_W(wi) * TGL_X(xi))
#define TGL_STEP 1u
#endif

void main()
{
#ifdef ROW_PER_INVOCATION
    // One row per invocation (sharing x between 4 rows measured slower: 11-12 against 14 GB/s
    // on 4096x4096, each SIMD group then streaming 32 rows at once).
    uint row = tgl_global_index();
    if (row >= u_rows)
        return;
    uint wr = u_w_off + row * u_cols, c = 0u;
    // Two chains, so consecutive loads overlap; four steps per loop trip while they fit (then
    // two, then one): llvmpipe pays its loop's mask and exit test per trip. 4096x4096, best of
    // 15, five alternated runs: 4.04-4.23 ms with two steps, 3.62-3.91 with four.
    float s = 0.0, s2 = 0.0;
    for (; c + 3u * TGL_STEP < u_cols; c += 4u * TGL_STEP) {
        s += TGL_DOT(wr + c, u_x_off + c) + TGL_DOT(wr + c + 2u * TGL_STEP, u_x_off + c + 2u * TGL_STEP);
        s2 += TGL_DOT(wr + c + TGL_STEP, u_x_off + c + TGL_STEP) + TGL_DOT(wr + c + 3u * TGL_STEP, u_x_off + c + 3u * TGL_STEP);
    }
    for (; c + TGL_STEP < u_cols; c += 2u * TGL_STEP) {
        s += TGL_DOT(wr + c, u_x_off + c);
        s2 += TGL_DOT(wr + c + TGL_STEP, u_x_off + c + TGL_STEP);
    }
    if (c < u_cols)
        s += TGL_DOT(wr + c, u_x_off + c);
    store(row, s + s2);
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
        store(row, s);
#endif
}

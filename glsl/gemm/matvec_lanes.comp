#version 450
// y = W x for a dense row-major W (u_rows x u_cols, u_cols a multiple of 4, both windows on
// whole vec4s), for llvmpipe: a SIMD vector of LANES invocations (one subgroup there) shares
// RPS rows, invocation `lane` summing the vec4s lane, lane + LANES, ... of each of them. So the
// lanes of one texel fetch of W read one run of LANES neighbouring vec4s, and each fetch of x
// serves RPS rows, where matvec.comp's row per invocation fetches x again for every vec4 of W
// (and every lane the same texel). The rows' sums meet across the lanes by readInvocationARB: the
// host makes LANES llvmpipe's SIMD width, its subgroup size; no barrier (llvmpipe pays for one by
// switching coroutines). A workgroup takes GROUPS such vectors (llvmpipe pays a cost per
// workgroup). GLSL 4.50: glslang declares ARB_shader_ballot's functions from there on.
// EPILOGUE: as matvec.comp's (common/matvec_store.glsl).
#extension GL_GOOGLE_include_directive : enable
#include "common/locations.glsl"
#extension GL_ARB_shader_ballot : require
#ifndef LANES
#define LANES 8
#define RPS 4
#define GROUPS 8
#endif
#ifndef TGL_WG_SIZE // the host defines it (gl_source.c); for standalone validation
#define TGL_WG_SIZE (LANES * GROUPS)
#endif
#if RPS > LANES
#error "RPS: at most LANES rows, one lane writing each"
#endif
#include "common/index.glsl"
#include "common/unroll.glsl"

layout(local_size_x = LANES * GROUPS) in;
layout(location = LOC_TEXTURE0, binding = 0) uniform highp samplerBuffer w_tex;
layout(location = LOC_TEXTURE1, binding = 1) uniform highp samplerBuffer x_tex;
layout(location = LOC_MV_ROWS) uniform uint u_rows;
layout(location = LOC_MV_COLS) uniform uint u_cols;
layout(location = LOC_MV_W_OFF) uniform uint u_w_off; // in elements, multiples of 4
layout(location = LOC_MV_X_OFF) uniform uint u_x_off;
layout(location = LOC_MV_Y_OFF) uniform uint u_y_off;
#include "common/matvec_store.glsl"

void main()
{
    uint lane = gl_LocalInvocationIndex % uint(LANES);
    uint row0 = (tgl_group_index() * uint(GROUPS) + gl_LocalInvocationIndex / uint(LANES)) * uint(RPS);
    if (row0 >= u_rows)
        return; // uniform across the vector, and no barrier follows
    uint cols4 = u_cols / 4u, x0 = u_x_off / 4u;
    uint wr[RPS];
    vec4 acc[RPS];
    TGL_UNROLL for (int k = 0; k < RPS; k++) {
        wr[k] = u_w_off / 4u + min(row0 + uint(k), u_rows - 1u) * cols4; // rows past the end: the last again
        acc[k] = vec4(0.0);
    }
    for (uint c = lane; c < cols4; c += uint(LANES)) {
        vec4 xv = texelFetch(x_tex, int(x0 + c));
        TGL_UNROLL for (int k = 0; k < RPS; k++)
            acc[k] += texelFetch(w_tex, int(wr[k] + c)) * xv;
    }
    float mine = 0.0; // lane k's: row k's total, stored once (the epilogue's code appears once)
    TGL_UNROLL for (int k = 0; k < RPS; k++) {
        float s = (acc[k].x + acc[k].y) + (acc[k].z + acc[k].w), total = 0.0;
        TGL_UNROLL for (int i = 0; i < LANES; i++)
            total += readInvocationARB(s, uint(i));
        if (lane == uint(k))
            mine = total;
    }
    if (lane < uint(RPS) && row0 + lane < u_rows)
        store(row0 + lane, mine);
}

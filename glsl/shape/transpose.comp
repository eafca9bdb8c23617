#version 430
// Permutes that move the input's contiguous axis away from the output's last one: output axis P
// has input stride 1, the last output axis L has input stride u_a_l. The strided gather
// (strided.comp) would read the input u_a_l elements apart for neighbouring outputs (at 4096 x
// 4096, a new cache line and page each); here a tile of the (P, L) plane is read along P and
// written along L, so both sides move runs of neighbouring elements. The other output axes
// (at most 6, innermost first in the u_rest_* arrays) are decoded once per workgroup from
// gl_WorkGroupID.z + u_z_start.
// Default (GPUs): a 32 x 32 tile staged in shared memory by 32 x 8 invocations; any extents.
// BLOCK4 (llvmpipe, with TGL_TEX): no shared memory and no barrier (llvmpipe switches all of a
// group's coroutines at each one); each invocation moves a 4 x 4 block: four RGBA32F texels
// along P, stored as four vec4s along L (4 x 8 and dvec4s with TGL_WIDE, below). The host asks
// for extents of P and L that are multiples of 4 and for both windows' data to start 16-byte
// aligned, so every index below is a whole vec4.
#extension GL_GOOGLE_include_directive : enable
#include "common/locations.glsl"
#include "common/texel.glsl"

#ifdef BLOCK4
// 8 x 8 invocations per workgroup, x along P: neighbouring lanes read neighbouring texels of the
// same input rows (their stores go to different output rows, but llvmpipe stores lane by lane
// anyway), and a workgroup's reads and writes stay within 32 rows each (rows are pages apart at
// large extents). 4096 x 4096 on llvmpipe: 19 ms; x along L 39 ms; 16 x 4, 32 x 2 and 64 x 1
// groups 22-24 ms, 8 x 4 21, 8 x 16 19 (docs/performance.md).
layout(local_size_x = 8, local_size_y = 8) in;
layout(location = LOC_TEXTURE0, binding = 0) uniform highp samplerBuffer a_tex;
#include "common/wide_store.glsl"
// TGL_WIDE (desktop GL): 4 x 8 blocks, each row's eight elements stored as one dvec4; the host
// asks for L a multiple of 8 and the output 32-byte aligned in its window.
#ifdef TGL_WIDE
#define BLOCK_L 8u
layout(std430, binding = 2) writeonly buffer Dst { dvec4 y8[]; };
#else
#define BLOCK_L 4u
layout(std430, binding = 2) writeonly buffer Dst { vec4 y4[]; };
#endif
#else
#define TILE 32u
#define ROWS_PER_PASS 8u
layout(local_size_x = 32, local_size_y = 8) in;
layout(std430, binding = 0) readonly buffer Src { float a[]; };
layout(std430, binding = 2) writeonly buffer Dst { float y[]; };
// One column of padding: the transposed reads of a column hit 32 different banks.
shared float tile[TILE][TILE + 1u];
#endif

layout(location = LOC_TR_EXT_P) uniform uint u_ext_p;
layout(location = LOC_TR_EXT_L) uniform uint u_ext_l;
layout(location = LOC_TR_A_L) uniform uint u_a_l;   // input stride of L
layout(location = LOC_TR_Y_P) uniform uint u_y_p;   // output stride of P
layout(location = LOC_TR_A_OFF) uniform uint u_a_off; // where the input starts in its window (elements)
layout(location = LOC_TR_Y_OFF) uniform uint u_y_off; // ... the output in its window
layout(location = LOC_TR_NREST) uniform uint u_nrest;
layout(location = LOC_TR_Z_START) uniform uint u_z_start;
layout(location = LOC_TR_REST_EXT) uniform uint u_rest_ext[8];
layout(location = LOC_TR_REST_A) uniform uint u_rest_a[8];
layout(location = LOC_TR_REST_Y) uniform uint u_rest_y[8];

void main()
{
    // Where this workgroup's (P, L) plane starts in the input and in the output.
    uint z = u_z_start + gl_WorkGroupID.z, ia = u_a_off, iy = u_y_off;
    for (uint d = 0u; d < u_nrest; d++) {
        uint c = z % u_rest_ext[d];
        z /= u_rest_ext[d];
        ia += c * u_rest_a[d];
        iy += c * u_rest_y[d];
    }
#ifdef BLOCK4
    uint bp = gl_GlobalInvocationID.x, bl = gl_GlobalInvocationID.y; // the block's P (in fours), L
    if (bp >= u_ext_p / 4u || bl >= u_ext_l / BLOCK_L)
        return;
    // Texel j holds elements (P = 4 bp + i, L = BLOCK_L bl + j), i = 0..3.
    int src = int((ia + 4u * bp + BLOCK_L * bl * u_a_l) / 4u), step = int(u_a_l / 4u);
    vec4 r0 = texelFetch(a_tex, src), r1 = texelFetch(a_tex, src + step);
    vec4 r2 = texelFetch(a_tex, src + 2 * step), r3 = texelFetch(a_tex, src + 3 * step);
    uint dst = (iy + 4u * bp * u_y_p + BLOCK_L * bl) / BLOCK_L, row = u_y_p / BLOCK_L;
#ifdef TGL_WIDE
    vec4 r4 = texelFetch(a_tex, src + 4 * step), r5 = texelFetch(a_tex, src + 5 * step);
    vec4 r6 = texelFetch(a_tex, src + 6 * step), r7 = texelFetch(a_tex, src + 7 * step);
    y8[dst] = tgl_wide(vec4(r0.x, r1.x, r2.x, r3.x), vec4(r4.x, r5.x, r6.x, r7.x));
    y8[dst + row] = tgl_wide(vec4(r0.y, r1.y, r2.y, r3.y), vec4(r4.y, r5.y, r6.y, r7.y));
    y8[dst + 2u * row] = tgl_wide(vec4(r0.z, r1.z, r2.z, r3.z), vec4(r4.z, r5.z, r6.z, r7.z));
    y8[dst + 3u * row] = tgl_wide(vec4(r0.w, r1.w, r2.w, r3.w), vec4(r4.w, r5.w, r6.w, r7.w));
#else
    y4[dst] = vec4(r0.x, r1.x, r2.x, r3.x);
    y4[dst + row] = vec4(r0.y, r1.y, r2.y, r3.y);
    y4[dst + 2u * row] = vec4(r0.z, r1.z, r2.z, r3.z);
    y4[dst + 3u * row] = vec4(r0.w, r1.w, r2.w, r3.w);
#endif
#else
    uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y;
    uint l0 = gl_WorkGroupID.x * TILE, p0 = gl_WorkGroupID.y * TILE;
    // Read with neighbouring invocations on neighbouring P (contiguous in the input) ...
    uint p = p0 + tx;
    for (uint k = ty; k < TILE; k += ROWS_PER_PASS) {
        uint l = l0 + k;
        if (p < u_ext_p && l < u_ext_l)
            tile[k][tx] = a[ia + p + l * u_a_l];
    }
    memoryBarrierShared();
    barrier();
    // ... and write with them on neighbouring L (contiguous in the output).
    uint l = l0 + tx;
    for (uint k = ty; k < TILE; k += ROWS_PER_PASS) {
        uint q = p0 + k;
        if (q < u_ext_p && l < u_ext_l)
            y[iy + q * u_y_p + l] = tile[tx][k];
    }
#endif
}

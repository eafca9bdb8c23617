#version 430
// y[j, r] = sum_c W[r, c] x[j, c] for a weight W in any weight format (common/weights.glsl,
// WFMT), x and y f32 with any strides (uniform offsets and strides in elements, two's
// complement, so that wrapping sums give the right index). XR rows of x share each weight
// load (u_n <= XR of them in this dispatch). ROW_PER_INVOCATION: each invocation owns one row
// of W (llvmpipe, where a barrier switches every coroutine of the group); LANES: a subgroup
// owns a row, or ROW_SPLIT subgroups share one, its invocations strided over the row's units,
// then shuffles sum them (GPUs with subgroups of LANES; WROWS 4: a subgroup, or ROW_SPLIT,
// takes 4 rows of a q4_0 W, a component of acc each, every load of x serving the 4: unit_rows);
// otherwise a workgroup
// owns a row likewise, then a tree sum in shared memory per row of x. Block formats sum q * x per
// block and scale by the block's d once. EPILOGUE (tgl_matvec_t_fused, and tgl_gemm's thin products):
// y = tgl_gemm_fused's epilogue of alpha * the sum (common/epilogue.glsl), y read where it
// says, the bias indexed by W's row.
#extension GL_GOOGLE_include_directive : enable
#ifndef LANES
#define LANES 0 // a subgroup of LANES invocations per row (0: a workgroup per row)
#endif
#if LANES > 0
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_shuffle : require
#endif
#ifndef ROW_SPLIT
#define ROW_SPLIT 1 // subgroups per row (LANES > 0)
#endif
#ifndef WROWS
#define WROWS 1 // rows of W per subgroup: 1, or 4 (q4_0 on subgroups, one row of x: unit_rows)
#endif
#if WROWS != 1 && WROWS != 4
#error "WROWS is 1 or 4"
#endif
#include "common/locations.glsl"
#ifndef TGL_WG_SIZE
#define TGL_WG_SIZE 64
#endif
#ifndef WFMT
#define WFMT 4
#endif
#ifndef XR
#define XR 1
#endif
#include "common/index.glsl"
#if !defined(ROW_PER_INVOCATION) && LANES == 0
#include "common/group.glsl"
#endif
#include "common/local_size.glsl"

// W's words and x: SSBO loads, or (TGL_TEX, per-invocation rows on llvmpipe) buffer textures over
// the same windows, read with texelFetch or (TGL_IMG) imageLoad, which llvmpipe gathers where
// each SSBO load is a loop over its SIMD lanes. XVEC4: x's columns are contiguous and its
// window offset and row stride multiples of 4, so x loads as vec4s (RGBA32F texels).
// F32X4: an f32 W with WVEC4 is read 4 words a load (RGBA32UI texels, or uvec4s of the SSBO;
// TGL_WQ4 by vec4 index), a quarter of the loads of a word each: on llvmpipe each load is a
// gather over the SIMD lanes, and word loads ran thin f32 products at half tgl_matvec's rate.
#if WFMT == 0 && defined(WVEC4)
#define F32X4
#endif
#ifdef TGL_TEX
#if defined(TGL_IMG) && defined(F32X4)
layout(location = LOC_TEXTURE0, binding = 0, rgba32ui) readonly uniform highp uimageBuffer w_tex;
#define TGL_WQ4(i) imageLoad(w_tex, int(i))
#define TGL_WQ(i) imageLoad(w_tex, int((i) >> 2u))[(i) & 3u]
#elif defined(F32X4)
layout(location = LOC_TEXTURE0, binding = 0) uniform highp usamplerBuffer w_tex;
#define TGL_WQ4(i) texelFetch(w_tex, int(i))
#define TGL_WQ(i) texelFetch(w_tex, int((i) >> 2u))[(i) & 3u]
#endif
#ifdef TGL_IMG
#ifndef F32X4
layout(location = LOC_TEXTURE0, binding = 0, r32ui) readonly uniform highp uimageBuffer w_tex;
#define TGL_WQ(i) imageLoad(w_tex, int(i)).x
#endif
#ifdef XVEC4
layout(location = LOC_TEXTURE1, binding = 1, rgba32f) readonly uniform highp imageBuffer x_tex;
#define X4(i) imageLoad(x_tex, int(i))
#else
layout(location = LOC_TEXTURE1, binding = 1, r32f) readonly uniform highp imageBuffer x_tex;
#define X1(i) imageLoad(x_tex, int(i)).x
#endif
#else
#ifndef F32X4
layout(location = LOC_TEXTURE0, binding = 0) uniform highp usamplerBuffer w_tex;
#define TGL_WQ(i) texelFetch(w_tex, int(i)).x
#endif
layout(location = LOC_TEXTURE1, binding = 1) uniform highp samplerBuffer x_tex;
#ifdef XVEC4
#define X4(i) texelFetch(x_tex, int(i))
#else
#define X1(i) texelFetch(x_tex, int(i)).x
#endif
#endif
#else
#ifdef F32X4
layout(std430, binding = 0) readonly buffer MatW { uvec4 wq4[]; };
#define TGL_WQ4(i) wq4[i]
#define TGL_WQ(i) wq4[(i) >> 2u][(i) & 3u]
#elif (WFMT == 1 || WFMT == 2) && defined(WVEC4)
// A half weight's 4 elements as one 8-byte load (two word loads where W is a word array: the
// compiler cannot see that e / 2 is even).
#define HALF_X4
layout(std430, binding = 0) readonly buffer MatW { uvec2 wq2[]; };
#define TGL_WQ(i) wq2[(i) >> 1u][(i) & 1u]
#else
layout(std430, binding = 0) readonly buffer MatW { uint wq[]; };
#endif
#ifdef XVEC4
layout(std430, binding = 1) readonly buffer MatX { vec4 x_vec4s[]; };
#define X4(i) x_vec4s[i]
#else
layout(std430, binding = 1) readonly buffer MatX { float x_elems[]; };
#define X1(i) x_elems[i]
#endif
#endif
#ifdef EPILOGUE
layout(std430, binding = 2) buffer MatY { float y[]; };
layout(location = LOC_MVW_ALPHA) uniform float u_alpha;
layout(location = LOC_MVW_BETA) uniform float u_beta;
#include "common/math.glsl"
#include "common/epilogue.glsl"
#else
layout(std430, binding = 2) writeonly buffer MatY { float y[]; };
#endif
#include "common/weights.glsl"
#if defined(WVEC4) && WFMT >= TGL_WFMT_Q8_0
#error "WVEC4 is for the float formats"
#endif
#if defined(XVEC4) && WFMT < TGL_WFMT_Q8_0 && !defined(WVEC4)
#error "XVEC4 reads x 4 columns at a time: block formats and WVEC4 only"
#endif

layout(location = LOC_MVW_ROWS) uniform uint u_rows;
layout(location = LOC_MVW_COLS) uniform uint u_cols;
layout(location = LOC_MVW_N) uniform uint u_n;
layout(location = LOC_MVW_W_OFF) uniform uint u_w_off;
layout(location = LOC_MVW_W_RS) uniform uint u_w_rs;
layout(location = LOC_MVW_W_CS) uniform uint u_w_cs;
layout(location = LOC_MVW_X_OFF) uniform uint u_x_off;
layout(location = LOC_MVW_X_RS) uniform uint u_x_rs;
layout(location = LOC_MVW_X_CS) uniform uint u_x_cs;
layout(location = LOC_MVW_Y_OFF) uniform uint u_y_off;
layout(location = LOC_MVW_Y_RS) uniform uint u_y_rs;
layout(location = LOC_MVW_Y_CS) uniform uint u_y_cs;

// A unit of work: where an invocation owns a row, a whole block (its words read once); where
// invocations share a row (SPLIT), words of a block's quants (q4_0 one word, 8 elements; q8_0
// two, 8 elements), so that neighbouring invocations read neighbouring words of W and of x (a
// whole block each made the invocations of a subgroup read x 128 bytes apart: 32 cache lines a
// load, and q4_0 4096 x 11008 ran at 0.16x of the H200's copy bandwidth). H200, 4096 x 11008:
// q8_0 in two-word units 57.7 -> 39.7 us against one-word ones; q4_0 in two-word units 29.9 ->
// 33.1 us, so it keeps one (again with the present loads: q4_0 two words 22.5 -> 29.7 us, q8_0
// four 28.4 -> 32.9). WVEC4: 4 elements of a float weight whose columns are contiguous
// and aligned; else one element.
#if !defined(ROW_PER_INVOCATION)
#define SPLIT
#endif
#if WFMT == TGL_WFMT_Q8_0 && defined(SPLIT)
#define UNIT_LEN 8u
#elif WFMT == TGL_WFMT_Q4_0 && defined(SPLIT)
#define UNIT_LEN 8u
#elif WFMT >= TGL_WFMT_Q8_0
#define UNIT_LEN 32u
#elif defined(WVEC4)
#define UNIT_LEN 4u
#else
#define UNIT_LEN 1u
#endif
#if XR != 1 && XR != 4
#error "XR is 1 or 4"
#endif

// Everything below indexes with constants only (accumulators in a vec4, a block's words in
// named registers): llvmpipe keeps a dynamically indexed array in memory, each access a loop
// over its SIMD lanes (a first version with arrays and loops ran q4_0 1024 x 1024 at 9.7 ms).

// x[j, c..c+3] as a vec4 (c a multiple of 4 with XVEC4, where offsets are in vec4s).
vec4 x4(uint j, uint c)
{
#ifdef XVEC4
    return X4(u_x_off + j * u_x_rs + (c >> 2));
#else
    uint e = u_x_off + j * u_x_rs + c * u_x_cs;
    return vec4(X1(e), X1(e + u_x_cs), X1(e + 2u * u_x_cs), X1(e + 3u * u_x_cs));
#endif
}

// dot(q, x[j, c..c+3]) for the rows j of x this dispatch has, as components of a vec4.
vec4 xdot(vec4 q, uint c)
{
    vec4 r = vec4(dot(q, x4(0u, c)), 0.0, 0.0, 0.0);
#if XR == 4
    if (u_n > 1u)
        r.y = dot(q, x4(1u, c));
    if (u_n > 2u)
        r.z = dot(q, x4(2u, c));
    if (u_n > 3u)
        r.w = dot(q, x4(3u, c));
#endif
    return r;
}

#if WFMT == TGL_WFMT_Q8_0
#define BLOCK_BYTES 34u
#define Q8_STEP(wa, wb, k) part += xdot(tgl_q8_values(tgl_block_quants(wa, wb, half_in)), c + 4u * (k))
#elif WFMT == TGL_WFMT_Q4_0
#define BLOCK_BYTES 18u
#define Q4_STEP(wa, wb, k)                                                           \
    {                                                                                \
        vec4 lo, hi;                                                                 \
        tgl_q4_values(tgl_block_quants(wa, wb, half_in), lo, hi);                    \
        part += xdot(lo, c + 4u * (k)) + xdot(hi, c + 16u + 4u * (k));               \
    }
#endif

// The contribution of unit u of row `row` for each row of x.
vec4 unit_sum(uint row, uint u)
{
#if WFMT >= TGL_WFMT_Q8_0 && defined(SPLIT)
    // The unit's words from the one holding its first byte less two: its quants funnelled from
    // them where the block starts on a word (tgl_block_quants), without a branch, and for the
    // block's first unit the word holding the scale d. With LANES the other units of the block
    // take that word from its invocation by a shuffle (a block's units sit on consecutive
    // invocations, its first on a multiple of `parts`) instead of loading it again.
    uint parts = 32u / UNIT_LEN, blk = u / parts, k = u - blk * parts;
    uint at = u_w_off + row * u_w_rs + blk * BLOCK_BYTES, c = blk * 32u, a = (at + (BLOCK_BYTES - 2u) / parts * k) >> 2u;
    bool half_in = (at & 2u) != 0u;
    uint w0 = TGL_WQ(a), w1 = TGL_WQ(a + 1u);
#if WFMT == TGL_WFMT_Q8_0 // two words: eight quants
    uint w2 = TGL_WQ(a + 2u);
    vec4 part = xdot(tgl_q8_values(tgl_block_quants(w0, w1, half_in)), c + 8u * k) +
                xdot(tgl_q8_values(tgl_block_quants(w1, w2, half_in)), c + 8u * k + 4u);
#else
    vec4 lo, hi;
    tgl_q4_values(tgl_block_quants(w0, w1, half_in), lo, hi);
    vec4 part = xdot(lo, c + 4u * k) + xdot(hi, c + 16u + 4u * k);
#endif
#if LANES > 0
    uint first = subgroupShuffle(w0, gl_SubgroupInvocationID & ~(parts - 1u));
#else
    uint first = TGL_WQ(at >> 2u);
#endif
    return tgl_block_scale(first, half_in) * part;
#elif WFMT >= TGL_WFMT_Q8_0
    uint at = u_w_off + row * u_w_rs + u * BLOCK_BYTES, c = u * 32u, a = at >> 2u;
    bool half_in = (at & 2u) != 0u;
    vec4 part = vec4(0.0);
    uint w0 = TGL_WQ(a), w1 = TGL_WQ(a + 1u), w2 = TGL_WQ(a + 2u), w3 = TGL_WQ(a + 3u), w4 = TGL_WQ(a + 4u);
#if WFMT == TGL_WFMT_Q8_0
    uint w5 = TGL_WQ(a + 5u), w6 = TGL_WQ(a + 6u), w7 = TGL_WQ(a + 7u), w8 = TGL_WQ(a + 8u);
    Q8_STEP(w0, w1, 0u);
    Q8_STEP(w1, w2, 1u);
    Q8_STEP(w2, w3, 2u);
    Q8_STEP(w3, w4, 3u);
    Q8_STEP(w4, w5, 4u);
    Q8_STEP(w5, w6, 5u);
    Q8_STEP(w6, w7, 6u);
    Q8_STEP(w7, w8, 7u);
#else
    Q4_STEP(w0, w1, 0u);
    Q4_STEP(w1, w2, 1u);
    Q4_STEP(w2, w3, 2u);
    Q4_STEP(w3, w4, 3u);
#endif
    return tgl_block_scale(w0, half_in) * part;
#elif defined(F32X4)
    return xdot(uintBitsToFloat(TGL_WQ4(((u_w_off + row * u_w_rs) >> 2u) + u)), 4u * u);
#elif defined(HALF_X4)
    return xdot(tgl_w_half4(wq2[(u_w_off + row * u_w_rs + 4u * u) >> 2u], uint(WFMT)), 4u * u);
#elif defined(WVEC4)
    uint e = u_w_off + row * u_w_rs + 4u * u;
    return xdot(tgl_w_float4(e, uint(WFMT)), 4u * u);
#else
    float w = tgl_w_float(u_w_off + row * u_w_rs + u * u_w_cs, uint(WFMT));
    uint e = u_x_off + u * u_x_cs;
    vec4 xcol = vec4(X1(e), 0.0, 0.0, 0.0);
#if XR == 4
    if (u_n > 1u)
        xcol.y = X1(e + u_x_rs);
    if (u_n > 2u)
        xcol.z = X1(e + 2u * u_x_rs);
    if (u_n > 3u)
        xcol.w = X1(e + 3u * u_x_rs);
#endif
    return w * xcol;
#endif
}

#if WROWS == 4
#if LANES == 0 || XR != 1 || WFMT != TGL_WFMT_Q4_0
#error "WROWS: q4_0 on subgroups, one row of x"
#endif
// One row's part of unit u (a block's word, 8 elements), x's 8 columns given: its quants and
// scale, the block's first word shuffled from the invocation holding it (as unit_sum does).
float row_part(uint row, uint blk, uint k, vec4 xa, vec4 xb)
{
    uint at = u_w_off + row * u_w_rs + blk * BLOCK_BYTES, a = (at + (BLOCK_BYTES - 2u) / 4u * k) >> 2u;
    bool half_in = (at & 2u) != 0u;
    uint w0 = TGL_WQ(a), w1 = TGL_WQ(a + 1u);
    vec4 lo, hi;
    tgl_q4_values(tgl_block_quants(w0, w1, half_in), lo, hi);
    uint first = subgroupShuffle(w0, gl_SubgroupInvocationID & ~3u);
    return tgl_block_scale(first, half_in) * (dot(lo, xa) + dot(hi, xb));
}

// Unit u of 4 rows from `row` (one per component; rows past the end read the last again), x's
// columns loaded once for all of them: a q4_0 row's x loads move 8 times its W's bytes.
vec4 unit_rows(uint row, uint u)
{
    uint blk = u >> 2u, k = u & 3u, c = blk * 32u, last = u_rows - 1u;
    vec4 xa = x4(0u, c + 4u * k), xb = x4(0u, c + 16u + 4u * k);
    return vec4(row_part(row, blk, k, xa, xb), row_part(min(row + 1u, last), blk, k, xa, xb),
                row_part(min(row + 2u, last), blk, k, xa, xb), row_part(min(row + 3u, last), blk, k, xa, xb));
}
#define UNIT(row, u) unit_rows(row, u)
#else
#define UNIT(row, u) unit_sum(row, u)
#endif

void store(uint row, vec4 acc)
{
#ifdef EPILOGUE
    for (uint j = 0u; j < min(u_n, uint(XR)); j++) { // rolled (u_n): the epilogue's code once
        uint at = u_y_off + j * u_y_rs + row * u_y_cs;
        float old = tgl_epilogue_reads(u_beta) ? y[at] : 0.0;
        y[at] = tgl_epilogue(u_alpha * acc[j], old, row, u_beta);
    }
#else
    y[u_y_off + row * u_y_cs] = acc.x;
#if XR == 4
    if (u_n > 1u)
        y[u_y_off + u_y_rs + row * u_y_cs] = acc.y;
    if (u_n > 2u)
        y[u_y_off + 2u * u_y_rs + row * u_y_cs] = acc.z;
    if (u_n > 3u)
        y[u_y_off + 3u * u_y_rs + row * u_y_cs] = acc.w;
#endif
#endif
}

#if LANES > 0 && ROW_SPLIT > 1
shared vec4 s_parts[TGL_WG_SIZE / LANES]; // each subgroup's sums
#endif

void main()
{
    uint units = u_cols / UNIT_LEN;
    vec4 acc = vec4(0.0);
#ifdef ROW_PER_INVOCATION
    // Two accumulation chains, so consecutive units' loads overlap, and (float formats, whose
    // units are an element or 4) four units a loop trip while they fit: llvmpipe pays its loop's
    // mask and exit test per trip. As tgl_matvec's kernel does (gemm/matvec.comp).
    uint row = tgl_global_index();
    if (row >= u_rows)
        return;
    vec4 acc2 = vec4(0.0);
    uint u = 0u;
#if WFMT < TGL_WFMT_Q8_0 // float formats: units of 1 or 4 elements
    for (; u + 3u < units; u += 4u) {
        acc += unit_sum(row, u) + unit_sum(row, u + 2u);
        acc2 += unit_sum(row, u + 1u) + unit_sum(row, u + 3u);
    }
#endif
    for (; u + 1u < units; u += 2u) {
        acc += unit_sum(row, u);
        acc2 += unit_sum(row, u + 1u);
    }
    if (u < units)
        acc += unit_sum(row, u);
    store(row, acc + acc2);
#elif LANES > 0
    // ROW_SPLIT subgroups per row (TGL_WG_SIZE / (LANES * ROW_SPLIT) rows a workgroup), their
    // invocations strided over the row's units, then a butterfly of shuffles per subgroup and,
    // where a row has several, their sums added in subgroup order through shared memory. A row
    // past the end walks no units but reaches the barrier. Splitting the row cuts the loop trips
    // each invocation waits through one after another (H200, f16 4096 x 11008: 61.3 us whole,
    // 55.6 in halves, 52.2 in quarters; the block formats: gl_quant.c's mvw_split and
    // mvw_wrows say where splitting and WROWS pay - rows sharing x's loads lost 1.2-2.9x on
    // whole rows, and q4_0 gained only with its rows split as well).
    uint lane = gl_LocalInvocationIndex % uint(LANES), sg = gl_LocalInvocationIndex / uint(LANES);
    uint row = (tgl_group_index() * (uint(TGL_WG_SIZE) / uint(LANES)) + sg) / uint(ROW_SPLIT) * uint(WROWS);
    uint stride = uint(LANES * ROW_SPLIT), end = row < u_rows ? units : 0u;
    // Four units a trip into two chains: their loads are independent, so a trip has four in
    // flight instead of one (H200, 4096 x 11008: f16 74.6 -> 64.2 us; q4_0 and q8_0 within 1%).
    vec4 acc2 = vec4(0.0);
    uint u = (sg % uint(ROW_SPLIT)) * uint(LANES) + lane;
    for (; u + 3u * stride < end; u += 4u * stride) {
        acc += UNIT(row, u) + UNIT(row, u + 2u * stride);
        acc2 += UNIT(row, u + stride) + UNIT(row, u + 3u * stride);
    }
    for (; u < end; u += stride)
        acc += UNIT(row, u);
    acc += acc2;
    for (uint off = uint(LANES) / 2u; off > 0u; off >>= 1)
        acc += subgroupShuffleXor(acc, off);
#if ROW_SPLIT > 1
    if (lane == 0u)
        s_parts[sg] = acc;
    memoryBarrierShared();
    barrier();
    if (sg % uint(ROW_SPLIT) != 0u)
        return;
    for (uint k = 1u; k < uint(ROW_SPLIT); k++)
        acc += s_parts[sg + k];
#endif
#if WROWS == 4
    if (lane == 0u)
        for (uint i = 0u; i < uint(WROWS); i++)
            if (row + i < u_rows)
                store(row + i, vec4(acc[i], 0.0, 0.0, 0.0));
#else
    if (lane == 0u && row < u_rows)
        store(row, acc);
#endif
#else
    uint row = tgl_group_index();
    if (row >= u_rows)
        return; // uniform across the workgroup
    for (uint u = gl_LocalInvocationIndex; u < units; u += uint(TGL_WG_SIZE))
        acc += unit_sum(row, u);
    acc.x = tgl_group_sum(acc.x);
#if XR == 4
    acc.y = tgl_group_sum(acc.y);
    acc.z = tgl_group_sum(acc.z);
    acc.w = tgl_group_sum(acc.w);
#endif
    if (gl_LocalInvocationIndex == 0u)
        store(row, acc);
#endif
}

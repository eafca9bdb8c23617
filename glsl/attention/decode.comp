#version 430
// Attention for few query rows over long key ranges (decode), first pass: the keys are cut
// into chunks of CH and a workgroup takes one (row group, chunk) pair (workgroup x = chunk,
// y = row group), so a single query still fills the device. A row group is GQ query rows at one
// position whose (batch, head) blocks are neighbours sharing one key/value block (grouped-query
// attention: GQ heads of a group; 1 without grouping), so each key and value row is read once
// for all of them. Each invocation scores keys of the chunk (full dots against the GQ queries
// in shared memory), the workgroup takes each row's max m and sum l of exp(score - m), and the
// invocations split (key, vec4 of dims) pairs to sum the weighted values. The unnormalized
// outputs, m and l go to `part`; attention/decode_combine merges a row's chunks. A chunk the
// row sees no key of records m = -inf, l = 0. Where one (batch, head) block's keys are longer
// than an SSBO window, a dispatch covers the chunks from u_chunk0 on, its k and v windows
// starting at key u_chunk0 * CH of the block. K8 (with VEC4 and KV_F16; u_d == DP, every key
// row starting on 16 bytes of k's window): the scores read k's rows 8 halves a load, k declared
// as uvec4s (common/attention_io.glsl). MERGE (one dispatch covering every chunk, u_chunks <=
// CH; the host takes it for grids that do not fill the device): no second pass. Each workgroup
// counts its chunk in `counts` (binding 6: a word per row group, zero between calls) and the row
// group's last one merges the chunks' partials into o as attention/decode_combine would, setting
// the word back to zero.
#extension GL_GOOGLE_include_directive : enable
#include "common/locations.glsl"
#include "common/unroll.glsl"
#ifndef TGL_WG_SIZE
#define TGL_WG_SIZE 128
#endif
#ifndef DP
#define DP 64 // head dims covered (u_d <= DP, a multiple of 4, DP / 4 <= TGL_WG_SIZE)
#define CH 256
#endif
#ifndef GQ
#define GQ 1 // query rows per workgroup (1, 2 or 4): the host groups only heads sharing k and v
#endif
#if GQ > 1
#define TGL_GROUP_VEC4 // the rows' maxima and sums reduced together, a lane each
#endif
#include "common/math.glsl"
#include "common/group.glsl"
#include "common/attention_io.glsl"

#include "common/local_size.glsl"
#ifdef MERGE // read back by the row group's last workgroup: coherent, past the other ones' caches
layout(std430, binding = 4) coherent buffer Part { vec4 part[]; }; // per (row, chunk): DP/4 + 1 vec4s
layout(std430, binding = 6) coherent buffer Counts { uint counts[]; };
shared bool s_last;
#else
layout(std430, binding = 4) writeonly buffer Part { vec4 part[]; }; // per (row, chunk): DP/4 + 1 vec4s
#endif
layout(location = LOC_ATT_DECODE_CHUNKS) uniform uint u_chunks;
layout(location = LOC_ATT_DECODE_CHUNK0) uniform uint u_chunk0;

shared vec4 s_q[GQ * (DP / 4)]; // row t's query at t * DP / 4
shared float s_p[GQ * CH];      // row t's scores, then weights, at t * CH
#ifdef V8
shared vec4 s_o[2 * TGL_WG_SIZE]; // an invocation's two vec4s of dims side by side
#else
shared vec4 s_o[TGL_WG_SIZE];
#endif

// Workgroup-wide max and sum of each row's value (lane t: row t).
#if GQ > 1
vec4 rows_max(vec4 v) { return tgl_group_max4(v); }
vec4 rows_sum(vec4 v) { return tgl_group_sum4(v); }
#else
vec4 rows_max(vec4 v) { return vec4(tgl_group_max(v.x)); }
vec4 rows_sum(vec4 v) { return vec4(tgl_group_sum(v.x)); }
#endif

void main()
{
    uint tid = gl_LocalInvocationIndex, chunk = u_chunk0 + gl_WorkGroupID.x, rg = gl_WorkGroupID.y;
    // rows bh0 + t (t < GQ) at query position i: row (bh0 + t) seq_q + i of the dispatch
    uint g = rg / u_seq_q, i = rg - g * u_seq_q, bh0 = g * uint(GQ), j0 = chunk * uint(CH);
    // the chunk's keys the rows see: [lo, n) of the chunk
    uint keys = attention_keys(i), n = keys > j0 ? min(uint(CH), keys - j0) : 0u;
    uint seen = attention_first_key(i), lo = seen > j0 ? min(seen - j0, n) : 0u;
    bool adjusts = attention_adjusts();
    // key j0 + jj of the block is row (j0 - u_chunk0 * CH) + jj of the window
    uint first = gl_WorkGroupID.x * uint(CH);
    uint kv = kv_block(bh0);
    uint k_rows = u_k_off + (kv * u_kv_cap + first) * u_d, v_rows = u_v_off + (kv * u_kv_cap + first) * u_d;
    for (uint e = tid; e < uint(GQ * (DP / 4)); e += uint(TGL_WG_SIZE)) {
        uint t = e / uint(DP / 4), c4 = e - t * uint(DP / 4);
        s_q[e] = q_load4(u_q_off + ((bh0 + t) * u_seq_q + i) * u_d, c4 * 4u) * u_scale;
    }
    memoryBarrierShared();
    barrier();

    vec4 slopes = vec4(0.0); // each row's ALiBi slope, once (component t: row t)
    if (adjusts)
        TGL_UNROLL for (uint t = 0u; t < uint(GQ); t++)
            slopes[t] = attention_slope(bh0 + t);
    vec4 mx = vec4(-tgl_inf());
    for (uint jj = lo + tid; jj < n; jj += uint(TGL_WG_SIZE)) {
        uint k_row = k_rows + jj * u_d;
        vec4 acc[GQ];
        TGL_UNROLL for (uint t = 0u; t < uint(GQ); t++)
            acc[t] = vec4(0.0);
#ifdef K8 // a row's 8 halves a load (docs/performance.md)
        TGL_UNROLL for (uint c8 = 0u; c8 < uint(DP / 8); c8++) {
            uvec4 w = k_mem[(k_row >> 3u) + c8];
            vec4 ka = k8_half(w, 0u), kb = k8_half(w, 1u);
            TGL_UNROLL for (uint t = 0u; t < uint(GQ); t++)
                acc[t] += s_q[t * uint(DP / 4) + 2u * c8] * ka + s_q[t * uint(DP / 4) + 2u * c8 + 1u] * kb;
        }
#else
        TGL_UNROLL for (uint c4 = 0u; c4 < uint(DP / 4); c4++) {
            vec4 k4 = k_load4(k_row, c4 * 4u);
            TGL_UNROLL for (uint t = 0u; t < uint(GQ); t++)
                acc[t] += s_q[t * uint(DP / 4) + c4] * k4;
        }
#endif
        TGL_UNROLL for (uint t = 0u; t < uint(GQ); t++) {
            float s = (acc[t].x + acc[t].y) + (acc[t].z + acc[t].w);
            if (adjusts) // uniform: tgl_attention_t's capping, ALiBi bias and mask
                s = attention_adjust(s, slopes[t], bh0 + t, i, j0 + jj, 1.0);
            s_p[t * uint(CH) + jj] = s;
            mx[t] = max(mx[t], s);
        }
    }
    mx = rows_max(mx); // uniform: every invocation sees the same maxima
    vec4 sum = vec4(0.0);
    for (uint jj = lo + tid; jj < n; jj += uint(TGL_WG_SIZE))
        TGL_UNROLL for (uint t = 0u; t < uint(GQ); t++) {
            // every score -inf (masked): weight 0
            float p = mx[t] == -tgl_inf() ? 0.0 : exp(s_p[t * uint(CH) + jj] - mx[t]);
            s_p[t * uint(CH) + jj] = p;
            sum[t] += p;
        }
    vec4 l = rows_sum(sum); // its barriers also publish s_p

    const uint dv = uint(DP / 4);
#ifdef V8
    // Each way's invocations read a value row 8 halves a load (DP / 8 of them a row), so a way
    // is twice as many keys as with vec4s and walks half as many trips one after another
    // (H200, GQA decode 4 x 32/8 heads x 4096 keys x 128, f16 cache: 62.5 -> 42.2 us;
    // docs/performance.md). Four keys a trip, their loads issued before the sums use them.
    const uint d8 = uint(DP / 8), ways = uint(TGL_WG_SIZE) / d8;
    uint c8 = tid % d8, way = tid / d8;
    vec4 acc[GQ], acc_hi[GQ]; // dims 8 c8 .. 8 c8 + 3 and 8 c8 + 4 .. 8 c8 + 7
    TGL_UNROLL for (uint t = 0u; t < uint(GQ); t++) {
        acc[t] = vec4(0.0);
        acc_hi[t] = vec4(0.0);
    }
    if (way < ways) {
        uint jj = lo + way, at = (v_rows >> 3u) + c8, row8 = u_d >> 3u;
        for (; jj + 3u * ways < n; jj += 4u * ways) {
            uvec4 wa = v_mem[at + jj * row8], wb = v_mem[at + (jj + ways) * row8];
            uvec4 wc = v_mem[at + (jj + 2u * ways) * row8], wd = v_mem[at + (jj + 3u * ways) * row8];
            TGL_UNROLL for (uint t = 0u; t < uint(GQ); t++) {
                uint p = t * uint(CH) + jj;
                float pa = s_p[p], pb = s_p[p + ways], pc = s_p[p + 2u * ways], pd = s_p[p + 3u * ways];
                acc[t] += (pa * k8_half(wa, 0u) + pb * k8_half(wb, 0u)) + (pc * k8_half(wc, 0u) + pd * k8_half(wd, 0u));
                acc_hi[t] += (pa * k8_half(wa, 1u) + pb * k8_half(wb, 1u)) + (pc * k8_half(wc, 1u) + pd * k8_half(wd, 1u));
            }
        }
        for (; jj < n; jj += ways) {
            uvec4 w = v_mem[at + jj * row8];
            TGL_UNROLL for (uint t = 0u; t < uint(GQ); t++) {
                float pj = s_p[t * uint(CH) + jj];
                acc[t] += pj * k8_half(w, 0u);
                acc_hi[t] += pj * k8_half(w, 1u);
            }
        }
    }
#else
    const uint ways = uint(TGL_WG_SIZE) / dv;
    uint c4 = tid % dv, way = tid / dv;
    vec4 acc[GQ];
    TGL_UNROLL for (uint t = 0u; t < uint(GQ); t++)
        acc[t] = vec4(0.0);
    // Four keys a trip, their loads issued before the sums use them (a way walks CH / ways keys
    // one after another; H200, GQA decode 4 x 32/8 heads x 4096 keys x 128, alternated runs: f16
    // cache 69.3 -> 68.4 us, f32 77.9 -> 77.3).
    if (way < ways) {
        uint jj = lo + way;
        for (; jj + 3u * ways < n; jj += 4u * ways) {
            vec4 va = v_load4(v_rows + jj * u_d, c4 * 4u), vb = v_load4(v_rows + (jj + ways) * u_d, c4 * 4u);
            vec4 vc = v_load4(v_rows + (jj + 2u * ways) * u_d, c4 * 4u);
            vec4 vd = v_load4(v_rows + (jj + 3u * ways) * u_d, c4 * 4u);
            TGL_UNROLL for (uint t = 0u; t < uint(GQ); t++) {
                uint p = t * uint(CH) + jj;
                acc[t] += (s_p[p] * va + s_p[p + ways] * vb) + (s_p[p + 2u * ways] * vc + s_p[p + 3u * ways] * vd);
            }
        }
        for (; jj < n; jj += ways) {
            vec4 v4 = v_load4(v_rows + jj * u_d, c4 * 4u);
            TGL_UNROLL for (uint t = 0u; t < uint(GQ); t++)
                acc[t] += s_p[t * uint(CH) + jj] * v4;
        }
    }
#endif
    // each row's sum over the ways, one row at a time through s_o (with V8 an invocation's two
    // vec4s side by side: output vec4 c of way w at 2 (w d8 + c / 2) + c % 2 = w dv + c, as
    // without)
    TGL_UNROLL for (uint t = 0u; t < uint(GQ); t++) {
#ifdef V8
        s_o[2u * tid] = acc[t];
        s_o[2u * tid + 1u] = acc_hi[t];
#else
        s_o[tid] = acc[t];
#endif
        memoryBarrierShared();
        barrier();
        uint base = (((bh0 + t) * u_seq_q + i) * u_chunks + chunk) * (dv + 1u);
        if (tid < dv) {
            vec4 o = vec4(0.0);
            for (uint w = 0u; w < ways; w++)
                o += s_o[w * dv + tid];
            part[base + tid] = o;
        }
        if (tid == 0u)
            part[base + dv] = vec4(n > lo ? mx[t] : -tgl_inf(), l[t], 0.0, 0.0);
        barrier(); // s_o read by all before the next row overwrites it
    }
#ifdef MERGE
    // This chunk's partials go out before it is counted; the row group's last chunk, which
    // sees every count before its own, reads all of them back.
    memoryBarrierBuffer();
    barrier();
    if (tid == 0u) {
        s_last = atomicAdd(counts[rg], 1u) + 1u == u_chunks;
        if (s_last)
            counts[rg] = 0u; // every chunk has counted: ready for the next call
    }
    memoryBarrierShared();
    barrier();
    if (!s_last)
        return; // uniform
    memoryBarrierBuffer();
    // Each row's max m over its chunks and sum of their l weighted by exp(m_c - m), the chunks'
    // weights kept in s_p (u_chunks <= CH; the value pass's reads of s_p ended at the barriers
    // above); a chunk that saw no key weighs 0, a row that saw none is zeros.
    vec4 cm = vec4(-tgl_inf());
    for (uint c = tid; c < u_chunks; c += uint(TGL_WG_SIZE))
        TGL_UNROLL for (uint t = 0u; t < uint(GQ); t++)
            cm[t] = max(cm[t], part[(((bh0 + t) * u_seq_q + i) * u_chunks + c) * (dv + 1u) + dv].x);
    cm = rows_max(cm);
    vec4 cl = vec4(0.0);
    for (uint c = tid; c < u_chunks; c += uint(TGL_WG_SIZE))
        TGL_UNROLL for (uint t = 0u; t < uint(GQ); t++) {
            vec2 ml = part[(((bh0 + t) * u_seq_q + i) * u_chunks + c) * (dv + 1u) + dv].xy;
            float w = ml.x == -tgl_inf() ? 0.0 : exp(ml.x - cm[t]);
            s_p[t * uint(CH) + c] = w;
            cl[t] += w * ml.y;
        }
    cl = rows_sum(cl); // its barriers also publish s_p
    // an invocation per (row, output vec4), four chunks' loads a trip
    for (uint e = tid; e < uint(GQ) * dv; e += uint(TGL_WG_SIZE)) {
        uint t = e / dv, c4 = e - t * dv, row = (bh0 + t) * u_seq_q + i;
        uint at = row * u_chunks * (dv + 1u) + c4, stride = dv + 1u;
        vec4 o = vec4(0.0);
        uint c = 0u;
        for (; c + 4u <= u_chunks; c += 4u) {
            vec4 pa = part[at + c * stride], pb = part[at + (c + 1u) * stride];
            vec4 pc = part[at + (c + 2u) * stride], pd = part[at + (c + 3u) * stride];
            uint w = t * uint(CH) + c;
            o += (s_p[w] * pa + s_p[w + 1u] * pb) + (s_p[w + 2u] * pc + s_p[w + 3u] * pd);
        }
        for (; c < u_chunks; c++)
            o += s_p[t * uint(CH) + c] * part[at + c * stride];
        o_store4(u_o_off + row * u_d, c4 * 4u, o * (cl[t] > 0.0 ? 1.0 / cl[t] : 0.0));
    }
#endif
}

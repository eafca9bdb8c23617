#version 430
// Fused attention with an online softmax for devices with subgroup shuffles (see
// attention/flash.comp for the method, common/attention_io.glsl for the operands). Each
// invocation holds RQ query rows, and each row is split over TPR neighbouring invocations of
// one subgroup (the host checks TPR divides the subgroup size): invocation t of a row holds
// vec4s t, t + TPR, ... of its q (pre-scaled) and of its output accumulator, so the row's
// invocations read neighbouring vec4s of a key, and subgroupShuffleXor sums their partial
// dots. Every key and value vec4 loaded from shared memory then serves RQ rows, where
// flash.comp's one row per invocation spends a shared load on every 4 multiply-adds, and the
// RQ rows' q, accumulators and scores still fit in registers (H100, d 64: TPR 2, RQ 2, 32
// keys per block, 256 invocations; 512 invocations spilled). Workgroup slot r (of RG =
// THREADS / TPR) holds rows r, r + RG, ..., so a workgroup covers BQ = RG x RQ rows, mapped
// heaviest first as in flash.comp. Scores are kept in base-2 units (q is scaled by log2(e) as
// well) so each exponential is one exp2, and blocks of keys that every row of the workgroup
// sees whole skip the mask tests: 8 x 16 x 2048 x 64 on the H100, causal 2.79 -> 2.65 ms
// (16 keys per block). SPLIT (common/attention_io.glsl): workgroup z walks chunk z of the keys.
#extension GL_GOOGLE_include_directive : enable
#include "common/locations.glsl"
#extension GL_KHR_shader_subgroup_shuffle : require
#include "common/unroll.glsl"
#ifndef TPR
#define TPR 2
#define DT 32
#define RQ 2
#define BKV 32
#define THREADS 256
#endif
#if TPR != 2 && TPR != 4
#error TPR must be 2 or 4
#endif
#define DP (TPR * DT)      // head dims a workgroup covers (u_d <= DP)
#define DV (DT / 4)        // vec4s of a row an invocation holds
#define RG (THREADS / TPR) // row slots of a workgroup
#define BQ (RG * RQ)       // rows of a workgroup
#include "common/math.glsl"
#include "common/attention_io.glsl"

// NVIDIA's GLSL compiler unrolls loops by a size heuristic, and where it declines, q, o, s and p
// (indexed by loop counters) go to local memory: once tgl_attention_t's window test made the
// loop bodies larger, causal 1 x 16 x 1024 x 64 took 5.5 ms instead of 0.13 (H200, driver 580).
// This pragma makes it unroll every loop of constant trip count here; other compilers ignore it
// (GLSL: an unrecognized pragma is ignored). Not in common/unroll.glsl: over the GEMM kernels
// it made linear_swiglu 4.6x slower and conv2d 1.4x.
#pragma optionNV(unroll all)
layout(local_size_x = THREADS) in;

shared vec4 s_k[BKV][DP / 4];
shared vec4 s_v[BKV][DP / 4];

// The softmax step of one block of keys for each of the invocation's rows: the running max m
// (base 2), the sum l and the accumulator rescaled once, and the block's weights p.
// VISIBLE(k, jj) says whether key j0 + jj is visible to row k.
#define SOFTMAX_STEP \
    TGL_UNROLL for (uint k = 0u; k < uint(RQ); k++) { \
        float m_new = m[k]; \
        TGL_UNROLL for (uint jj = 0u; jj < uint(BKV); jj++) \
            if (VISIBLE(k, jj)) \
                m_new = max(m_new, s[k][jj]); \
        float corr = m[k] == -tgl_inf() ? 0.0 : exp2(m[k] - m_new); \
        l[k] *= corr; \
        TGL_UNROLL for (uint c = 0u; c < uint(DV); c++) \
            o[k][c] *= corr; \
        float m_safe = m_new == -tgl_inf() ? 0.0 : m_new; /* masked (-inf) scores weigh 0 */ \
        TGL_UNROLL for (uint jj = 0u; jj < uint(BKV); jj++) { \
            p[k][jj] = VISIBLE(k, jj) ? exp2(s[k][jj] - m_safe) : 0.0; \
            l[k] += p[k][jj]; \
        } \
        m[k] = m_new; \
    }

void main()
{
    uint tid = gl_LocalInvocationIndex, r = tid / uint(TPR), t = tid % uint(TPR);
    uint n_blocks = gl_NumWorkGroups.x, n_bh = gl_NumWorkGroups.y;
    uint lin = gl_WorkGroupID.x + gl_WorkGroupID.y * n_blocks;
    uint bh = lin % n_bh, row0 = (n_blocks - 1u - lin / n_bh) * uint(BQ);
    uint k_rows = u_k_off + kv_block(bh) * u_kv_cap * u_d, v_rows = u_v_off + kv_block(bh) * u_kv_cap * u_d;
    uint last_row = min(row0 + uint(BQ), u_seq_q) - 1u;
    uint wg_keys = attention_keys(last_row);           // the most any row sees
    uint wg_min_keys = attention_keys(row0);           // the fewest
    uint wg_max_first = attention_first_key(last_row); // a window: where the last row's keys start
#ifdef SPLIT
    // The rows see only the chunk's keys (see attention/flash.comp)
    uint chunk = gl_WorkGroupID.z, first_key = chunk * u_chunk_keys, chunk_end = first_key + u_chunk_keys;
    wg_keys = min(wg_keys, chunk_end);
    wg_min_keys = min(wg_min_keys, chunk_end);
#else
    uint first_key = 0u;
#endif
    first_key = max(first_key, attention_first_key(row0)); // the first row's window starts first
    float slope = attention_slope(bh);
    bool adjusts = attention_adjusts();

    uint keys[RQ], first[RQ], row[RQ];
    vec4 q[RQ][DV], o[RQ][DV];
    float m[RQ], l[RQ];
    const float log2e = 1.4426950408889634;
    TGL_UNROLL for (uint k = 0u; k < uint(RQ); k++) {
        uint i = min(row0 + r + k * uint(RG), u_seq_q - 1u); // rows past the end: computed, unstored
        uint q_row = u_q_off + (bh * u_seq_q + i) * u_d;
        keys[k] = attention_keys(i);
#ifdef SPLIT
        keys[k] = min(keys[k], chunk_end);
#endif
        first[k] = min(attention_first_key(i), keys[k]);
        row[k] = i;
        TGL_UNROLL for (uint c = 0u; c < uint(DV); c++) {
            q[k][c] = q_load4(q_row, (c * uint(TPR) + t) * 4u) * (u_scale * log2e);
            o[k][c] = vec4(0.0);
        }
        m[k] = -tgl_inf();
        l[k] = 0.0;
    }

    for (uint j0 = first_key; j0 < wg_keys; j0 += uint(BKV)) {
        barrier(); // every invocation is done with the previous block
        for (uint e = tid; e < uint(BKV * DP / 4); e += uint(THREADS)) {
            uint jj = e / uint(DP / 4), c4 = e % uint(DP / 4), j = j0 + jj;
            s_k[jj][c4] = j < u_seq_kv ? k_load4(k_rows + j * u_d, c4 * 4u) : vec4(0.0);
            s_v[jj][c4] = j < u_seq_kv ? v_load4(v_rows + j * u_d, c4 * 4u) : vec4(0.0);
        }
        memoryBarrierShared();
        barrier();

        // Scores s, then weights p. The loop bounds are workgroup-uniform, so every invocation
        // takes part in each shuffle.
        float s[RQ][BKV], p[RQ][BKV];
        TGL_UNROLL for (uint jj = 0u; jj < uint(BKV); jj++) {
            vec4 acc[RQ];
            TGL_UNROLL for (uint k = 0u; k < uint(RQ); k++)
                acc[k] = vec4(0.0);
            TGL_UNROLL for (uint c = 0u; c < uint(DV); c++) {
                vec4 kv = s_k[jj][c * uint(TPR) + t];
                TGL_UNROLL for (uint k = 0u; k < uint(RQ); k++)
                    acc[k] += q[k][c] * kv;
            }
            TGL_UNROLL for (uint k = 0u; k < uint(RQ); k++) {
                float d = (acc[k].x + acc[k].y) + (acc[k].z + acc[k].w);
                d += subgroupShuffleXor(d, 1u);
#if TPR == 4
                d += subgroupShuffleXor(d, 2u);
#endif
                s[k][jj] = d;
            }
        }
        if (adjusts) // uniform: tgl_attention_t's capping and ALiBi bias, in base 2
            TGL_UNROLL for (uint k = 0u; k < uint(RQ); k++)
                TGL_UNROLL for (uint jj = 0u; jj < uint(BKV); jj++)
                    s[k][jj] = attention_adjust(s[k][jj], slope, bh, row[k], j0 + jj, log2e);
        if (j0 + uint(BKV) <= wg_min_keys && j0 >= wg_max_first) { // uniform: every row sees the whole block
#define VISIBLE(k, jj) true
            SOFTMAX_STEP
#undef VISIBLE
        } else {
#define VISIBLE(k, jj) attention_sees(j0 + (jj), first[k], keys[k])
            SOFTMAX_STEP
#undef VISIBLE
        }
        TGL_UNROLL for (uint jj = 0u; jj < uint(BKV); jj++)
            TGL_UNROLL for (uint c = 0u; c < uint(DV); c++) {
                vec4 vv = s_v[jj][c * uint(TPR) + t];
                TGL_UNROLL for (uint k = 0u; k < uint(RQ); k++)
                    o[k][c] += p[k][jj] * vv;
            }
    }

    TGL_UNROLL for (uint k = 0u; k < uint(RQ); k++) {
        uint row = row0 + r + k * uint(RG);
        if (row >= u_seq_q)
            continue;
#ifdef SPLIT
        uint at = split_part_at(bh * u_seq_q + row, chunk);
        TGL_UNROLL for (uint c = 0u; c < uint(DV); c++)
            part[at + c * uint(TPR) + t] = o[k][c];
        if (t == 0u)
            part[at + uint(DP / 4)] = vec4(m[k] * 0.6931471805599453, l[k], 0.0, 0.0); // m in e units
#else
        uint o_row = u_o_off + (bh * u_seq_q + row) * u_d;
        float inv = l[k] > 0.0 ? 1.0 / l[k] : 0.0; // a row that sees no key is zeros
        TGL_UNROLL for (uint c = 0u; c < uint(DV); c++)
            o_store4(o_row, (c * uint(TPR) + t) * 4u, o[k][c] * inv);
#endif
    }
}

#version 430
// Fused attention with an online softmax (see common/attention_io.glsl): no score matrix in
// memory. A workgroup takes BQ = THREADS / TPR query rows of one (batch, head) block
// (workgroup y); TPR invocations share a row, each holding DT of its dims of q (pre-scaled)
// and of the output accumulator: vec4s t, t + TPR, t + 2 TPR, ... of the row, so that a row's
// invocations read neighbouring vec4s of a key (contiguous slices put them 16 vec4s apart, in
// the same shared-memory banks: d 128 on the H100 ran 22.5 ms instead of 15.0). Keys and values
// stream through shared memory in blocks of BKV; per block each row's scores are computed
// (partial dots summed across the TPR invocations), then the running max m, the sum l and the
// accumulator are rescaled once and the block's values added. The loop stops at the last key
// the workgroup's last row sees, so a causal mask skips the blocks above the diagonal, and
// blocks every row sees whole skip the mask tests. Scores are in base 2 (one exp2 each).
// SPLIT (common/attention_io.glsl): workgroup z walks chunk z of the keys, so that calls of few
// row blocks still fill the device. The partial dots are summed through shared memory, or with SUBGROUP_XOR by
// subgroupShuffleXor, which the host sets only where a subgroup holds whole rows (TPR divides
// the subgroup size; a row's invocations are neighbours).
#extension GL_GOOGLE_include_directive : enable
#include "common/locations.glsl"
#ifdef SUBGROUP_XOR
#extension GL_KHR_shader_subgroup_shuffle : require
#endif
#include "common/unroll.glsl"
#ifndef TPR
#define TPR 1
#define DT 64
#define BKV 32
#define THREADS 64
#endif
#define DP (TPR * DT) // head dims a workgroup covers (u_d <= DP)
#define DV (DT / 4)   // vec4s an invocation holds
#define BQ (THREADS / TPR)
#include "common/math.glsl"
#include "common/attention_io.glsl"

layout(local_size_x = THREADS) in;

shared vec4 s_k[BKV][DP / 4];
shared vec4 s_v[BKV][DP / 4];
#if TPR > 1 && !defined(SUBGROUP_XOR)
shared float s_part[THREADS][BKV]; // partial dots of invocation tid
#endif

// One block of keys for the invocation's row: the running max m (base 2: q carries log2(e)),
// the sum l and the accumulator rescaled once, then the block's weighted values added.
// VISIBLE(jj) says whether key j0 + jj is visible to the row.
#define SOFTMAX_STEP \
    float m_new = m; \
    TGL_UNROLL for (uint jj = 0u; jj < uint(BKV); jj++) \
        if (VISIBLE(jj)) \
            m_new = max(m_new, s[jj]); \
    if (m_new != -tgl_inf()) { /* else this row sees none of these keys */ \
        float corr = m == -tgl_inf() ? 0.0 : exp2(m - m_new); \
        l *= corr; \
        TGL_UNROLL for (uint c = 0u; c < uint(DV); c++) \
            o[c] *= corr; \
        TGL_UNROLL for (uint jj = 0u; jj < uint(BKV); jj++) { \
            float p = VISIBLE(jj) ? exp2(s[jj] - m_new) : 0.0; \
            l += p; \
            TGL_UNROLL for (uint c = 0u; c < uint(DV); c++) \
                o[c] += p * s_v[jj][c * uint(TPR) + t]; \
        } \
        m = m_new; \
    }

void main()
{
    uint tid = gl_LocalInvocationIndex, r = tid / uint(TPR), t = tid % uint(TPR);
    // Under a causal mask later rows see more keys. Workgroups start in the order of their linear
    // index, so it is mapped heaviest first: (x, y) = (block of rows, (batch, head)) by the grid,
    // but linear index L takes row block n_blocks - 1 - L / n_bh of block L % n_bh. The last to
    // start are then the shortest, instead of the longest, and the device idles less at the end.
    // (n_blocks * n_bh stays below the q window's element count: no overflow.)
    uint n_blocks = gl_NumWorkGroups.x, n_bh = gl_NumWorkGroups.y;
    uint lin = gl_WorkGroupID.x + gl_WorkGroupID.y * n_blocks;
    uint bh = lin % n_bh, row0 = (n_blocks - 1u - lin / n_bh) * uint(BQ);
    uint i = min(row0 + r, u_seq_q - 1u); // rows past the end compute row seq_q - 1 unseen
    uint q_row = u_q_off + (bh * u_seq_q + i) * u_d;
    uint k_rows = u_k_off + kv_block(bh) * u_kv_cap * u_d, v_rows = u_v_off + kv_block(bh) * u_kv_cap * u_d;
    uint keys = attention_keys(i), first = min(attention_first_key(i), keys);
    uint last_row = min(row0 + uint(BQ), u_seq_q) - 1u;
    uint wg_keys = attention_keys(last_row); // causal: the most any row sees
    uint wg_min_keys = attention_keys(row0); // ... and the fewest
    uint wg_max_first = attention_first_key(last_row); // a window: where the last row's keys start
#ifdef SPLIT
    // The rows see only the chunk's keys: a window's first block need not start on the block
    // grid, so the last block may reach into the next chunk, whose keys that chunk counts.
    uint chunk = gl_WorkGroupID.z, first_key = chunk * u_chunk_keys, chunk_end = first_key + u_chunk_keys;
    wg_keys = min(wg_keys, chunk_end);
    wg_min_keys = min(wg_min_keys, chunk_end);
    keys = min(keys, chunk_end);
    first = min(first, keys);
#else
    uint first_key = 0u;
#endif
    first_key = max(first_key, attention_first_key(row0)); // the first row's window starts first
    float slope = attention_slope(bh);
    bool adjusts = attention_adjusts();

    vec4 q[DV], o[DV];
    TGL_UNROLL for (uint c = 0u; c < uint(DV); c++) {
        q[c] = q_load4(q_row, (c * uint(TPR) + t) * 4u) * (u_scale * 1.4426950408889634); // log2(e)
        o[c] = vec4(0.0);
    }
    float m = -tgl_inf(), l = 0.0;

    for (uint j0 = first_key; j0 < wg_keys; j0 += uint(BKV)) {
        barrier(); // every invocation is done with the previous block
        for (uint e = tid; e < uint(BKV * DP / 4); e += uint(THREADS)) {
            uint jj = e / uint(DP / 4), c4 = e % uint(DP / 4), j = j0 + jj;
            s_k[jj][c4] = j < u_seq_kv ? k_load4(k_rows + j * u_d, c4 * 4u) : vec4(0.0);
            s_v[jj][c4] = j < u_seq_kv ? v_load4(v_rows + j * u_d, c4 * 4u) : vec4(0.0);
        }
        memoryBarrierShared();
        barrier();

        float s[BKV];
        TGL_UNROLL for (uint jj = 0u; jj < uint(BKV); jj++) {
            vec4 acc = vec4(0.0);
            TGL_UNROLL for (uint c = 0u; c < uint(DV); c++)
                acc += q[c] * s_k[jj][c * uint(TPR) + t];
            s[jj] = (acc.x + acc.y) + (acc.z + acc.w);
        }
#if TPR > 1 && defined(SUBGROUP_XOR)
        // Butterfly: after log2(TPR) steps every invocation of the row holds the whole dot. The
        // loop bounds are workgroup-uniform, so all invocations take part in each shuffle.
        TGL_UNROLL for (uint jj = 0u; jj < uint(BKV); jj++) {
            s[jj] += subgroupShuffleXor(s[jj], 1u);
#if TPR >= 4
            s[jj] += subgroupShuffleXor(s[jj], 2u);
#endif
#if TPR >= 8
            s[jj] += subgroupShuffleXor(s[jj], 4u);
#endif
        }
#elif TPR > 1
        TGL_UNROLL for (uint jj = 0u; jj < uint(BKV); jj++)
            s_part[tid][jj] = s[jj];
        memoryBarrierShared();
        barrier();
        TGL_UNROLL for (uint jj = 0u; jj < uint(BKV); jj++) {
            float tot = 0.0;
            TGL_UNROLL for (uint u = 0u; u < uint(TPR); u++)
                tot += s_part[r * uint(TPR) + u][jj];
            s[jj] = tot;
        }
#endif
        if (adjusts) // uniform: tgl_attention_t's capping and ALiBi bias, in base 2
            TGL_UNROLL for (uint jj = 0u; jj < uint(BKV); jj++)
                s[jj] = attention_adjust(s[jj], slope, bh, i, j0 + jj, 1.4426950408889634);
        if (j0 + uint(BKV) <= wg_min_keys && j0 >= wg_max_first) { // uniform: every row sees the whole block
#define VISIBLE(jj) true
            SOFTMAX_STEP
#undef VISIBLE
        } else {
#define VISIBLE(jj) attention_sees(j0 + (jj), first, keys)
            SOFTMAX_STEP
#undef VISIBLE
        }
    }

    if (row0 + r >= u_seq_q)
        return;
#ifdef SPLIT
    uint at = split_part_at(bh * u_seq_q + i, chunk);
    TGL_UNROLL for (uint c = 0u; c < uint(DV); c++)
        part[at + c * uint(TPR) + t] = o[c];
    if (t == 0u)
        part[at + uint(DP / 4)] = vec4(m * 0.6931471805599453, l, 0.0, 0.0); // m back in e units
#else
    uint o_row = u_o_off + (bh * u_seq_q + i) * u_d;
    float inv = l > 0.0 ? 1.0 / l : 0.0; // a row that sees no key is zeros
    TGL_UNROLL for (uint c = 0u; c < uint(DV); c++)
        o_store4(o_row, (c * uint(TPR) + t) * 4u, o[c] * inv);
#endif
}

#version 430
// Fused attention without shared memory, for llvmpipe (see attention/flash.comp for the
// method): a barrier there switches every coroutine of the workgroup and each shared or SSBO
// load is a loop over the SIMD lanes, while buffer-texture fetches are gathers. So each
// invocation takes RQ query rows of one (batch, head) block, fetches them once, and walks the
// keys BKV at a time, fetching k and v through buffer textures (RGBA32F with VEC4, else R32F);
// every k and v fetch serves RQ rows. Workgroups are 1-D over (block, row group).
// The loops are ordered for what llvmpipe keeps in registers: each float of an invocation is a
// vector register over the SIMD lanes, so q, o and the scores mostly live on the stack. Scores
// accumulate one float per (row, key) through dot(), and each vec4 of the output takes its
// row's rescale and the step's BKV weighted values in one load and store. Batch 1, 8 heads,
// seq 512, d 64 on 2 cores (LLVM 15), 16 rows: 12.5 ms with q fetched at every step and vec4
// partial scores (8 rows, 16 keys), 9.9 with q held, 7.0-7.8 with the one-pass output and scores
// in log2 units (q carries scale * log2(e), the weights are exp2).
#extension GL_GOOGLE_include_directive : enable
#include "common/unroll.glsl"
#ifndef TGL_WG_SIZE
#define TGL_WG_SIZE 64
#endif
#ifndef RQ
#define RQ 4
#define BKV 4
#define DP 64
#endif
#define D4 (DP / 4)
#define TEX // q, k, v through buffer textures (first: it may carry an #extension line)
#include "common/attention_io.glsl"
#include "common/math.glsl"
#include "common/index.glsl"

#include "common/local_size.glsl"
layout(location = 10) uniform uint u_blocks; // (batch, head) blocks in this dispatch

// SPLIT (common/attention_io.glsl): each invocation walks one chunk of the keys. llvmpipe ends
// an invocation's loops after 65535 iterations in all, so this is how long key sequences get
// through there; it also spreads one query row over more invocations.

void main()
{
    uint groups = (u_seq_q + uint(RQ) - 1u) / uint(RQ), inv = tgl_global_index();
#ifdef SPLIT
    // Invocations in (block, chunk, row group) order: neighbouring lanes walk the same keys.
    uint g = inv % groups, bhc = inv / groups, bh = bhc / u_chunks, chunk = bhc - bh * u_chunks;
    uint i0 = g * uint(RQ), first_key = chunk * u_chunk_keys;
#else
    uint bh = inv / groups, i0 = (inv - bh * groups) * uint(RQ), first_key = 0u;
#endif
    if (bh >= u_blocks)
        return;
    uint q_rows = u_q_off + bh * u_seq_q * u_d;
    uint k_rows = u_k_off + bh * u_kv_cap * u_d, v_rows = u_v_off + bh * u_kv_cap * u_d;
    // Scores come out in log2 units (q carries scale * log2(e)), so the weights are exp2 of them.
    float q_scale = u_scale * 1.4426950408889634;
    uint keys[RQ];
    float m[RQ], l[RQ];
    vec4 q[RQ][D4], o[RQ][D4];
    TGL_UNROLL for (uint r = 0u; r < uint(RQ); r++) {
        uint row = min(i0 + r, u_seq_q - 1u); // rows past the end repeat the last one, unstored
        keys[r] = attention_keys(row);
        m[r] = -tgl_inf();
        l[r] = 0.0;
        TGL_UNROLL for (uint c = 0u; c < uint(D4); c++) {
            q[r][c] = q_load4(q_rows + row * u_d, c * 4u) * q_scale;
            o[r][c] = vec4(0.0);
        }
    }
    uint all_keys = keys[RQ - 1];
#ifdef SPLIT
    all_keys = min(all_keys, first_key + u_chunk_keys);
#endif

    for (uint j0 = first_key; j0 < all_keys; j0 += uint(BKV)) {
        uint kr[BKV];
        TGL_UNROLL for (uint k = 0u; k < uint(BKV); k++)
            kr[k] = min(j0 + k, u_seq_kv - 1u) * u_d; // keys past the end: fetched, weighted 0
        float s[RQ][BKV];
        TGL_UNROLL for (uint r = 0u; r < uint(RQ); r++)
            TGL_UNROLL for (uint k = 0u; k < uint(BKV); k++)
                s[r][k] = 0.0;
        TGL_UNROLL for (uint c = 0u; c < uint(D4); c++) {
            vec4 kv[BKV];
            TGL_UNROLL for (uint k = 0u; k < uint(BKV); k++)
                kv[k] = k_load4(k_rows + kr[k], c * 4u);
            TGL_UNROLL for (uint r = 0u; r < uint(RQ); r++)
                TGL_UNROLL for (uint k = 0u; k < uint(BKV); k++)
                    s[r][k] += dot(q[r][c], kv[k]);
        }

        float p[RQ][BKV], corr[RQ];
        TGL_UNROLL for (uint r = 0u; r < uint(RQ); r++) {
            float m_new = m[r];
            TGL_UNROLL for (uint k = 0u; k < uint(BKV); k++)
                if (j0 + k < keys[r])
                    m_new = max(m_new, s[r][k]);
            corr[r] = m[r] == -tgl_inf() || m_new == -tgl_inf() ? 0.0 : exp2(m[r] - m_new);
            l[r] *= corr[r];
            TGL_UNROLL for (uint k = 0u; k < uint(BKV); k++) {
                p[r][k] = j0 + k < keys[r] ? exp2(s[r][k] - m_new) : 0.0;
                l[r] += p[r][k];
            }
            m[r] = m_new;
        }

        TGL_UNROLL for (uint c = 0u; c < uint(D4); c++) {
            vec4 vv[BKV];
            TGL_UNROLL for (uint k = 0u; k < uint(BKV); k++)
                vv[k] = v_load4(v_rows + kr[k], c * 4u);
            TGL_UNROLL for (uint r = 0u; r < uint(RQ); r++) {
                vec4 acc = o[r][c] * corr[r];
                TGL_UNROLL for (uint k = 0u; k < uint(BKV); k++)
                    acc += p[r][k] * vv[k];
                o[r][c] = acc;
            }
        }
    }

#ifdef SPLIT
    for (uint r = 0u; r < uint(RQ) && i0 + r < u_seq_q; r++) {
        uint at = split_part_at(bh * u_seq_q + i0 + r, chunk);
        TGL_UNROLL for (uint c = 0u; c < uint(D4); c++)
            part[at + c] = o[r][c];
        part[at + uint(D4)] = vec4(m[r] * 0.6931471805599453, l[r], 0.0, 0.0); // m back in e units
    }
#else
    for (uint r = 0u; r < uint(RQ) && i0 + r < u_seq_q; r++) {
        float inv_l = l[r] > 0.0 ? 1.0 / l[r] : 0.0; // a row that sees no key is zeros
        uint at = u_o_off + (bh * u_seq_q + i0 + r) * u_d;
        TGL_UNROLL for (uint c = 0u; c < uint(D4); c++)
            o_store4(at, c * 4u, o[r][c] * inv_l);
    }
#endif
}

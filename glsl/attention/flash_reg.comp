#version 430
// Fused attention without shared memory, for llvmpipe (see attention/flash.comp for the
// method): a barrier there switches every coroutine of the workgroup and each shared or SSBO
// load is a loop over the SIMD lanes, while buffer-texture fetches are gathers. So each
// invocation takes RQ query rows of one (batch, head) block and walks the keys BKV at a time,
// fetching q, k and v through buffer textures (RGBA32F with VEC4, else R32F); every k and v
// fetch serves RQ rows and every q fetch BKV keys, like the register-blocked GEMM. The output
// accumulator (RQ x DP floats) lives in registers. Workgroups are 1-D over (block, row group).
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

void main()
{
    uint groups = (u_seq_q + uint(RQ) - 1u) / uint(RQ), inv = tgl_global_index();
    uint bh = inv / groups, i0 = (inv - bh * groups) * uint(RQ);
    if (bh >= u_blocks)
        return;
    uint q_rows = u_q_off + bh * u_seq_q * u_d;
    uint k_rows = u_k_off + bh * u_kv_cap * u_d, v_rows = u_v_off + bh * u_kv_cap * u_d;
    uint row[RQ], keys[RQ];
    float m[RQ], l[RQ];
    vec4 o[RQ][D4];
    TGL_UNROLL for (uint r = 0u; r < uint(RQ); r++) {
        row[r] = min(i0 + r, u_seq_q - 1u); // rows past the end repeat the last one, unstored
        keys[r] = attention_keys(row[r]);
        m[r] = -tgl_inf();
        l[r] = 0.0;
        TGL_UNROLL for (uint c = 0u; c < uint(D4); c++)
            o[r][c] = vec4(0.0);
    }
    uint all_keys = keys[RQ - 1];

    for (uint j0 = 0u; j0 < all_keys; j0 += uint(BKV)) {
        uint kr[BKV];
        TGL_UNROLL for (uint k = 0u; k < uint(BKV); k++)
            kr[k] = min(j0 + k, u_seq_kv - 1u) * u_d; // keys past the end: fetched, weighted 0
        vec4 acc[RQ][BKV];
        TGL_UNROLL for (uint r = 0u; r < uint(RQ); r++)
            TGL_UNROLL for (uint k = 0u; k < uint(BKV); k++)
                acc[r][k] = vec4(0.0);
        TGL_UNROLL for (uint c = 0u; c < uint(D4); c++) {
            vec4 kv[BKV];
            TGL_UNROLL for (uint k = 0u; k < uint(BKV); k++)
                kv[k] = k_load4(k_rows + kr[k], c * 4u);
            TGL_UNROLL for (uint r = 0u; r < uint(RQ); r++) {
                vec4 qv = q_load4(q_rows + row[r] * u_d, c * 4u);
                TGL_UNROLL for (uint k = 0u; k < uint(BKV); k++)
                    acc[r][k] += qv * kv[k];
            }
        }
        float p[RQ][BKV];
        TGL_UNROLL for (uint r = 0u; r < uint(RQ); r++) {
            float s[BKV], m_new = m[r];
            TGL_UNROLL for (uint k = 0u; k < uint(BKV); k++) {
                s[k] = u_scale * ((acc[r][k].x + acc[r][k].y) + (acc[r][k].z + acc[r][k].w));
                if (j0 + k < keys[r])
                    m_new = max(m_new, s[k]);
            }
            float corr = m[r] == -tgl_inf() || m_new == -tgl_inf() ? 0.0 : exp(m[r] - m_new);
            l[r] *= corr;
            TGL_UNROLL for (uint c = 0u; c < uint(D4); c++)
                o[r][c] *= corr;
            TGL_UNROLL for (uint k = 0u; k < uint(BKV); k++) {
                p[r][k] = j0 + k < keys[r] ? exp(s[k] - m_new) : 0.0;
                l[r] += p[r][k];
            }
            m[r] = m_new;
        }
        TGL_UNROLL for (uint c = 0u; c < uint(D4); c++)
            TGL_UNROLL for (uint k = 0u; k < uint(BKV); k++) {
                vec4 vv = v_load4(v_rows + kr[k], c * 4u);
                TGL_UNROLL for (uint r = 0u; r < uint(RQ); r++)
                    o[r][c] += p[r][k] * vv;
            }
    }

    for (uint r = 0u; r < uint(RQ) && i0 + r < u_seq_q; r++) {
        float inv_l = l[r] > 0.0 ? 1.0 / l[r] : 0.0; // a row that sees no key is zeros
        uint at = u_o_off + (bh * u_seq_q + i0 + r) * u_d;
        TGL_UNROLL for (uint c = 0u; c < uint(D4); c++)
            o_store4(at, c * 4u, o[r][c] * inv_l);
    }
}

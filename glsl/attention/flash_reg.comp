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
// The loops over rows, keys and (up to 16) vec4s of the head dimension are written out by
// common/repeat.glsl's macros, so every array index is a constant whatever the compiler unrolls:
// with loops, Mesa 25.0 kept q, o and the scores in memory (29.7 ms against 8.1 on Mesa 22.3;
// d 16 and 4 rows, small enough for its unrolling, ran 3.8 ms against 7.5).
#extension GL_GOOGLE_include_directive : enable
#include "common/locations.glsl"
#include "common/unroll.glsl"
#include "common/repeat.glsl"
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
layout(location = LOC_ATT_BLOCKS) uniform uint u_blocks; // (batch, head) blocks in this dispatch

// SPLIT (common/attention_io.glsl): each invocation walks one chunk of the keys. llvmpipe ends
// an invocation's loops after 65535 iterations in all, so this is how long key sequences get
// through there; it also spreads one query row over more invocations.

// FOR_R, FOR_K: over the RQ rows and the BKV keys of a step; EACH_C: over the D4 vec4s of the
// head dimension, written out up to 16 (head_dim 64) and a loop beyond, where the unrolled
// kernel would grow past what compiles in seconds.
#if RQ == 1
#define FOR_R TGL_REPR_1
#elif RQ == 2
#define FOR_R TGL_REPR_2
#elif RQ == 4
#define FOR_R TGL_REPR_4
#elif RQ == 8
#define FOR_R TGL_REPR_8
#elif RQ == 16
#define FOR_R TGL_REPR_16
#else
#error "RQ must be 1, 2, 4, 8 or 16"
#endif
#if BKV == 1
#define FOR_K TGL_REPK_1
#elif BKV == 2
#define FOR_K TGL_REPK_2
#elif BKV == 4
#define FOR_K TGL_REPK_4
#elif BKV == 8
#define FOR_K TGL_REPK_8
#elif BKV == 16
#define FOR_K TGL_REPK_16
#else
#error "BKV must be 1, 2, 4, 8 or 16"
#endif
#if D4 == 1
#define EACH_C TGL_REPC_1
#elif D4 == 2
#define EACH_C TGL_REPC_2
#elif D4 == 4
#define EACH_C TGL_REPC_4
#elif D4 == 8
#define EACH_C TGL_REPC_8
#elif D4 == 16
#define EACH_C TGL_REPC_16
#else
#define EACH_C(M, a, b) TGL_UNROLL for (uint c_ = 0u; c_ < uint(D4); c_++) { M(a, b, c_) }
#endif

// Each macro below is one loop body; its last argument is the loop's index, the others what the
// body needs from the enclosing ones.
#define ROW_OF(r) min(i0 + uint(r), u_seq_q - 1u) // rows past the end repeat the last one, unstored
#define INIT_Q(r, z, c) q[r][c] = q_load4(q_rows + ROW_OF(r) * u_d, uint(c) * 4u) * q_scale; o[r][c] = vec4(0.0);
#define INIT_ROW(y, z, r)                                                                          \
    keys[r] = attention_keys(ROW_OF(r)); first[r] = min(attention_first_key(ROW_OF(r)), keys[r]);  \
    m[r] = -tgl_inf(); l[r] = 0.0; EACH_C(INIT_Q, r, 0)
#define KEY_ROW(y, z, k) kr[k] = min(j0 + uint(k), u_seq_kv - 1u) * u_d; // past the end: fetched, weighted 0
#define ZERO_S(r, z, k) s[r][k] = 0.0;
#define ZERO_ROW(y, z, r) FOR_K(ZERO_S, r, 0)
#define LOAD_K(c, z, k) kv[k] = k_load4(k_rows + kr[k], uint(c) * 4u);
#define DOT(c, r, k) s[r][k] += dot(q[r][c], kv[k]);
#define DOT_ROW(c, z, r) FOR_K(DOT, c, r)
#define SCORE_C(y, z, c) { vec4 kv[BKV]; FOR_K(LOAD_K, c, 0) FOR_R(DOT_ROW, c, 0) }
#define MAX_K(r, z, k) if (attention_sees(j0 + uint(k), first[r], keys[r])) m_new = max(m_new, s[r][k]);
#define WEIGHT_K(r, z, k) p[r][k] = attention_sees(j0 + uint(k), first[r], keys[r]) ? exp2(s[r][k] - m_safe) : 0.0; l[r] += p[r][k];
// tgl_attention_t's capping and ALiBi bias, in base 2 (common/attention_io.glsl)
#define ADJUST_K(r, z, k) s[r][k] = attention_adjust(s[r][k], slope, bh, ROW_OF(r), j0 + uint(k), 1.4426950408889634);
#define ADJUST_ROW(y, z, r) FOR_K(ADJUST_K, r, 0)
#define SOFTMAX_ROW(y, z, r)                                                                       \
    {                                                                                              \
        float m_new = m[r];                                                                        \
        FOR_K(MAX_K, r, 0)                                                                         \
        corr[r] = m[r] == -tgl_inf() || m_new == -tgl_inf() ? 0.0 : exp2(m[r] - m_new);            \
        l[r] *= corr[r];                                                                           \
        float m_safe = m_new == -tgl_inf() ? 0.0 : m_new; /* masked (-inf) scores weigh 0 */      \
        FOR_K(WEIGHT_K, r, 0)                                                                      \
        m[r] = m_new;                                                                              \
    }
#define LOAD_V(c, z, k) vv[k] = v_load4(v_rows + kr[k], uint(c) * 4u);
#define WEIGH(c, r, k) acc += p[r][k] * vv[k];
#define ACC_ROW(c, z, r) { vec4 acc = o[r][c] * corr[r]; FOR_K(WEIGH, c, r) o[r][c] = acc; }
#define ACC_C(y, z, c) { vec4 vv[BKV]; FOR_K(LOAD_V, c, 0) FOR_R(ACC_ROW, c, 0) }

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
    uint k_rows = u_k_off + kv_block(bh) * u_kv_cap * u_d, v_rows = u_v_off + kv_block(bh) * u_kv_cap * u_d;
    // Scores come out in log2 units (q carries scale * log2(e)), so the weights are exp2 of them.
    float q_scale = u_scale * 1.4426950408889634;
    uint keys[RQ], first[RQ];
    float m[RQ], l[RQ], slope = attention_slope(bh);
    bool adjusts = attention_adjusts();
    vec4 q[RQ][D4], o[RQ][D4];
    FOR_R(INIT_ROW, 0, 0)
#ifdef SPLIT
    // The rows see only the chunk's keys: a window's first step need not start on the step
    // grid, so the last step may reach into the next chunk, whose keys that chunk counts.
    uint chunk_end = first_key + u_chunk_keys;
#define CLAMP_ROW(y, z, r) keys[r] = min(keys[r], chunk_end); first[r] = min(first[r], keys[r]);
    FOR_R(CLAMP_ROW, 0, 0)
#endif
    uint all_keys = keys[RQ - 1];
    first_key = max(first_key, first[0]); // the first row's window starts first

    for (uint j0 = first_key; j0 < all_keys; j0 += uint(BKV)) {
        uint kr[BKV];
        FOR_K(KEY_ROW, 0, 0)
        float s[RQ][BKV];
        FOR_R(ZERO_ROW, 0, 0)
        EACH_C(SCORE_C, 0, 0)
        if (adjusts)
            FOR_R(ADJUST_ROW, 0, 0)
        float p[RQ][BKV], corr[RQ];
        FOR_R(SOFTMAX_ROW, 0, 0)
        EACH_C(ACC_C, 0, 0)
    }

    // The rows leave in a loop, each vec4 picking its row's value by a chain of selects: written
    // out, the RQ x D4 stores (each a scatter over the SIMD lanes with a bounds test per lane on
    // llvmpipe) took most of the compile time, 54 s for 16 rows of d 64 on Mesa 25.0. The loop
    // must stay rolled, so its step is one the compiler cannot prove constant (u_d is never 0):
    // with a plain row++ Mesa 25 unrolled the smaller variants back into the stores (17 s).
#define PICK_ML(y, z, r) mr = row == uint(r) ? m[r] : mr; lr = row == uint(r) ? l[r] : lr;
#define PICK_O(c, z, r) x = row == uint(r) ? o[r][c] : x;
    for (uint row = 0u; row < uint(RQ) && i0 + row < u_seq_q; row += 1u + uint(u_d == 0u)) {
        float mr = 0.0, lr = 0.0;
        FOR_R(PICK_ML, 0, 0)
#ifdef SPLIT
#define STORE_C(at, z, c) { vec4 x = vec4(0.0); FOR_R(PICK_O, c, 0) part[at + uint(c)] = x; }
        uint at = split_part_at(bh * u_seq_q + i0 + row, chunk);
        EACH_C(STORE_C, at, 0)
        part[at + uint(D4)] = vec4(mr * 0.6931471805599453, lr, 0.0, 0.0); // m in e units
#else
#define STORE_C(at, z, c) { vec4 x = vec4(0.0); FOR_R(PICK_O, c, 0) o_store4(at, uint(c) * 4u, x * inv_l); }
        float inv_l = lr > 0.0 ? 1.0 / lr : 0.0; // a row that sees no key is zeros
        uint at = u_o_off + (bh * u_seq_q + i0 + row) * u_d;
        EACH_C(STORE_C, at, 0)
#endif
    }
}

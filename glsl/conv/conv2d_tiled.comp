#version 430
// conv2d as an implicit GEMM through shared memory, for GPUs (see common/conv_io.glsl): a
// workgroup computes a BM x BN tile of one group's output (channels x output pixels), stepping
// over K in BK-deep slabs of the filter and of the on-the-fly im2col staged in shared memory.
// Each invocation holds TM x TN results as (TM/4) x (TN/4) blocks of 4x4 strided across the
// tile, as in gemm/gemm_tiled.comp. The host keeps THREADS a multiple of BN, so each
// invocation stages one fixed im2col column (its receptive field decoded once) and B_FETCH
// consecutive rows of it per slab, stepping (channel, ky, kx) instead of dividing per element.
// DOUBLE_SLAB: two slabs in shared memory, the next staged while the current is multiplied, one
// barrier per slab (as gemm/gemm_tiled.comp). F_VEC4: the filter staged as vec4s (below).
#extension GL_GOOGLE_include_directive : enable
#include "common/unroll.glsl"
#ifndef BM
#define BM 64
#define BN 64
#define BK 16
#define TM 4
#define TN 4
#define THREADS 256
#endif
#include "common/conv_io.glsl"

#define TX (BN / TN)
#define TY (BM / TM)
#define RM (TM / 4)
#define RN (TN / 4)
#define A_FETCH (BM * BK / THREADS)
#define B_FETCH (BN * BK / THREADS)

layout(local_size_x = THREADS) in;

#ifdef NV_UNROLL
// As in gemm/gemm_tiled.comp: NVIDIA's compiler leaves some of these loops rolled. Unrolled, the
// 64 x 256 tile ran the H100 benchmark layer in 0.533 ms against 0.584 rolled.
#pragma optionNV(unroll all)
#endif

#ifdef DOUBLE_SLAB
#define SLABS 2
#else
#define SLABS 1
#endif
shared vec4 s_a[SLABS][BK][BM / 4]; // s_a[slab][q][i / 4][i % 4] = filter(tile row i, slab kk q)
shared vec4 s_b[SLABS][BK][BN / 4]; // s_b[slab][q][j / 4][j % 4] = im2col(slab kk q, tile column j)

// F_VEC4 (the host saw K and the filter's window offset in whole vec4s): the filter loads as
// vec4s along K and is stored transposed with one branch per vec4, uniform over a warp
// (common/kmajor_stage.glsl); else element by element, each to a component chosen at run time.
#ifdef F_VEC4
#include "common/kmajor_stage.glsl"
#define A_VECS (BM * BK / 4)
#define A_TURNS ((A_VECS + THREADS - 1) / THREADS) // tiles of more invocations than vec4s: one turn, part idle
#if A_VECS % 128 == 0
#define A_SLOT(e) slot_by_warp(e)
#else
#define A_SLOT(e) slot_in_order(e)
#endif
vec4 r_a[A_TURNS];
#else
float r_a[A_FETCH];
#endif
float r_b[B_FETCH];

// Fetches slab k0 of the K range that ends at k_end into registers; k is the filter's row length.
void fetch(uint group, uint i_tile, uint k0, uint k_end, uint k, uint tid, conv_col col, bool col_ok)
{
#ifdef F_VEC4
    TGL_UNROLL for (uint l = 0u; l < uint(A_TURNS); l++) {
        uint e = tid + l * uint(THREADS);
        uvec2 slot = A_SLOT(e);
        uint gi = i_tile + slot.x, kk = k0 + slot.y; // kk and k_end are multiples of 4
        r_a[l] = e < uint(A_VECS) && gi < u_ocg && kk < k_end ? f_at4(u_f_off + (group * u_ocg + gi) * k + kk)
                                                              : vec4(0.0);
    }
#else
    TGL_UNROLL for (uint l = 0u; l < uint(A_FETCH); l++) {
        uint e = tid + l * uint(THREADS), i = e / uint(BK), q = e % uint(BK);
        uint gi = i_tile + i, kk = k0 + q;
        r_a[l] = gi < u_ocg && kk < k_end ? f_at(u_f_off + ((group * u_ocg + gi) * k + kk)) : 0.0;
    }
#endif
    uint kk = k0 + tid / uint(BN) * uint(B_FETCH);
    uvec3 t = conv_split(kk);
    for (uint l = 0u; l < uint(B_FETCH); l++, kk++) {
        r_b[l] = col_ok && kk < k_end ? conv_tap(col, t.x, t.y, t.z) : 0.0;
        t = conv_next(t);
    }
}

// Stores the fetched slab into shared slab `slab`.
void stage(uint tid, uint slab)
{
#ifdef F_VEC4
    TGL_UNROLL for (uint l = 0u; l < uint(A_TURNS); l++) {
        uint e = tid + l * uint(THREADS);
        uvec2 slot = A_SLOT(e);
        if (e < uint(A_VECS))
            STORE_KMAJOR(s_a[slab], slot.y, slot.x, r_a[l])
    }
#else
    TGL_UNROLL for (uint l = 0u; l < uint(A_FETCH); l++) {
        uint e = tid + l * uint(THREADS), i = e / uint(BK), q = e % uint(BK);
        s_a[slab][q][i >> 2u][i & 3u] = r_a[l];
    }
#endif
    // An invocation's column, and so the component it writes, is the same for every element it
    // stages: one branch on it, where a component chosen at run time made NVIDIA's compiler
    // branch per element (as in gemm/gemm_tiled.comp).
    uint j = tid % uint(BN), q0 = tid / uint(BN) * uint(B_FETCH), x = j >> 2u, r = j & 3u;
    if (r == 0u) {
        TGL_UNROLL for (uint l = 0u; l < uint(B_FETCH); l++) s_b[slab][q0 + l][x].x = r_b[l];
    } else if (r == 1u) {
        TGL_UNROLL for (uint l = 0u; l < uint(B_FETCH); l++) s_b[slab][q0 + l][x].y = r_b[l];
    } else if (r == 2u) {
        TGL_UNROLL for (uint l = 0u; l < uint(B_FETCH); l++) s_b[slab][q0 + l][x].z = r_b[l];
    } else {
        TGL_UNROLL for (uint l = 0u; l < uint(B_FETCH); l++) s_b[slab][q0 + l][x].w = r_b[l];
    }
}

void multiply_slab(uint slab, uint tx, uint ty, inout mat4 acc[RM * RN])
{
    TGL_UNROLL for (uint q = 0u; q < uint(BK); q++) {
        vec4 av[RM], bv[RN];
        TGL_UNROLL for (uint s = 0u; s < uint(RM); s++)
            av[s] = s_a[slab][q][s * uint(TY) + ty];
        TGL_UNROLL for (uint u = 0u; u < uint(RN); u++)
            bv[u] = s_b[slab][q][u * uint(TX) + tx];
        TGL_UNROLL for (uint s = 0u; s < uint(RM); s++)
            TGL_UNROLL for (uint u = 0u; u < uint(RN); u++)
                acc[s * uint(RN) + u] += outerProduct(bv[u], av[s]);
    }
}

void main()
{
    uint tid = gl_LocalInvocationIndex, tx = tid % uint(TX), ty = tid / uint(TX);
    uint i_tile = gl_WorkGroupID.y * uint(BM), j_tile = gl_WorkGroupID.x * uint(BN);
    uint group = gl_WorkGroupID.z, k = u_icg * u_kh * u_kw, k_begin = 0u, k_end = k;
#ifdef SPLIT_K
    conv_split_index = group / u_groups;
    group -= conv_split_index * u_groups;
    k_begin = conv_split_index * u_k_chunk; // a multiple of BK, below k (the host checks)
    k_end = min(k, k_begin + u_k_chunk);
#endif
    uint my_col = j_tile + tid % uint(BN);
    bool col_ok = my_col < u_cols;
    conv_col col = conv_column(col_ok ? my_col : 0u, group);

    mat4 acc[RM * RN];
    TGL_UNROLL for (uint s = 0u; s < uint(RM * RN); s++)
        acc[s] = mat4(0.0);

    fetch(group, i_tile, k_begin, k_end, k, tid, col, col_ok);
#ifdef DOUBLE_SLAB
    // As in gemm/gemm_tiled.comp: the next slab is staged into the other half while this one is
    // multiplied, one barrier per slab; two slabs per turn, so each names its half as a constant.
    stage(tid, 0u);
    memoryBarrierShared();
    barrier();
#define STEP(k0, slab) { \
        bool more = (k0) + uint(BK) < k_end; \
        if (more) fetch(group, i_tile, (k0) + uint(BK), k_end, k, tid, col, col_ok); \
        multiply_slab(slab, tx, ty, acc); \
        if (more) stage(tid, 1u - (slab)); \
        memoryBarrierShared(); \
        barrier(); }
    for (uint k0 = k_begin; k0 < k_end; k0 += 2u * uint(BK)) {
        STEP(k0, 0u)
        if (k0 + uint(BK) >= k_end)
            break;
        STEP(k0 + uint(BK), 1u)
    }
#else
    for (uint k0 = k_begin; k0 < k_end; k0 += uint(BK)) {
        stage(tid, 0u);
        memoryBarrierShared();
        barrier();
        if (k0 + uint(BK) < k_end)
            fetch(group, i_tile, k0 + uint(BK), k_end, k, tid, col, col_ok);
        multiply_slab(0u, tx, ty, acc);
        barrier(); // the slab is read by all before the next one overwrites it
    }
#endif

    TGL_UNROLL for (uint s = 0u; s < uint(RM); s++)
        TGL_UNROLL for (uint u = 0u; u < uint(RN); u++)
            TGL_UNROLL for (uint c = 0u; c < 4u; c++) {
                uint j = j_tile + (u * uint(TX) + tx) * 4u + c;
                if (j >= u_cols)
                    break;
                TGL_UNROLL for (uint r = 0u; r < 4u; r++) {
                    uint i = i_tile + (s * uint(TY) + ty) * 4u + r;
                    if (i < u_ocg)
                        conv_store(group, i, j, acc[s * uint(RN) + u][r][c]);
                }
            }
}

#version 430
// conv2d as an implicit GEMM through shared memory, for GPUs (see common/conv_io.glsl): a
// workgroup computes a BM x BN tile of one group's output (channels x output pixels), stepping
// over K in BK-deep slabs of the filter and of the on-the-fly im2col staged in shared memory, two
// slabs at a time: the next is staged while the current is multiplied, one barrier per slab (as
// gemm/gemm_tiled.comp). Each invocation holds TM x TN results as (TM/4) x (TN/4) blocks of 4x4
// strided across the tile, as in gemm/gemm_tiled.comp.
//
// Both operands go to shared memory as whole vec4s, never a component chosen at run time (which
// made NVIDIA's compiler branch per element): the filter loads as vec4s along K where F_VEC4
// (below), the im2col as vec4s of four neighbouring columns along one slab row. On the H100 the
// im2col's vec4s took the 64 x 64 tile from 0.401 to 0.341 ms on the batch-32 64-channel 56x56
// layer, ahead of any larger tile (docs/performance.md, Convolution).
#extension GL_GOOGLE_include_directive : enable
#include "common/locations.glsl"
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
// The im2col's vec4s per slab, and per invocation: the host keeps THREADS a divisor of B_VECS
// and a multiple of BN / 4, so each invocation stages the same four columns in every slab.
#define B_VECS (BN * BK / 4)
#define B_TURNS (B_VECS / THREADS)

layout(local_size_x = THREADS) in;

shared vec4 s_a[2][BK][BM / 4]; // s_a[slab][q][i / 4][i % 4] = filter(tile row i, slab kk q)
shared vec4 s_b[2][BK][BN / 4]; // s_b[slab][q][j / 4][j % 4] = im2col(slab kk q, tile column j)

// F_VEC4 (the host saw K and the filter's window offset in whole vec4s): the filter loads as
// vec4s along K and is stored transposed with one branch per vec4, uniform over a warp
// (common/kmajor_stage.glsl); else element by element, each to a component chosen at run time.
#ifdef F_VEC4
#include "common/kmajor_stage.glsl"
#define A_VECS (BM * BK / 4)
#define A_TURNS ((A_VECS + THREADS - 1) / THREADS) // tiles of more invocations than vec4s: one turn, part idle
#define A_SLOT(e) KMAJOR_SLOT(A_VECS, e)
vec4 r_a[A_TURNS];
#else
float r_a[A_FETCH];
#endif
vec4 r_b[B_TURNS];

// The invocation's four im2col columns (tile columns 4 (tid % (BN/4)) .. + 3), decoded once by
// main; a column past the output reads as zeros.
conv_col b_cols[4];
bool b_ok[4];

// Fetches slab k0 of the K range that ends at k_end into registers; k is the filter's row length.
void fetch(uint group, uint i_tile, uint k0, uint k_end, uint k, uint tid)
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
    TGL_UNROLL for (uint l = 0u; l < uint(B_TURNS); l++) {
        uint kk = k0 + (tid + l * uint(THREADS)) / uint(BN / 4);
        uvec3 t = conv_split(kk);
        TGL_UNROLL for (uint c = 0u; c < 4u; c++)
            r_b[l][c] = b_ok[c] && kk < k_end ? conv_tap(b_cols[c], t.x, t.y, t.z) : 0.0;
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
    TGL_UNROLL for (uint l = 0u; l < uint(B_TURNS); l++) {
        uint e = tid + l * uint(THREADS);
        s_b[slab][e / uint(BN / 4)][e % uint(BN / 4)] = r_b[l];
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
    TGL_UNROLL for (uint c = 0u; c < 4u; c++) {
        uint j = j_tile + tid % uint(BN / 4) * 4u + c;
        b_ok[c] = j < u_cols;
        b_cols[c] = conv_column(b_ok[c] ? j : 0u, group);
    }

    mat4 acc[RM * RN];
    TGL_UNROLL for (uint s = 0u; s < uint(RM * RN); s++)
        acc[s] = mat4(0.0);

    // Two slabs per turn, so each names its half of shared memory as a constant.
    fetch(group, i_tile, k_begin, k_end, k, tid);
    stage(tid, 0u);
    memoryBarrierShared();
    barrier();
#define STEP(k0, slab) { \
        bool more = (k0) + uint(BK) < k_end; \
        if (more) fetch(group, i_tile, (k0) + uint(BK), k_end, k, tid); \
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

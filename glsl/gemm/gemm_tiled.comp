#version 430
// GEMM through shared memory, for GPUs: a workgroup computes a BM x BN tile of C, stepping
// over k in BK-deep slabs of A and B staged in shared memory (stored k-major, so each
// invocation reads its operands as vec4s). Each invocation holds TM x TN results as
// (TM/4) x (TN/4) blocks of 4x4, strided across the tile so that neighbouring invocations
// read neighbouring vec4s. Workgroup (x, y) = tile of columns and rows, z = the product of the
// batch. Out-of-range elements of edge tiles load as 0 and are never stored.
// DOUBLE_SLAB: two slabs in shared memory, the next staged while the current is multiplied,
// so one barrier per slab instead of two (twice the shared memory).
#extension GL_GOOGLE_include_directive : enable
#include "common/locations.glsl"
#include "common/unroll.glsl"
#ifndef BM
#define BM 64
#define BN 64
#define BK 16
#define TM 4
#define TN 4
#define THREADS 256 // (BM / TM) * (BN / TN): layout qualifiers take literals only in GLSL 4.30
#endif
#include "common/gemm_io.glsl"

#define TX (BN / TN)
#define TY (BM / TM)
#define RM (TM / 4)
#define RN (TN / 4)

layout(local_size_x = THREADS) in;

#ifdef NV_UNROLL
// NVIDIA's compiler leaves some of these constant-bound loops rolled; unrolled, sgemm 4096^3 on
// the H100 went from 22.8 to 25.1 TFLOP/s and the f16 kernel at 128 x 128 from 1.2 to 23.0
// (the rolled form spilled). Other compilers ignore the pragma.
#pragma optionNV(unroll all)
#endif

#ifdef DOUBLE_SLAB
#define SLABS 2
#else
#define SLABS 1
#endif
shared vec4 s_a[SLABS][BK][BM / 4]; // s_a[slab][q][i / 4][i % 4] = A(tile row i, slab k q)
shared vec4 s_b[SLABS][BK][BN / 4]; // s_b[slab][q][j / 4][j % 4] = B(slab k q, tile column j)

// Staging goes through registers: the next slab is fetched from the buffers before the current
// one is multiplied, so its latency hides behind the arithmetic. The host picks tiles where
// every invocation fetches the same number of elements (BM * BK and BN * BK are multiples of
// 4 * THREADS).
#define A_FETCH (BM * BK / THREADS)
#define B_FETCH (BN * BK / THREADS)
// Whole vec4s wait in registers as they were loaded: binary16 ones still packed (half the
// registers; unpacked when staged), which kept the 128 x 256 f16 tile from spilling. Through
// buffer textures (TEX) texels arrive as floats, binary16 ones converted by the texture unit.
#if defined(F16) && !defined(TEX)
#define RAW4 uvec2
#define RAW4_ZERO uvec2(0u)
#define a_raw4(i) a_mem[(i) >> 2u]
#define b_raw4(i) b_mem[(i) >> 2u]
#define raw_unpack4(w) tgl_unpack4(w)
#else
#define RAW4 vec4
#define RAW4_ZERO vec4(0.0)
#define a_raw4(i) a_at4(i)
#define b_raw4(i) b_at4(i)
#define raw_unpack4(w) (w)
#endif
#ifdef A_VEC4
RAW4 r_a[A_FETCH / 4];
#else
float r_a[A_FETCH];
#endif
#ifdef B_VEC4
RAW4 r_b[B_FETCH / 4];
#else
float r_b[B_FETCH];
#endif

// Operands stored along k (A, and B when transposed) load as vec4s along k and are stored
// transposed, each element in a row's component of s_a / s_b (common/kmajor_stage.glsl).
#include "common/kmajor_stage.glsl"
#define A_SLOT(e) KMAJOR_SLOT(BM * BK / 4, e)
#define B_SLOT(e) KMAJOR_SLOT(BN * BK / 4, e)

// `check` false (a constant at each call) drops the bounds tests where the whole slab is inside
// the operands: 34.6 -> 38.3 TFLOP/s.
void fetch_a(uint base, uint i_tile, uint k0, uint tid, bool check)
{
#if defined(A_VEC4) && !defined(TRANS_A)
    TGL_UNROLL for (uint l = 0u; l < uint(A_FETCH / 4); l++) {
        uvec2 slot = A_SLOT(tid + l * uint(THREADS));
        uint gi = i_tile + slot.x, gp = k0 + slot.y;
        r_a[l] = !check || (gi < u_m && gp < u_k) ? a_raw4(base + a_index(gi, gp)) : RAW4_ZERO;
    }
#elif defined(A_VEC4)
    TGL_UNROLL for (uint l = 0u; l < uint(A_FETCH / 4); l++) {
        uint e = tid + l * uint(THREADS), gi = i_tile + (e % uint(BM / 4)) * 4u, gp = k0 + e / uint(BM / 4);
        r_a[l] = !check || (gi < u_m && gp < u_k) ? a_raw4(base + a_index(gi, gp)) : RAW4_ZERO;
    }
#else
    TGL_UNROLL for (uint l = 0u; l < uint(A_FETCH); l++) {
        uint e = tid + l * uint(THREADS);
#ifdef TRANS_A
        uint q = e / uint(BM), i = e % uint(BM);
#else
        uint i = e / uint(BK), q = e % uint(BK);
#endif
        uint gi = i_tile + i, gp = k0 + q;
        r_a[l] = !check || (gi < u_m && gp < u_k) ? a_at(base + a_index(gi, gp)) : 0.0;
    }
#endif
}

void store_a(uint tid, uint slab)
{
#if defined(A_VEC4) && !defined(TRANS_A)
    TGL_UNROLL for (uint l = 0u; l < uint(A_FETCH / 4); l++) {
        uvec2 slot = A_SLOT(tid + l * uint(THREADS));
        vec4 v = raw_unpack4(r_a[l]);
        STORE_KMAJOR(s_a[slab], slot.y, slot.x, v)
    }
#elif defined(A_VEC4)
    TGL_UNROLL for (uint l = 0u; l < uint(A_FETCH / 4); l++) {
        uint e = tid + l * uint(THREADS);
        s_a[slab][e / uint(BM / 4)][e % uint(BM / 4)] = raw_unpack4(r_a[l]);
    }
#else
    TGL_UNROLL for (uint l = 0u; l < uint(A_FETCH); l++) {
        uint e = tid + l * uint(THREADS);
#ifdef TRANS_A
        uint q = e / uint(BM), i = e % uint(BM);
#else
        uint i = e / uint(BK), q = e % uint(BK);
#endif
        s_a[slab][q][i >> 2u][i & 3u] = r_a[l];
    }
#endif
}

void fetch_b(uint base, uint j_tile, uint k0, uint tid, bool check)
{
#if defined(B_VEC4) && !defined(TRANS_B)
    TGL_UNROLL for (uint l = 0u; l < uint(B_FETCH / 4); l++) {
        uint e = tid + l * uint(THREADS), gj = j_tile + (e % uint(BN / 4)) * 4u, gp = k0 + e / uint(BN / 4);
        r_b[l] = !check || (gj < u_n && gp < u_k) ? b_raw4(base + b_index(gp, gj)) : RAW4_ZERO;
    }
#elif defined(B_VEC4)
    TGL_UNROLL for (uint l = 0u; l < uint(B_FETCH / 4); l++) {
        uvec2 slot = B_SLOT(tid + l * uint(THREADS));
        uint gj = j_tile + slot.x, gp = k0 + slot.y;
        r_b[l] = !check || (gj < u_n && gp < u_k) ? b_raw4(base + b_index(gp, gj)) : RAW4_ZERO;
    }
#else
    TGL_UNROLL for (uint l = 0u; l < uint(B_FETCH); l++) {
        uint e = tid + l * uint(THREADS);
#ifdef TRANS_B
        uint j = e / uint(BK), q = e % uint(BK);
#else
        uint q = e / uint(BN), j = e % uint(BN);
#endif
        uint gj = j_tile + j, gp = k0 + q;
        r_b[l] = !check || (gj < u_n && gp < u_k) ? b_at(base + b_index(gp, gj)) : 0.0;
    }
#endif
}

void store_b(uint tid, uint slab)
{
#if defined(B_VEC4) && !defined(TRANS_B)
    TGL_UNROLL for (uint l = 0u; l < uint(B_FETCH / 4); l++) {
        uint e = tid + l * uint(THREADS);
        s_b[slab][e / uint(BN / 4)][e % uint(BN / 4)] = raw_unpack4(r_b[l]);
    }
#elif defined(B_VEC4)
    TGL_UNROLL for (uint l = 0u; l < uint(B_FETCH / 4); l++) {
        uvec2 slot = B_SLOT(tid + l * uint(THREADS));
        vec4 v = raw_unpack4(r_b[l]);
        STORE_KMAJOR(s_b[slab], slot.y, slot.x, v)
    }
#else
    TGL_UNROLL for (uint l = 0u; l < uint(B_FETCH); l++) {
        uint e = tid + l * uint(THREADS);
#ifdef TRANS_B
        uint j = e / uint(BK), q = e % uint(BK);
#else
        uint q = e / uint(BN), j = e % uint(BN);
#endif
        s_b[slab][q][j >> 2u][j & 3u] = r_b[l];
    }
#endif
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
    uint t = gl_WorkGroupID.z;
    uint a_base = u_a_off + t * u_stride_a, b_base = u_b_off + t * u_stride_b;
    uint c_base = u_c_off + t * u_stride_c;

    mat4 acc[RM * RN]; // acc[s * RN + u][r] = row r of block (s, u)
    TGL_UNROLL for (uint s = 0u; s < uint(RM * RN); s++)
        acc[s] = mat4(0.0);

    fetch_a(a_base, i_tile, 0u, tid, true);
    fetch_b(b_base, j_tile, 0u, tid, true);
    // Later slabs are fetched without bounds tests unless the tile reaches past C's edge or the
    // slab past k. (The first is always tested: testing it like the others, in two copies of the
    // fetch, ran 128 x 256 at 41.0 TFLOP/s instead of 43.9.)
    bool interior = i_tile + uint(BM) <= u_m && j_tile + uint(BN) <= u_n;
#define FETCH(k) \
    if (interior && (k) + uint(BK) <= u_k) { \
        fetch_a(a_base, i_tile, k, tid, false); \
        fetch_b(b_base, j_tile, k, tid, false); \
    } else { \
        fetch_a(a_base, i_tile, k, tid, true); \
        fetch_b(b_base, j_tile, k, tid, true); \
    }
#ifdef DOUBLE_SLAB
    store_a(tid, 0u);
    store_b(tid, 0u);
    memoryBarrierShared();
    barrier();
    // The loop runs two slabs per turn so each names its slab in shared memory as a constant (a
    // slab index held in a variable ran NVIDIA's 128 x 256 16 x 8 tile at 42.7 TFLOP/s instead of
    // 43.9; the 8 x 8 form of it the other way round, 43.1 against 31.9). The barrier
    // ends a slab's multiplication before the next turn overwrites it; the other slab, written
    // meanwhile, is nobody's to read until then.
#define STEP(k, slab) { \
        bool more = (k) + uint(BK) < u_k; \
        if (more) { FETCH((k) + uint(BK)) } \
        multiply_slab(slab, tx, ty, acc); \
        if (more) { store_a(tid, 1u - (slab)); store_b(tid, 1u - (slab)); } \
        memoryBarrierShared(); \
        barrier(); }
    for (uint k0 = 0u; k0 < u_k; k0 += 2u * uint(BK)) {
        STEP(k0, 0u)
        if (k0 + uint(BK) >= u_k)
            break;
        STEP(k0 + uint(BK), 1u)
    }
#else
    for (uint k0 = 0u; k0 < u_k; k0 += uint(BK)) {
        store_a(tid, 0u);
        store_b(tid, 0u);
        memoryBarrierShared();
        barrier();
        if (k0 + uint(BK) < u_k) {
            FETCH(k0 + uint(BK))
        }
        multiply_slab(0u, tx, ty, acc);
        barrier(); // the slab is read by all before the next one overwrites it
    }
#endif

#ifdef EPILOGUE
    vec4 stage[RM * RN * 4];
    TGL_UNROLL for (uint e = 0u; e < uint(RM * RN * 4); e++)
        stage[e] = acc[e >> 2u][e & 3u];
    for (uint e = 0u; e < tgl_epilogue_trips(uint(RM * RN * 4)); e++) {
        uint blk = e >> 2u, s = blk / uint(RN), u = blk - s * uint(RN);
        uint i = i_tile + (s * uint(TY) + ty) * 4u + (e & 3u), j = j_tile + (u * uint(TX) + tx) * 4u;
        if (i < u_m && j < u_n)
            c_store(c_base + i * u_ldc + j, j, stage[e], min(4u, u_n - j));
    }
#else
    TGL_UNROLL for (uint s = 0u; s < uint(RM); s++)
        TGL_UNROLL for (uint u = 0u; u < uint(RN); u++) {
            uint j = j_tile + (u * uint(TX) + tx) * 4u;
            if (j >= u_n)
                continue;
            TGL_UNROLL for (uint r = 0u; r < 4u; r++) {
                uint i = i_tile + (s * uint(TY) + ty) * 4u + r;
                if (i < u_m)
                    c_store(c_base + i * u_ldc + j, j, acc[s * uint(RN) + u][r], min(4u, u_n - j));
            }
        }
#endif
}

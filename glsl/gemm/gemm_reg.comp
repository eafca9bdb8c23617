#version 430
// GEMM without shared memory: each invocation computes a TM x TN block of C (4 or 8 each) as
// 4x4 blocks, from 4x4 blocks of A and B loaded straight from the buffers (or, with A_TEX /
// B_TEX, through buffer textures over the same buffers: llvmpipe fetches texels with gathers,
// where every SSBO load is a loop over its SIMD lanes), accumulated as mat4 products. For
// llvmpipe, where a barrier switches every coroutine of the workgroup so a shared-memory tile
// loses to this, and for thin products on GPUs. Workgroup (x, y) = (WG_X, WG_Y) blocks of
// columns and rows (ROWS_X: of rows and columns, so that llvmpipe's SIMD lanes, which run along
// x, fill on a product a few columns wide), z = the product of the batch.
#extension GL_GOOGLE_include_directive : enable
#include "common/locations.glsl"
#include "common/unroll.glsl"
#ifndef WG_X
#define WG_X 8
#define WG_Y 8
#endif
#ifndef TM
#define TM 4
#define TN 4
#endif
#define RM (TM / 4)
#define RN (TN / 4)
#include "common/gemm_io.glsl"

layout(local_size_x = WG_X, local_size_y = WG_Y) in;

// Y with Y[r] = A(i0 + r, p .. p + 3). Rows past m are clamped to the last row (their results
// are never stored), so loads stay inside the matrix.
mat4 load_a(uint base, uint i0, uint p)
{
    uint last = u_m - 1u;
#if defined(A_VEC4) && !defined(TRANS_A)
    return mat4(a_at4(base + a_index(min(i0, last), p)), a_at4(base + a_index(min(i0 + 1u, last), p)),
                a_at4(base + a_index(min(i0 + 2u, last), p)), a_at4(base + a_index(min(i0 + 3u, last), p)));
#elif defined(A_VEC4)
    // A^T stored: a vector runs along m; m is a multiple of 4 here, so a block starting inside
    // is whole (blocks past m, from TM = 8, load the last one instead).
    i0 = min(i0, u_m - 4u);
    return transpose(mat4(a_at4(base + a_index(i0, p)), a_at4(base + a_index(i0, p + 1u)),
                          a_at4(base + a_index(i0, p + 2u)), a_at4(base + a_index(i0, p + 3u))));
#else
    mat4 y;
    TGL_UNROLL for (uint r = 0u; r < 4u; r++) {
        uint i = min(i0 + r, last);
        y[r] = vec4(a_at(base + a_index(i, p)), a_at(base + a_index(i, p + 1u)),
                    a_at(base + a_index(i, p + 2u)), a_at(base + a_index(i, p + 3u)));
    }
    return y;
#endif
}

// X with X[q] = B(p + q, j0 .. j0 + 3); columns past n are clamped like rows of A.
mat4 load_b(uint base, uint p, uint j0)
{
    uint last = u_n - 1u;
#if defined(B_VEC4) && !defined(TRANS_B)
    j0 = min(j0, u_n - 4u); // as for A^T above
    return mat4(b_at4(base + b_index(p, j0)), b_at4(base + b_index(p + 1u, j0)),
                b_at4(base + b_index(p + 2u, j0)), b_at4(base + b_index(p + 3u, j0)));
#elif defined(B_VEC4)
    return transpose(mat4(b_at4(base + b_index(p, min(j0, last))), b_at4(base + b_index(p, min(j0 + 1u, last))),
                          b_at4(base + b_index(p, min(j0 + 2u, last))),
                          b_at4(base + b_index(p, min(j0 + 3u, last)))));
#else
    mat4 x;
    uint j1 = min(j0 + 1u, last), j2 = min(j0 + 2u, last), j3 = min(j0 + 3u, last);
    j0 = min(j0, last);
    TGL_UNROLL for (uint q = 0u; q < 4u; q++)
        x[q] = vec4(b_at(base + b_index(p + q, j0)), b_at(base + b_index(p + q, j1)),
                    b_at(base + b_index(p + q, j2)), b_at(base + b_index(p + q, j3)));
    return x;
#endif
}

void main()
{
#ifdef ROWS_X
    uint i0 = gl_GlobalInvocationID.x * uint(TM), j0 = gl_GlobalInvocationID.y * uint(TN);
#else
    uint j0 = gl_GlobalInvocationID.x * uint(TN), i0 = gl_GlobalInvocationID.y * uint(TM);
#endif
    if (i0 >= u_m || j0 >= u_n)
        return;
    uint t = gl_WorkGroupID.z;
    uint a_base = u_a_off + t * u_stride_a, b_base = u_b_off + t * u_stride_b;
    uint c_base = u_c_off + t * u_stride_c;

    // acc[s * RN + u][r] = row i0 + 4s + r, columns j0 + 4u ..; (X * Y)[r][c] = sum_q B(q, c) A(r, q).
    mat4 acc[RM * RN];
    TGL_UNROLL for (uint s = 0u; s < uint(RM * RN); s++)
        acc[s] = mat4(0.0);
    uint k4 = u_k & ~3u;
    for (uint p = 0u; p < k4; p += 4u) {
        mat4 x[RN], y[RM];
        TGL_UNROLL for (uint u = 0u; u < uint(RN); u++)
            x[u] = load_b(b_base, p, j0 + 4u * u);
        TGL_UNROLL for (uint s = 0u; s < uint(RM); s++)
            y[s] = load_a(a_base, i0 + 4u * s, p);
        TGL_UNROLL for (uint s = 0u; s < uint(RM); s++)
            TGL_UNROLL for (uint u = 0u; u < uint(RN); u++)
                acc[s * uint(RN) + u] += x[u] * y[s];
    }
    uint last_i = u_m - 1u, last_j = u_n - 1u;
    for (uint p = k4; p < u_k; p++) {
        TGL_UNROLL for (uint s = 0u; s < uint(RM); s++) {
            uint i = i0 + 4u * s;
            vec4 a_col = vec4(a_at(a_base + a_index(min(i, last_i), p)), a_at(a_base + a_index(min(i + 1u, last_i), p)),
                              a_at(a_base + a_index(min(i + 2u, last_i), p)),
                              a_at(a_base + a_index(min(i + 3u, last_i), p)));
            TGL_UNROLL for (uint u = 0u; u < uint(RN); u++) {
                uint j = j0 + 4u * u;
                vec4 b_row = vec4(b_at(b_base + b_index(p, min(j, last_j))), b_at(b_base + b_index(p, min(j + 1u, last_j))),
                                  b_at(b_base + b_index(p, min(j + 2u, last_j))),
                                  b_at(b_base + b_index(p, min(j + 3u, last_j))));
                acc[s * uint(RN) + u] += outerProduct(b_row, a_col);
            }
        }
    }
#ifdef EPILOGUE
    vec4 stage[RM * RN * 4];
    TGL_UNROLL for (uint e = 0u; e < uint(RM * RN * 4); e++)
        stage[e] = acc[e >> 2u][e & 3u];
    for (uint e = 0u; e < tgl_epilogue_trips(uint(RM * RN * 4)); e++) {
        uint blk = e >> 2u, s = blk / uint(RN), u = blk - s * uint(RN);
        uint i = i0 + 4u * s + (e & 3u), j = j0 + 4u * u;
        if (i < u_m && j < u_n)
            c_store(c_base + i * u_ldc + j, j, stage[e], min(4u, u_n - j));
    }
#else
    TGL_UNROLL for (uint s = 0u; s < uint(RM); s++)
        TGL_UNROLL for (uint u = 0u; u < uint(RN); u++) {
            uint j = j0 + 4u * u;
            TGL_UNROLL for (uint r = 0u; r < 4u; r++) {
                uint i = i0 + 4u * s + r;
                if (i < u_m && j < u_n)
                    c_store(c_base + i * u_ldc + j, j, acc[s * uint(RN) + u][r], min(4u, u_n - j));
            }
        }
#endif
}

// Staging of a tile operand stored along k (gemm/gemm_tiled.comp's A, and B when transposed;
// conv/conv2d_tiled.comp's filter) into a k-major slab of shared memory: the operand loads as
// vec4s along k and each element goes to its tile row's component, s[q][row / 4][row % 4], so
// the multiplication reads its operands as vec4s. Needs BK (a multiple of 4) and TGL_UNROLL.
//
// Vec4 `e` of a slab goes to (tile row, k offset in the slab). Where the slab's vec4s come in
// whole warps of 4 x 32, the row's low two bits (its component) are taken from e's bits 5-6, the
// same over a warp: the stores' branch on the component (STORE_KMAJOR) is then uniform. On the
// H100 (sgemm 4096^3, 128 x 256 tile) the uniform branch took 38.3 to 42.0 TFLOP/s.
uvec2 slot_by_warp(uint e)
{
    uint rest = (e & 31u) | ((e >> 7u) << 5u);
    return uvec2((rest / uint(BK / 4)) * 4u + ((e >> 5u) & 3u), (rest % uint(BK / 4)) * 4u);
}

uvec2 slot_in_order(uint e)
{
    return uvec2(e / uint(BK / 4), (e % uint(BK / 4)) * 4u);
}

// The slot of vec4 `e` of a slab of `vecs` vec4s (a constant): by warp where they come in whole
// warps of 4 x 32, else in order. The condition is constant, so compilers keep one side.
#define KMAJOR_SLOT(vecs, e) ((uint(vecs) % 128u == 0u) ? slot_by_warp(e) : slot_in_order(e))

// s[q + c][row / 4][row % 4] = v[c]: one branch on the component, where writing v[c] to a
// component chosen at run time made NVIDIA's compiler branch per element (31.0 -> 34.6 TFLOP/s).
#define STORE_KMAJOR(s, q, row, v) { \
        uint x_ = (row) >> 2u, r_ = (row) & 3u; \
        if (r_ == 0u) { TGL_UNROLL for (uint c = 0u; c < 4u; c++) s[(q) + c][x_].x = (v)[c]; } \
        else if (r_ == 1u) { TGL_UNROLL for (uint c = 0u; c < 4u; c++) s[(q) + c][x_].y = (v)[c]; } \
        else if (r_ == 2u) { TGL_UNROLL for (uint c = 0u; c < 4u; c++) s[(q) + c][x_].z = (v)[c]; } \
        else { TGL_UNROLL for (uint c = 0u; c < 4u; c++) s[(q) + c][x_].w = (v)[c]; } }

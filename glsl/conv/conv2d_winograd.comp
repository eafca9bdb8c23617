#version 430
// conv2d of a 3x3 kernel, stride 1, dilation 1, one group, as Winograd's F(TILE x TILE, 3x3) (the
// device profile's conv_winograd: TILE 2 or 4): each TILE x TILE tile of outputs is
// A^T [(G g G^T) . (B^T d B)] A, d the ALPHA x ALPHA input patch under it (ALPHA = TILE + 2), so
// the ALPHA^2 products of the transformed patches, summed over input channels, are ALPHA^2 GEMMs
// (gl_conv2d.c, run_winograd): per tile and channel pair 16 multiplies for 4 outputs (F(2x2)) or
// 36 for 16 (F(4x4)) where the direct sum has 9 per output (2.25x or 4x fewer flops). F(4x4)'s
// transforms (Lavin and Gray's, interpolation points 0, +-1, +-2 and infinity) have entries up
// to 8 where F(2x2)'s are 1: more rounding in each output's transformed terms, still far inside
// the f32 products' tolerance (the tests hold both to the CPU backend's double sums). Three
// passes around the host's batched GEMM; the operands, uniforms and index arithmetic are
// common/conv_io.glsl's.
// FILTER: an invocation per (output channel oc, input channel c): U = G g G^T of the 3x3 filter
// g, its element xi (row-major ALPHA x ALPHA) stored at (xi * u_oc + oc) * u_c + c of the output
// binding (ALPHA^2 row-major u_oc x u_c matrices).
// INPUT: an invocation per (tile t, input channel c = workgroup y): V = B^T d B, element xi at
// (xi * u_c + c) * u_ld + t (ALPHA^2 row-major u_c x u_ld matrices; u_cols tiles: images of the
// slab, then tile rows, then tile columns; d is 0 in the padding and past the input). The rows'
// length u_ld rounds u_cols up to a multiple of 4, so the GEMM loads them as vec4s (llvmpipe,
// 256 x 98 x 256: 15 GFLOP/s, 256 x 100 x 256: 36); t from u_cols to u_ld writes zeros.
// OUTPUT: an invocation per (tile t, output channel oc = workgroup y): the GEMMs' products M,
// read from the input binding laid out as V with u_oc rows, turned into the tile's up to
// TILE^2 outputs (those inside the output), each plus the bias, then the epilogue (conv_store).
// An output that comes out NaN or infinite is summed again directly from the convolution's
// input (binding 4) and filter: an infinite input reaches the transformed terms with both
// signs, so Winograd's sum can be NaN where the direct sum is +-Inf (binding 4 passes ES 3.1's
// four storage buffers: desktop GL only, tgl_gl_es_excluded).
#extension GL_GOOGLE_include_directive : enable
#include "common/locations.glsl"
#ifndef WG_X
#define WG_X 64
#endif
#if !defined(FILTER) && !defined(INPUT) && !defined(OUTPUT)
#define INPUT
#endif
#ifndef TILE
#define TILE 2
#endif
#if TILE != 2 && TILE != 4
#error "TILE is 2 or 4"
#endif
#define ALPHA (TILE + 2)
#include "common/conv_io.glsl"

layout(local_size_x = WG_X) in;
#if defined(INPUT) || defined(OUTPUT)
layout(location = LOC_CONV_LD) uniform uint u_ld;
#endif

// The transformed tile's image, tile row and tile column for tile t (t < 2^22: the host checks).
uvec3 tile_of(uint t, uint tiles_w, uint tiles_hw)
{
    uint img = conv_div(t, tiles_hw), r = t - img * tiles_hw, ty = conv_div(r, tiles_w);
    return uvec3(img, ty, r - ty * tiles_w);
}

#ifdef INPUT
// Row y of the padded input at columns x0..x0+3 of channel plane `base`, 0 outside the input.
vec4 input_row(uint base, int y, int x0)
{
    vec4 r = vec4(0.0);
    if (y < 0 || uint(y) >= u_h)
        return r;
    uint at = base + uint(y) * u_w;
    for (int k = 0; k < 4; k++) {
        int x = x0 + k;
        if (x >= 0 && uint(x) < u_w)
            r[k] = in_at(at + uint(x));
    }
    return r;
}

#if TILE == 4
// Columns x0+4 and x0+5 of row y, as input_row.
vec2 input_row_tail(uint base, int y, int x0)
{
    vec2 r = vec2(0.0);
    if (y < 0 || uint(y) >= u_h)
        return r;
    uint at = base + uint(y) * u_w;
    for (int k = 0; k < 2; k++) {
        int x = x0 + 4 + k;
        if (x >= 0 && uint(x) < u_w)
            r[k] = in_at(at + uint(x));
    }
    return r;
}
#endif

// v . B for a row v of the patch (B^T's rows: (1,0,-1,0), (0,1,1,0), (0,-1,1,0), (0,1,0,-1)).
vec4 times_b(vec4 v)
{
    return vec4(v.x - v.z, v.y + v.z, v.z - v.y, v.y - v.w);
}
#endif

#ifdef FILTER
// v . G^T for a row v = (a, b, c) of the filter (G's rows: (1,0,0), (1/2,1/2,1/2),
// (1/2,-1/2,1/2), (0,0,1)); the halves are exact.
vec4 times_gt(vec3 v)
{
    return vec4(v.x, 0.5 * (v.x + v.y + v.z), 0.5 * (v.x - v.y + v.z), v.z);
}
#endif

#if TILE == 4
// F(4x4, 3x3)'s three transforms as macros over six (G: three) operands of any one type, so the
// same lines combine whole rows (vec4s and vec2s of a row's columns 0-3 and 4-5) and then the
// columns within a row (floats). o: an array the results go into.
// B^T's rows: (4,0,-5,0,1,0), (0,-4,-4,1,1,0), (0,4,-4,-1,1,0), (0,-2,-1,2,1,0), (0,2,-1,-2,1,0),
// (0,4,0,-5,0,1).
#define TIMES_BT(o, a0, a1, a2, a3, a4, a5)      \
    o[0] = 4.0 * a0 - 5.0 * a2 + a4;             \
    o[1] = (a3 + a4) - 4.0 * (a1 + a2);          \
    o[2] = (a4 - a3) + 4.0 * (a1 - a2);          \
    o[3] = (a4 - a2) + 2.0 * (a3 - a1);          \
    o[4] = (a4 - a2) - 2.0 * (a3 - a1);          \
    o[5] = 4.0 * a1 - 5.0 * a3 + a5
// G's rows: (1/4,0,0), (-1/6,-1/6,-1/6), (-1/6,1/6,-1/6), (1/24,1/12,1/6), (1/24,-1/12,1/6),
// (0,0,1).
#define TIMES_G(o, a0, a1, a2)                                   \
    o[0] = 0.25 * a0;                                            \
    o[1] = (-1.0 / 6.0) * (a0 + a1 + a2);                        \
    o[2] = (-1.0 / 6.0) * (a0 - a1 + a2);                        \
    o[3] = (1.0 / 24.0) * a0 + (1.0 / 12.0) * a1 + (1.0 / 6.0) * a2; \
    o[4] = (1.0 / 24.0) * a0 - (1.0 / 12.0) * a1 + (1.0 / 6.0) * a2; \
    o[5] = a2
// A^T's rows: (1,1,1,1,1,0), (0,1,-1,2,-2,0), (0,1,1,4,4,0), (0,1,-1,8,-8,1).
#define TIMES_AT(o, a0, a1, a2, a3, a4, a5)      \
    o[0] = a0 + a1 + a2 + a3 + a4;               \
    o[1] = (a1 - a2) + 2.0 * (a3 - a4);          \
    o[2] = (a1 + a2) + 4.0 * (a3 + a4);          \
    o[3] = (a1 - a2) + 8.0 * (a3 - a4) + a5
#endif

#ifdef OUTPUT
layout(std430, binding = 4) readonly buffer Image { float img_mem[]; };
layout(location = LOC_CONV_IMG_OFF) uniform uint u_img_off;

// v, or where it is NaN or infinite the direct sum (no bias) for output (oc, img, oy, ox), the
// padding zeros that multiply the filter as in the other kernels (and PyTorch): an infinite tap
// over the padding gives NaN.
float finite_or_direct(float v, uint oc, uint img, uint oy, uint ox)
{
    if (!isnan(v) && !isinf(v))
        return v;
    float acc = 0.0;
    for (uint c = 0u; c < u_c; c++) {
        uint f = u_f_off + (oc * u_c + c) * 9u, plane = u_img_off + (img * u_c + c) * u_h * u_w;
        for (uint ky = 0u; ky < 3u; ky++) {
            int y = int(oy + ky) - int(u_ph);
            for (uint kx = 0u; kx < 3u; kx++) {
                int x = int(ox + kx) - int(u_pw);
                bool inside = y >= 0 && uint(y) < u_h && x >= 0 && uint(x) < u_w;
                acc += f_at(f + ky * 3u + kx) * (inside ? img_mem[plane + uint(y) * u_w + uint(x)] : 0.0);
            }
        }
    }
    return acc;
}
#endif

void main()
{
    uint x = gl_GlobalInvocationID.x, row = gl_GlobalInvocationID.y;
    uint tiles_w = (u_ow + uint(TILE) - 1u) / uint(TILE), tiles_hw = tiles_w * ((u_oh + uint(TILE) - 1u) / uint(TILE));
#ifdef FILTER
    if (x >= u_oc * u_c)
        return;
    uint at = u_f_off + x * 9u;
    vec3 g0 = vec3(f_at(at), f_at(at + 1u), f_at(at + 2u));
    vec3 g1 = vec3(f_at(at + 3u), f_at(at + 4u), f_at(at + 5u));
    vec3 g2 = vec3(f_at(at + 6u), f_at(at + 7u), f_at(at + 8u));
#if TILE == 4
    vec3 r[6];
    TIMES_G(r, g0, g1, g2);
    uint plane = u_oc * u_c, dst = u_out_off + x;
    for (uint i = 0u; i < 6u; i++) {
        float u[6];
        TIMES_G(u, r[i].x, r[i].y, r[i].z);
        for (uint j = 0u; j < 6u; j++)
            out_mem[dst + (i * 6u + j) * plane] = u[j];
    }
#else
    vec4 u[4];
    u[0] = times_gt(g0);
    u[1] = times_gt(0.5 * (g0 + g1 + g2));
    u[2] = times_gt(0.5 * (g0 - g1 + g2));
    u[3] = times_gt(g2);
    uint plane = u_oc * u_c, dst = u_out_off + x;
    for (uint i = 0u; i < 4u; i++)
        for (uint j = 0u; j < 4u; j++)
            out_mem[dst + (i * 4u + j) * plane] = u[i][j];
#endif
#elif defined(INPUT)
    if (x >= u_ld)
        return;
    if (x >= u_cols) { // the rows' padding
        for (uint xi = 0u; xi < uint(ALPHA * ALPHA); xi++)
            out_mem[u_out_off + (xi * u_c + row) * u_ld + x] = 0.0;
        return;
    }
    uvec3 t = tile_of(x, tiles_w, tiles_hw);
    uint base = u_in_off + (t.x * u_c + row) * u_h * u_w;
    int y0 = int(uint(TILE) * t.y) - int(u_ph), x0 = int(uint(TILE) * t.z) - int(u_pw);
#if TILE == 4
    vec4 dl[6], wl[6];
    vec2 dh[6], wh[6];
    for (int k = 0; k < 6; k++) {
        dl[k] = input_row(base, y0 + k, x0);
        dh[k] = input_row_tail(base, y0 + k, x0);
    }
    TIMES_BT(wl, dl[0], dl[1], dl[2], dl[3], dl[4], dl[5]);
    TIMES_BT(wh, dh[0], dh[1], dh[2], dh[3], dh[4], dh[5]);
    uint plane = u_c * u_ld, dst = u_out_off + row * u_ld + x;
    for (uint i = 0u; i < 6u; i++) {
        float v[6];
        TIMES_BT(v, wl[i].x, wl[i].y, wl[i].z, wl[i].w, wh[i].x, wh[i].y);
        for (uint j = 0u; j < 6u; j++)
            out_mem[dst + (i * 6u + j) * plane] = v[j];
    }
#else
    vec4 d0 = input_row(base, y0, x0), d1 = input_row(base, y0 + 1, x0);
    vec4 d2 = input_row(base, y0 + 2, x0), d3 = input_row(base, y0 + 3, x0);
    vec4 v[4];
    v[0] = times_b(d0 - d2);
    v[1] = times_b(d1 + d2);
    v[2] = times_b(d2 - d1);
    v[3] = times_b(d1 - d3);
    uint plane = u_c * u_ld, dst = u_out_off + row * u_ld + x;
    for (uint i = 0u; i < 4u; i++)
        for (uint j = 0u; j < 4u; j++)
            out_mem[dst + (i * 4u + j) * plane] = v[i][j];
#endif
#else
    if (x >= u_cols)
        return;
    uint plane = u_oc * u_ld, src = u_in_off + row * u_ld + x;
#if TILE == 4
    vec4 ml[6], sl[4];
    vec2 mh[6], sh[4];
    for (uint i = 0u; i < 6u; i++) {
        uint at = src + (i * 6u) * plane;
        ml[i] = vec4(in_at(at), in_at(at + plane), in_at(at + 2u * plane), in_at(at + 3u * plane));
        mh[i] = vec2(in_at(at + 4u * plane), in_at(at + 5u * plane));
    }
    TIMES_AT(sl, ml[0], ml[1], ml[2], ml[3], ml[4], ml[5]);
    TIMES_AT(sh, mh[0], mh[1], mh[2], mh[3], mh[4], mh[5]);
    uvec3 t = tile_of(x, tiles_w, tiles_hw);
    uint oy = 4u * t.y, ox = 4u * t.z;
    vec4 y[4];
    bool finite = true;
    for (uint i = 0u; i < 4u; i++) {
        TIMES_AT(y[i], sl[i].x, sl[i].y, sl[i].z, sl[i].w, sh[i].x, sh[i].y);
        finite = finite && !any(isnan(y[i])) && !any(isinf(y[i]));
    }
    // the direct sums out of the store loop: llvmpipe runs its branches under a mask, lane by lane
    if (!finite)
        for (uint i = 0u; i < 4u; i++)
            for (uint j = 0u; j < 4u; j++)
                y[i][j] = finite_or_direct(y[i][j], row, t.x, oy + i, ox + j);
    for (uint i = 0u; i < 4u; i++) {
        uint col = (t.x * u_oh + oy + i) * u_ow + ox;
        for (uint j = 0u; j < 4u; j++)
            if (oy + i < u_oh && ox + j < u_ow)
                conv_store(0u, row, col + j, y[i][j]);
    }
#else
    vec4 m[4];
    for (uint i = 0u; i < 4u; i++)
        m[i] = vec4(in_at(src + (i * 4u) * plane), in_at(src + (i * 4u + 1u) * plane),
                    in_at(src + (i * 4u + 2u) * plane), in_at(src + (i * 4u + 3u) * plane));
    // A^T's rows: (1,1,1,0), (0,1,-1,-1), on the rows, then on the columns
    vec4 s0 = m[0] + m[1] + m[2], s1 = m[1] - m[2] - m[3];
    vec2 y0 = vec2(s0.x + s0.y + s0.z, s0.y - s0.z - s0.w), y1 = vec2(s1.x + s1.y + s1.z, s1.y - s1.z - s1.w);
    uvec3 t = tile_of(x, tiles_w, tiles_hw);
    uint oy = 2u * t.y, ox = 2u * t.z, col = (t.x * u_oh + oy) * u_ow + ox;
    conv_store(0u, row, col, finite_or_direct(y0.x, row, t.x, oy, ox));
    if (ox + 1u < u_ow)
        conv_store(0u, row, col + 1u, finite_or_direct(y0.y, row, t.x, oy, ox + 1u));
    if (oy + 1u < u_oh) {
        conv_store(0u, row, col + u_ow, finite_or_direct(y1.x, row, t.x, oy + 1u, ox));
        if (ox + 1u < u_ow)
            conv_store(0u, row, col + u_ow + 1u, finite_or_direct(y1.y, row, t.x, oy + 1u, ox + 1u));
    }
#endif
#endif
}

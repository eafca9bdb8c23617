#version 430
// conv2d of a 3x3 kernel, stride 1, dilation 1, one group, as Winograd's F(2x2, 3x3) (the device
// profile's conv_winograd): each 2x2 tile of outputs is A^T [(G g G^T) . (B^T d B)] A, d the
// 4x4 input patch under it, so the 16 products of the 4x4 transformed patches, summed over
// input channels, are 16 GEMMs (gl_conv2d.c, run_winograd) of 16 multiplies per tile and channel
// pair where the direct sum has 36 (2.25x fewer flops). Three passes around the host's batched
// GEMM; the operands, uniforms and index arithmetic are common/conv_io.glsl's.
// FILTER: an invocation per (output channel oc, input channel c): U = G g G^T of the 3x3 filter
// g, its element xi (row-major 4x4) stored at (xi * u_oc + oc) * u_c + c of the output binding
// (16 row-major u_oc x u_c matrices).
// INPUT: an invocation per (tile t, input channel c = workgroup y): V = B^T d B, element xi at
// (xi * u_c + c) * u_cols + t (16 row-major u_c x tiles matrices; u_cols tiles: images of the
// slab, then tile rows, then tile columns; d is 0 in the padding and past the input).
// OUTPUT: an invocation per (tile t, output channel oc = workgroup y): the GEMMs' products M,
// read from the input binding laid out as V with u_oc rows, turned into the tile's up to 4
// outputs (those inside the output), each plus the bias, then the epilogue (conv_store). An
// output that comes out NaN or infinite is summed again directly from the convolution's input
// (binding 4) and filter: an infinite input reaches the transformed terms with both signs, so
// Winograd's sum can be NaN where the direct sum is +-Inf (binding 4 passes ES 3.1's four
// storage buffers: desktop GL only, tgl_gl_es_excluded).
#extension GL_GOOGLE_include_directive : enable
#include "common/locations.glsl"
#ifndef WG_X
#define WG_X 64
#endif
#if !defined(FILTER) && !defined(INPUT) && !defined(OUTPUT)
#define INPUT
#endif
#include "common/conv_io.glsl"

layout(local_size_x = WG_X) in;

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

#ifdef OUTPUT
layout(std430, binding = 4) readonly buffer Image { float img_mem[]; };
layout(location = LOC_CONV_IMG_OFF) uniform uint u_img_off;

// v, or where it is NaN or infinite the direct sum (no bias) for output (oc, img, oy, ox).
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
                if (y >= 0 && uint(y) < u_h && x >= 0 && uint(x) < u_w)
                    acc += f_at(f + ky * 3u + kx) * img_mem[plane + uint(y) * u_w + uint(x)];
            }
        }
    }
    return acc;
}
#endif

void main()
{
    uint x = gl_GlobalInvocationID.x, row = gl_GlobalInvocationID.y;
    uint tiles_w = (u_ow + 1u) / 2u, tiles_hw = tiles_w * ((u_oh + 1u) / 2u);
#ifdef FILTER
    if (x >= u_oc * u_c)
        return;
    uint at = u_f_off + x * 9u;
    vec3 g0 = vec3(f_at(at), f_at(at + 1u), f_at(at + 2u));
    vec3 g1 = vec3(f_at(at + 3u), f_at(at + 4u), f_at(at + 5u));
    vec3 g2 = vec3(f_at(at + 6u), f_at(at + 7u), f_at(at + 8u));
    vec4 u[4];
    u[0] = times_gt(g0);
    u[1] = times_gt(0.5 * (g0 + g1 + g2));
    u[2] = times_gt(0.5 * (g0 - g1 + g2));
    u[3] = times_gt(g2);
    uint plane = u_oc * u_c, dst = u_out_off + x;
    for (uint i = 0u; i < 4u; i++)
        for (uint j = 0u; j < 4u; j++)
            out_mem[dst + (i * 4u + j) * plane] = u[i][j];
#elif defined(INPUT)
    if (x >= u_cols)
        return;
    uvec3 t = tile_of(x, tiles_w, tiles_hw);
    uint base = u_in_off + (t.x * u_c + row) * u_h * u_w;
    int y0 = int(2u * t.y) - int(u_ph), x0 = int(2u * t.z) - int(u_pw);
    vec4 d0 = input_row(base, y0, x0), d1 = input_row(base, y0 + 1, x0);
    vec4 d2 = input_row(base, y0 + 2, x0), d3 = input_row(base, y0 + 3, x0);
    vec4 v[4];
    v[0] = times_b(d0 - d2);
    v[1] = times_b(d1 + d2);
    v[2] = times_b(d2 - d1);
    v[3] = times_b(d1 - d3);
    uint plane = u_c * u_cols, dst = u_out_off + row * u_cols + x;
    for (uint i = 0u; i < 4u; i++)
        for (uint j = 0u; j < 4u; j++)
            out_mem[dst + (i * 4u + j) * plane] = v[i][j];
#else
    if (x >= u_cols)
        return;
    uint plane = u_oc * u_cols, src = u_in_off + row * u_cols + x;
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
}

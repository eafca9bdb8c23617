#version 430
// conv2d as im2col written out and the GEMM kernels (the device profile's conv_im2col: llvmpipe,
// where the direct kernel ran ResNet's 64 -> 64 channel 3x3 layer at 56x56 at 8.8 GFLOP/s and
// the GEMM kernel its product at 41). Two passes around the host's GEMMs (gl_conv2d.c); the
// operands, uniforms and index arithmetic are common/conv_io.glsl's.
// IM2COL: an invocation per row (kk, image, output y) of group z's im2col (kk < K = u_icg * u_kh
// * u_kw, image * u_oh + y < u_cols / u_ow), walking the row's u_ow output x: element (kk, col)
// (col = image * ohw + p) is stored at ((image * groups + z) * K + kk) * ohw + p of the output
// binding: per image, every group's K rows of ohw columns, so a group's rows of all images are
// one batch of GEMM operands. (An invocation per element ran 8x slower on llvmpipe: each
// computed its column's coordinates by integer divisions, which llvmpipe runs lane by lane.)
// SUMS: an invocation per output element (m, col) of group z: the GEMM's sum for it, read from
// the input binding (laid out as out is), plus the bias, then the epilogue, into out
// (conv_store).
#extension GL_GOOGLE_include_directive : enable
#include "common/locations.glsl"
#ifndef WG_X
#define WG_X 64
#endif
#if !defined(IM2COL) && !defined(SUMS)
#define IM2COL
#endif
#include "common/conv_io.glsl"

layout(local_size_x = WG_X) in;

void main()
{
    uint group = gl_WorkGroupID.z, x = gl_GlobalInvocationID.x, row = gl_GlobalInvocationID.y;
    uint ohw = u_oh * u_ow;
#ifdef IM2COL
    if (x >= u_cols / u_ow)
        return;
    uint img = x / u_oh, oy = x - img * u_oh;
    uvec3 t = conv_split(row); // (input channel, ky, kx)
    uint k = u_icg * u_kh * u_kw, groups = u_c / u_icg;
    int iy = int(oy * u_sh + t.y * u_dh) - int(u_ph);
    bool inside = iy >= 0 && uint(iy) < u_h;
    uint src = u_in_off + ((img * u_c + group * u_icg + t.x) * u_h + (inside ? uint(iy) : 0u)) * u_w;
    uint dst = u_out_off + ((img * groups + group) * k + row) * ohw + oy * u_ow;
    int ix = int(t.z * u_dw) - int(u_pw);
    for (uint ox = 0u; ox < u_ow; ox++, ix += int(u_sw)) {
        float v = 0.0;
        if (inside && ix >= 0 && uint(ix) < u_w)
            v = in_at(src + uint(ix));
        out_mem[dst + ox] = v;
    }
#else
    if (x >= u_cols)
        return;
    uint img = x / ohw, p = x - img * ohw;
    conv_store(group, row, x, in_at(u_in_off + (img * u_oc + group * u_ocg + row) * ohw + p));
#endif
}

#version 430
// tgl_conv_transpose2d: one invocation per output element of a dispatch's images (element
// u_start + i of the slab), gathering the taps that reach it. Along each axis, tap k sends input
// coordinate i to output coordinate i * stride - pad + k * dilation, so output y takes, for each
// kernel row ky, the input row iy = (y + pad - ky * dilation) / stride where that is a whole
// non-negative number below in_h (likewise x); then the group's input channels, each weighted by
// filter[c, o within the group, ky, kx] ([in_channels, out_channels / groups, kh, kw]). Sums are
// f32 in the order ky, kx, channel (the CPU backend's, which sums in double). Coordinates are
// ints: the host keeps every extent below 2^30 and a slab's elements below 2^32.
// Bindings: 0 input, 1 filter, 2 bias (HAS_BIAS), 3 output.
#extension GL_GOOGLE_include_directive : enable
#include "common/locations.glsl"
#ifndef TGL_WG_SIZE
#define TGL_WG_SIZE 64
#endif
#include "common/index.glsl"
#include "common/local_size.glsl"

layout(std430, binding = 0) readonly buffer Input { float in_mem[]; };
layout(std430, binding = 1) readonly buffer Filter { float f_mem[]; };
#ifdef HAS_BIAS
layout(std430, binding = 2) readonly buffer Bias { float bias_mem[]; };
layout(location = LOC_CTR_B_OFF) uniform uint u_b_off;
#endif
layout(std430, binding = 3) writeonly buffer Output { float out_mem[]; };

layout(location = LOC_CTR_N) uniform uint u_n;         // output elements of this dispatch
layout(location = LOC_CTR_START) uniform uint u_start; // its first, counted in the slab
layout(location = LOC_CTR_IN_H) uniform uint u_in_h;
layout(location = LOC_CTR_IN_W) uniform uint u_in_w;
layout(location = LOC_CTR_OUT_H) uniform uint u_out_h;
layout(location = LOC_CTR_OUT_W) uniform uint u_out_w;
layout(location = LOC_CTR_KH) uniform uint u_kh;
layout(location = LOC_CTR_KW) uniform uint u_kw;
layout(location = LOC_CTR_SH) uniform uint u_sh;
layout(location = LOC_CTR_SW) uniform uint u_sw;
layout(location = LOC_CTR_PH) uniform uint u_ph;
layout(location = LOC_CTR_PW) uniform uint u_pw;
layout(location = LOC_CTR_DH) uniform uint u_dh;
layout(location = LOC_CTR_DW) uniform uint u_dw;
layout(location = LOC_CTR_IC) uniform uint u_ic;   // input channels (all groups)
layout(location = LOC_CTR_OC) uniform uint u_oc;   // output channels (all groups)
layout(location = LOC_CTR_ICG) uniform uint u_icg; // ... per group
layout(location = LOC_CTR_OCG) uniform uint u_ocg;
layout(location = LOC_CTR_IN_OFF) uniform uint u_in_off; // the slab's first element in each window
layout(location = LOC_CTR_F_OFF) uniform uint u_f_off;
layout(location = LOC_CTR_OUT_OFF) uniform uint u_out_off;

// The input coordinate that tap k sends to output coordinate o along an axis, or -1.
int tgl_source(uint o, uint k, uint s, uint p, uint d, uint n)
{
    int t = int(o + p) - int(k * d);
    if (t < 0)
        return -1;
    uint q = uint(t) / s;
    return q * s == uint(t) && q < n ? int(q) : -1;
}

void main()
{
    uint i = tgl_global_index();
    if (i >= u_n)
        return;
    uint e = u_start + i, x = e % u_out_w, rest = e / u_out_w, y = rest % u_out_h;
    rest /= u_out_h;
    uint o = rest % u_oc, img = rest / u_oc, g = o / u_ocg, oo = o - g * u_ocg;
    uint plane = u_in_h * u_in_w, khw = u_kh * u_kw;
    uint in_base = u_in_off + (img * u_ic + g * u_icg) * plane;
    uint f_base = u_f_off + (g * u_icg * u_ocg + oo) * khw; // filter[g * icg + c, oo, ky, kx] at + c * ocg * khw
    float sum = 0.0;
    for (uint ky = 0u; ky < u_kh; ky++) {
        int iy = tgl_source(y, ky, u_sh, u_ph, u_dh, u_in_h);
        if (iy < 0)
            continue;
        for (uint kx = 0u; kx < u_kw; kx++) {
            int ix = tgl_source(x, kx, u_sw, u_pw, u_dw, u_in_w);
            if (ix < 0)
                continue;
            uint at = in_base + uint(iy) * u_in_w + uint(ix), ft = f_base + ky * u_kw + kx;
            for (uint c = 0u; c < u_icg; c++)
                sum += in_mem[at + c * plane] * f_mem[ft + c * u_ocg * khw];
        }
    }
#ifdef HAS_BIAS
    sum += bias_mem[u_b_off + o];
#endif
    out_mem[u_out_off + e] = sum;
}

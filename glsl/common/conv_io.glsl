// Operands, uniforms and index arithmetic of the conv2d kernels (conv/*.comp), which see a
// convolution group as the implicit GEMM out[m, col] = sum_kk filter[m, kk] * im2col[kk, col]:
//   m   output channel within the group (rows, u_ocg of them)
//   kk  (input channel within the group, ky, kx), K = u_icg * u_kh * u_kw
//   col (image of the chunk, output y, output x), u_cols = images * u_oh * u_ow
// im2col is never stored: its elements are read from the input (conv_tap), 0 in the padding.
// Bindings: 0 input, 1 filter (also buffer textures on units 0 and 1 with TEX), 2 bias
// (HAS_BIAS), 3 output. Workgroup z is the group.
#ifdef TEX
layout(location = LOC_TEXTURE0, binding = 0) uniform highp samplerBuffer in_tex;
layout(location = LOC_TEXTURE1, binding = 1) uniform highp samplerBuffer f_tex;
float in_at(uint i) { return texelFetch(in_tex, int(i)).x; }
float f_at(uint i) { return texelFetch(f_tex, int(i)).x; }
#else
layout(std430, binding = 0) readonly buffer Input { float in_mem[]; };
float in_at(uint i) { return in_mem[i]; }
#ifdef F_VEC4 // conv2d_tiled: the filter as vec4s (f_at4(i): elements i..i+3, i a multiple of 4)
layout(std430, binding = 1) readonly buffer Filter { vec4 f_mem4[]; };
vec4 f_at4(uint i) { return f_mem4[i >> 2u]; }
#else
layout(std430, binding = 1) readonly buffer Filter { float f_mem[]; };
float f_at(uint i) { return f_mem[i]; }
#endif
#endif
#ifdef HAS_BIAS
layout(std430, binding = 2) readonly buffer Bias { float bias_mem[]; };
#endif
#ifdef EPILOGUE
// tgl_conv2d_fused: an activation and a residual, which the output holds on entry (the host
// copied it there: a fifth storage buffer is more than ES 3.1 guarantees), so each element is
// read, then written, by the one invocation that computes it.
#include "common/math.glsl"
#include "common/activation.glsl"
layout(std430, binding = 3) buffer Output { float out_mem[]; };
layout(location = LOC_CONV_ACT) uniform uint u_act;
layout(location = LOC_CONV_SLOPE) uniform float u_slope;
layout(location = LOC_CONV_RESIDUAL) uniform uint u_residual; // 0 none, 1 before the activation, 2 after
#else
layout(std430, binding = 3) writeonly buffer Output { float out_mem[]; };
#endif

layout(location = LOC_CONV_C) uniform uint u_c;    // input channels (all groups)
layout(location = LOC_CONV_H) uniform uint u_h;
layout(location = LOC_CONV_W) uniform uint u_w;
layout(location = LOC_CONV_OC) uniform uint u_oc;   // output channels (all groups)
layout(location = LOC_CONV_OH) uniform uint u_oh;
layout(location = LOC_CONV_OW) uniform uint u_ow;
layout(location = LOC_CONV_KH) uniform uint u_kh;
layout(location = LOC_CONV_KW) uniform uint u_kw;
layout(location = LOC_CONV_SH) uniform uint u_sh;
layout(location = LOC_CONV_SW) uniform uint u_sw;
layout(location = LOC_CONV_PH) uniform uint u_ph;
layout(location = LOC_CONV_PW) uniform uint u_pw;
layout(location = LOC_CONV_DH) uniform uint u_dh;
layout(location = LOC_CONV_DW) uniform uint u_dw;
layout(location = LOC_CONV_ICG) uniform uint u_icg;
layout(location = LOC_CONV_OCG) uniform uint u_ocg;
layout(location = LOC_CONV_COLS) uniform uint u_cols;
layout(location = LOC_CONV_IN_OFF) uniform uint u_in_off;
layout(location = LOC_CONV_F_OFF) uniform uint u_f_off;
layout(location = LOC_CONV_B_OFF) uniform uint u_b_off;
layout(location = LOC_CONV_OUT_OFF) uniform uint u_out_off;
#ifdef SPLIT_K
// conv2d_tiled with its K range cut into splits (grids too small to fill a GPU): workgroup z is
// split * u_groups + group; split s covers kk in [s * u_k_chunk, (s + 1) * u_k_chunk) and writes
// its partial sums as an output of its own, u_split_stride elements after the split before it,
// the bias added by split 0 only; the host then sums the splits.
layout(location = LOC_CONV_K_CHUNK) uniform uint u_k_chunk;
layout(location = LOC_CONV_SPLIT_STRIDE) uniform uint u_split_stride;
layout(location = LOC_CONV_GROUPS) uniform uint u_groups;
uint conv_split_index = 0u; // set by main
#endif

// Where column `col`'s receptive field starts: the image's first element of the group's first
// channel (base), and the top-left input coordinate (signed: padding makes it negative).
struct conv_col {
    uint base;
    int y0, x0;
};

conv_col conv_column(uint col, uint group)
{
    uint ohw = u_oh * u_ow, img = col / ohw, p = col - img * ohw, y = p / u_ow, x = p - y * u_ow;
    conv_col c;
    c.base = u_in_off + (img * u_c + group * u_icg) * u_h * u_w;
    c.y0 = int(y * u_sh) - int(u_ph);
    c.x0 = int(x * u_sw) - int(u_pw);
    return c;
}

// x / d for x < 2^22: float(x) is exact and the float quotient (GLSL allows 2.5 ulp) is then off
// by less than 1, so one correction step either way makes it exact. A float estimate corrected so
// is several times cheaper than an integer division on GPUs; conv2d_direct splits kk once and
// then steps with conv_next, conv2d_tiled splits it once per slab.
uint conv_div(uint x, uint d)
{
    uint q = uint(float(x) / float(d));
    q -= q * d > x ? 1u : 0u;
    q += (q + 1u) * d <= x ? 1u : 0u;
    return q;
}

// im2col at input channel ic (within the group) and kernel tap (ky, kx) of a column from
// conv_column: 0 in the padding.
float conv_tap(conv_col c, uint ic, uint ky, uint kx)
{
    int iy = c.y0 + int(ky * u_dh), ix = c.x0 + int(kx * u_dw);
    if (iy < 0 || ix < 0 || uint(iy) >= u_h || uint(ix) >= u_w)
        return 0.0;
    return in_at(c.base + (ic * u_h + uint(iy)) * u_w + uint(ix));
}

// Splits kk < 2^22 (the host checks) into (input channel, ky, kx).
uvec3 conv_split(uint kk)
{
    uint khw = u_kh * u_kw, ic = conv_div(kk, khw), r = kk - ic * khw, ky = conv_div(r, u_kw);
    return uvec3(ic, ky, r - ky * u_kw);
}

// The (input channel, ky, kx) after t: kx runs fastest, then ky, then the channel.
uvec3 conv_next(uvec3 t)
{
    t.z++;
    if (t.z == u_kw) {
        t.z = 0u;
        t.y++;
        if (t.y == u_kh) {
            t.y = 0u;
            t.x++;
        }
    }
    return t;
}

// Writes out[m, col] (+ bias, then the epilogue) for row m of the group.
void conv_store(uint group, uint m, uint col, float v)
{
    uint ohw = u_oh * u_ow, img = col / ohw, p = col - img * ohw, oc = group * u_ocg + m;
#ifdef SPLIT_K
#ifdef HAS_BIAS
    if (conv_split_index == 0u)
        v += bias_mem[u_b_off + oc];
#endif
    out_mem[u_out_off + conv_split_index * u_split_stride + (img * u_oc + oc) * ohw + p] = v;
#else
#ifdef HAS_BIAS
    v += bias_mem[u_b_off + oc];
#endif
    uint at = u_out_off + (img * u_oc + oc) * ohw + p;
#ifdef EPILOGUE
    if (u_residual == 1u)
        v += out_mem[at];
    v = tgl_activate(u_act, v, u_slope);
    if (u_residual == 2u)
        v += out_mem[at];
#endif
    out_mem[at] = v;
#endif
}

#version 430
// tgl_pool2d over NCHW f32 planes: one invocation per output element of a dispatch's planes
// (element u_start + i of the slab, planes of u_out[0] x u_out[1]), its window walked in the
// padded frame from (oy * stride - pad, ox * stride - pad). MAX: the largest tap inside the
// input, a NaN winning for good (PyTorch's `v > m || isnan(v)`, NaN found by its bits: a
// device's comparison or isnan may assume no NaN), -inf when no tap is inside. AVG (no
// dilation): the window's sum over its size clipped to the padded input (u_include_pad) or over
// its taps inside the input; 0 when none is inside. Coordinates are ints: the host keeps every
// extent below 2^30.
// INDICES (tgl_max_pool2d_indices, with MAX): each output's taken tap, its index in the plane
// (y * in_w + x, below 2^31: the host checks), into the i32 buffer at binding 2.
// ADAPTIVE (tgl_adaptive_pool2d, with MAX or AVG): the window of output (oy, ox) is PyTorch's
// adaptive one, rows [oy in_h / out_h, ceil((oy + 1) in_h / out_h)) and the columns likewise, in
// uint arithmetic (the host keeps in * out below 2^32 along each axis); MAX as above, AVG the
// window's f32 sum, row by row, divided by its rows and then its columns (PyTorch's order).
#extension GL_GOOGLE_include_directive : enable
#include "common/locations.glsl"
#ifndef TGL_WG_SIZE
#define TGL_WG_SIZE 64
#endif
#include "common/index.glsl"
#include "common/math.glsl"
#include "common/precise.glsl"
#include "common/local_size.glsl"

#if !defined(MAX) && !defined(AVG)
#define MAX // standalone validation of this file
#endif

layout(std430, binding = 0) readonly buffer In { float x[]; };
layout(std430, binding = 1) writeonly buffer Out { float y[]; };
#ifdef INDICES
layout(std430, binding = 2) writeonly buffer Idx { int ix[]; }; // MAX: the taken tap's index in its plane
layout(location = LOC_POOL_I_OFF) uniform uint u_i_off;
#endif
layout(location = LOC_POOL_N) uniform uint u_n;         // output elements of this dispatch
layout(location = LOC_POOL_START) uniform uint u_start; // its first, counted in the slab
layout(location = LOC_POOL_X_OFF) uniform uint u_x_off; // the slab's first element in each window
layout(location = LOC_POOL_Y_OFF) uniform uint u_y_off;
layout(location = LOC_POOL_INCLUDE_PAD) uniform uint u_include_pad;
layout(location = LOC_POOL_IN) uniform uint u_in[2];
layout(location = LOC_POOL_OUT) uniform uint u_out[2];
layout(location = LOC_POOL_KERNEL) uniform uint u_kernel[2];
layout(location = LOC_POOL_STRIDE) uniform uint u_stride[2];
layout(location = LOC_POOL_PAD) uniform uint u_pad[2];
layout(location = LOC_POOL_DILATION) uniform uint u_dilation[2];

void main()
{
    uint i = tgl_global_index();
    if (i >= u_n)
        return;
    uint e = u_start + i, ox = e % u_out[1], rest = e / u_out[1], oy = rest % u_out[0], plane = rest / u_out[0];
#ifdef ADAPTIVE
    {
        uint ys = oy * u_in[0] / u_out[0], ye = ((oy + 1u) * u_in[0] + u_out[0] - 1u) / u_out[0];
        uint xs = ox * u_in[1] / u_out[1], xe = ((ox + 1u) * u_in[1] + u_out[1] - 1u) / u_out[1];
        uint at = u_x_off + plane * (u_in[0] * u_in[1]);
#ifdef MAX
        float m = -tgl_inf();
        bool seen_nan = false;
        for (uint yy = ys; yy < ye; yy++)
            for (uint xx = xs; xx < xe; xx++) {
                float v = x[at + yy * u_in[1] + xx];
                bool v_nan = (floatBitsToUint(v) & 0x7FFFFFFFu) > 0x7F800000u;
                if (v_nan || (!seen_nan && v > m))
                    m = v;
                seen_nan = seen_nan || v_nan;
            }
        y[u_y_off + e] = m;
#else
        TGL_PRECISE float sum = 0.0;
        for (uint yy = ys; yy < ye; yy++)
            for (uint xx = xs; xx < xe; xx++)
                sum += x[at + yy * u_in[1] + xx];
        TGL_PRECISE float mean = sum / float(ye - ys) / float(xe - xs);
        y[u_y_off + e] = mean;
#endif
        return;
    }
#endif
    int h = int(u_in[0]), w = int(u_in[1]), kh = int(u_kernel[0]), kw = int(u_kernel[1]);
    uint base = u_x_off + plane * (u_in[0] * u_in[1]);
    int y0 = int(oy * u_stride[0]) - int(u_pad[0]), x0 = int(ox * u_stride[1]) - int(u_pad[1]);
#ifdef MAX
    // the taps inside the input, computed (a huge kernel over a small input costs nothing)
    int dh = int(u_dilation[0]), dw = int(u_dilation[1]);
    int ky0 = y0 < 0 ? (-y0 + dh - 1) / dh : 0, ky1 = y0 >= h ? 0 : min(kh, (h - 1 - y0) / dh + 1);
    int kx0 = x0 < 0 ? (-x0 + dw - 1) / dw : 0, kx1 = x0 >= w ? 0 : min(kw, (w - 1 - x0) / dw + 1);
    float m = -tgl_inf();
    bool nan_ = false;
    int arg = (y0 + ky0 * dh) * w + x0 + kx0 * dw; // the first tap's until one is taken (PyTorch's)
    for (int ky = ky0; ky < ky1; ky++) {
        int yy = y0 + ky * dh;
        for (int kx = kx0; kx < kx1; kx++) {
            int xx = x0 + kx * dw;
            float v = x[base + uint(yy * w + xx)];
            bool v_nan = (floatBitsToUint(v) & 0x7FFFFFFFu) > 0x7F800000u;
            if (v_nan || (!nan_ && v > m)) {
                m = v;
                arg = yy * w + xx;
            }
            nan_ = nan_ || v_nan;
        }
    }
    y[u_y_off + e] = m;
#ifdef INDICES
    ix[u_i_off + e] = arg;
#endif
#else
    int y1 = min(y0 + kh, h + int(u_pad[0])), x1 = min(x0 + kw, w + int(u_pad[1]));
    float size = float(y1 - y0) * float(x1 - x0); // (may pass 2^31: a huge kernel's padding)
    y0 = max(y0, 0);
    x0 = max(x0, 0);
    y1 = min(y1, h);
    x1 = min(x1, w);
    float sum = 0.0;
    for (int yy = y0; yy < y1; yy++)
        for (int xx = x0; xx < x1; xx++)
            sum += x[base + uint(yy * w + xx)];
    float count = u_include_pad != 0u ? size : float((y1 - y0) * (x1 - x0));
    y[u_y_off + e] = y0 < y1 && x0 < x1 ? sum / count : 0.0;
#endif
}

#version 430
// The row-wise ops over descriptors (tgl_softmax_t, tgl_log_softmax_t, tgl_rmsnorm_t,
// tgl_layernorm_t; u_op is the tgl__rdt op): a workgroup per line (u_start + the workgroup's
// index over out's index space of u_ndim dims, in's strides over them in u_in_stride, out's in
// u_out_stride), its invocations striding along the line of u_len elements, u_step apart in in
// and u_out_step in out. Computed in f32: IN_DTYPE, OUT_DTYPE and W_DTYPE (weight or gamma, and
// beta) are 0 f32, 1 f16, 2 bf16. Each element is read last by the invocation that writes it,
// after the line's reductions, so out may be in itself. An out element below 4 bytes is written
// by atomicAnd then atomicOr on its word, keeping the bytes around it. A line holding a NaN (or,
// for softmax, whose largest value is infinite) is all NaN, decided here rather than left to the
// driver's NaN arithmetic.
#extension GL_GOOGLE_include_directive : enable
#include "common/locations.glsl"
#ifndef TGL_WG_SIZE
#define TGL_WG_SIZE 64
#endif
#include "common/convert.glsl"
#include "common/group.glsl"
#include "common/local_size.glsl"

#ifndef IN_DTYPE
#define IN_DTYPE 0
#endif
#ifndef OUT_DTYPE
#define OUT_DTYPE 0
#endif
#ifndef W_DTYPE
#define W_DTYPE 0
#endif

layout(std430, binding = 0) readonly buffer In { uint x[]; };
layout(std430, binding = 1) buffer Out { uint y[]; };
layout(std430, binding = 2) readonly buffer Weight { uint wt[]; };
layout(std430, binding = 3) readonly buffer Bias { uint bs[]; };
layout(location = LOC_RDT_N) uniform uint u_n;         // lines of this dispatch
layout(location = LOC_RDT_START) uniform uint u_start; // the first one's linear index
layout(location = LOC_RDT_NDIM) uniform uint u_ndim;
layout(location = LOC_RDT_OP) uniform uint u_op;
layout(location = LOC_RDT_LEN) uniform uint u_len;
layout(location = LOC_RDT_STEP) uniform uint u_step;
layout(location = LOC_RDT_IN_BASE) uniform uint u_in_base;
layout(location = LOC_RDT_OUT_BASE) uniform uint u_out_base;
layout(location = LOC_RDT_OUT_STEP) uniform uint u_out_step;
layout(location = LOC_RDT_W_BASE) uniform uint u_w_base;
layout(location = LOC_RDT_W_STEP) uniform uint u_w_step;
layout(location = LOC_RDT_B_BASE) uniform uint u_b_base;
layout(location = LOC_RDT_B_STEP) uniform uint u_b_step;
layout(location = LOC_RDT_EPS) uniform float u_eps;
layout(location = LOC_RDT_PARAMS) uniform uint u_params; // bit 0: a weight (gamma), bit 1: a beta
layout(location = LOC_RDT_SHAPE) uniform uint u_shape[8];
layout(location = LOC_RDT_IN_STRIDE) uniform uint u_in_stride[8];
layout(location = LOC_RDT_OUT_STRIDE) uniform uint u_out_stride[8];

#define OP_SOFTMAX 9u // TGL__RDT_SOFTMAX
#define OP_LOG_SOFTMAX 10u
#define OP_RMSNORM 11u
#define OP_LAYERNORM 12u

// Element e (a float dtype dt: 0 a word, else a half word) of a buffer's words, as an f32.
#define LOAD_F(buf, e, dt) uintBitsToFloat(tgl_to_f32((dt) == 0u ? buf[e] : (buf[(e) >> 1] >> (16u * ((e) & 1u))) & 0xFFFFu, dt))

float in_at(uint oi, uint k)
{
    uint e = oi + k * u_step;
    return LOAD_F(x, e, uint(IN_DTYPE));
}

float w_at(uint k)
{
    uint e = u_w_base + k * u_w_step;
    return LOAD_F(wt, e, uint(W_DTYPE));
}

float b_at(uint k)
{
    uint e = u_b_base + k * u_b_step;
    return LOAD_F(bs, e, uint(W_DTYPE));
}

void store_out(uint at, float v)
{
    uint bits = tgl_convert(floatBitsToUint(v), 0u, uint(OUT_DTYPE));
#if OUT_DTYPE == 0
    y[at] = bits;
#else
    uint w = at >> 1, shift = 16u * (at & 1u);
    atomicAnd(y[w], ~(0xFFFFu << shift));
    atomicOr(y[w], bits << shift);
#endif
}

// Element offsets (in elements, in each window) of line i: in's line start, out's.
void locate(uint i, out uint oi, out uint oo)
{
    uint rest = i;
    oi = u_in_base;
    oo = u_out_base;
    for (int k = int(u_ndim) - 1; k > 0; k--) {
        uint c = rest % u_shape[k];
        rest /= u_shape[k];
        oi += c * u_in_stride[k];
        oo += c * u_out_stride[k];
    }
    if (u_ndim > 0u) {
        oi += rest * u_in_stride[0];
        oo += rest * u_out_stride[0];
    }
}

bool is_nan(float v)
{
    return tgl_f32_is_nan(floatBitsToUint(v));
}

bool is_inf(float v)
{
    return (floatBitsToUint(v) & 0x7FFFFFFFu) == 0x7F800000u;
}

void main()
{
    uint i = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
    uint lane = gl_LocalInvocationID.x;
    if (i >= u_n)
        return; // a whole workgroup: uniform
    uint oi, oo;
    locate(u_start + i, oi, oo);
    const uint wg = uint(TGL_WG_SIZE);
    float NEG_INF = uintBitsToFloat(0xFF800000u), QNAN = uintBitsToFloat(0x7FC00000u);
    bool nan_ = false;
    if (u_op == OP_SOFTMAX || u_op == OP_LOG_SOFTMAX) {
        float m = NEG_INF;
        for (uint k = lane; k < u_len; k += wg) {
            float v = in_at(oi, k);
            if (is_nan(v))
                nan_ = true;
            else
                m = max(m, v);
        }
        m = tgl_group_max(m);
        bool bad = tgl_group_max(nan_ ? 1.0 : 0.0) > 0.5 || is_inf(m);
        float s = 0.0;
        for (uint k = lane; k < u_len && !bad; k += wg)
            s += exp(in_at(oi, k) - m);
        s = tgl_group_sum(s);
        for (uint k = lane; k < u_len; k += wg) {
            float v = in_at(oi, k);
            store_out(oo + k * u_out_step, bad ? QNAN : u_op == OP_SOFTMAX ? exp(v - m) / s : (v - m) - log(s));
        }
    } else {
        // layernorm works on x - x0, x0 the line's first element: an f32 mean of a line far
        // from zero is off by up to half a unit in its last place, and every output with it
        float x0 = u_op == OP_LAYERNORM ? in_at(oi, 0u) : 0.0;
        float s = 0.0;
        for (uint k = lane; k < u_len && u_op == OP_LAYERNORM; k += wg)
            s += in_at(oi, k) - x0;
        float mean = tgl_group_sum(s) / float(u_len); // of x - x0; 0 for RMSNORM
        float sq = 0.0;
        for (uint k = lane; k < u_len; k += wg) {
            float v = in_at(oi, k);
            nan_ = nan_ || is_nan(v);
            float d = (v - x0) - mean;
            sq += d * d;
        }
        sq = tgl_group_sum(sq);
        bool bad = tgl_group_max(nan_ ? 1.0 : 0.0) > 0.5;
        float r = 1.0 / sqrt(sq / float(u_len) + u_eps), scale = 1.0;
        if (!bad && (is_inf(sq) || is_nan(sq) || is_inf(mean) || is_nan(mean))) {
            // Finite values whose sum or squares overflow f32 (the CPU's double does not): the
            // line again, scaled by a power of two that brings its largest magnitude to about
            // 2^32 (a normal number, so a device that flushes subnormals changes nothing). An
            // infinite element keeps the plain result, as the CPU's.
            float m = 0.0;
            for (uint k = lane; k < u_len; k += wg)
                m = max(m, abs(in_at(oi, k)));
            m = tgl_group_max(m);
            if (!is_inf(m)) {
                int e;
                frexp(m, e);
                scale = ldexp(1.0, 32 - e);
                x0 *= scale;
                s = 0.0;
                for (uint k = lane; k < u_len && u_op == OP_LAYERNORM; k += wg)
                    s += in_at(oi, k) * scale - x0;
                mean = tgl_group_sum(s) / float(u_len);
                sq = 0.0;
                for (uint k = lane; k < u_len; k += wg) {
                    float d = (in_at(oi, k) * scale - x0) - mean;
                    sq += d * d;
                }
                sq = tgl_group_sum(sq);
                r = 1.0 / sqrt(sq / float(u_len) + u_eps * scale * scale);
            }
        }
        for (uint k = lane; k < u_len; k += wg) {
            float v = ((in_at(oi, k) * scale - x0) - mean) * r;
            if ((u_params & 1u) != 0u)
                v *= w_at(k);
            if ((u_params & 2u) != 0u)
                v += b_at(k);
            store_out(oo + k * u_out_step, bad ? QNAN : v);
        }
    }
}

// tgl_gemm_fused's epilogue, shared by the kernels that run its products (common/gemm_io.glsl's
// GEMM kernels, gemm/matvec_w.comp for thin ones): with r = alpha * the product's sum, an element
// becomes act(r + beta * old + bias[j]) or, with u_epi_gate, act(r + bias[j]) * old, where old
// is its value on entry, read only where tgl_epilogue_reads (NaN in an unread output must not
// leak). The bias is storage block 3 (kernels keep to ES 3.1's 4), column j at u_epi_bias_off +
// j; without one (u_epi_bias 0) some live buffer is bound there and never read. Uniforms at
// locations 14-18 (src/gl/gl_epilogue.c sets them). Needs common/math.glsl.
#include "common/activation.glsl"
layout(std430, binding = 3) readonly buffer EpilogueBias { float epi_bias[]; };
layout(location = LOC_EPI_ACT) uniform uint u_epi_act;
layout(location = LOC_EPI_SLOPE) uniform float u_epi_slope;
layout(location = LOC_EPI_GATE) uniform uint u_epi_gate;
layout(location = LOC_EPI_BIAS) uniform uint u_epi_bias;
layout(location = LOC_EPI_BIAS_OFF) uniform uint u_epi_bias_off;

bool tgl_epilogue_reads(float beta)
{
    return beta != 0.0 || u_epi_gate != 0u;
}

float tgl_epilogue(float r, float old, uint j, float beta)
{
    if (u_epi_gate == 0u)
        r += beta * old;
    if (u_epi_bias != 0u)
        r += epi_bias[u_epi_bias_off + j];
    r = tgl_activate(u_epi_act, r, u_epi_slope);
    return u_epi_gate != 0u ? r * old : r;
}

// The kernels store their results in a loop of `n` trips plus a term of a uniform that is
// always 0 (u_epi_act < 16), so no compiler can unroll it: the epilogue's code (the activation's
// switch, erf's polynomials) then appears once rather than once per stored row. Inlined at each
// of the 128 rows of NVIDIA's 16 x 8 GEMM tile it ran 1024 x 4096 x 4096 with gelu at 5.1 ms
// where the same product took 0.90 ms with the activation compiled out (H200).
uint tgl_epilogue_trips(uint n)
{
    return n + (u_epi_act >> 16u);
}

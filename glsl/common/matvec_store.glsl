// y's binding (2) and store(row, s) for the f32 matvec kernels (gemm/matvec.comp,
// gemm/matvec_lanes.comp): y[u_y_off + row] = s or, with EPILOGUE, tgl_gemm_fused's epilogue of
// alpha * s (common/epilogue.glsl: the bias, storage block 3, indexed by the row; y read where
// the epilogue says). Needs u_y_off.
#ifdef EPILOGUE
layout(std430, binding = 2) buffer VecY { float y[]; };
layout(location = LOC_MV_ALPHA) uniform float u_alpha;
layout(location = LOC_MV_BETA) uniform float u_beta;
#include "common/math.glsl"
#include "common/epilogue.glsl"

void store(uint row, float s)
{
    uint at = u_y_off + row;
    float old = tgl_epilogue_reads(u_beta) ? y[at] : 0.0;
    y[at] = tgl_epilogue(u_alpha * s, old, row, u_beta);
}
#else
layout(std430, binding = 2) writeonly buffer VecY { float y[]; };

void store(uint row, float s)
{
    y[u_y_off + row] = s;
}
#endif

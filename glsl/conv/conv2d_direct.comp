#version 430
// conv2d without shared memory (see common/conv_io.glsl): each invocation computes TM output
// channels x TN neighbouring output pixels of one group, reading the filter and the input
// straight from memory (or through buffer textures with TEX: llvmpipe fetches texels with
// gathers). For llvmpipe, where barriers are expensive, and for groups of few output channels
// (depthwise), where a GEMM tile would be mostly empty. Workgroup (x, y) = WG_X invocations
// along the pixels, WG_Y along the channels; z = the group.
#extension GL_GOOGLE_include_directive : enable
#include "common/locations.glsl"
#include "common/unroll.glsl"
#ifndef WG_X
#define WG_X 64
#define WG_Y 1
#define TM 1
#define TN 1
#endif
#include "common/conv_io.glsl"

layout(local_size_x = WG_X, local_size_y = WG_Y) in;

void main()
{
    uint group = gl_WorkGroupID.z, k = u_icg * u_kh * u_kw;
    uint m0 = gl_GlobalInvocationID.y * uint(TM), j0 = gl_GlobalInvocationID.x * uint(TN);
    if (m0 >= u_ocg || j0 >= u_cols)
        return;
    conv_col cols[TN];
    TGL_UNROLL for (uint c = 0u; c < uint(TN); c++)
        cols[c] = conv_column(min(j0 + c, u_cols - 1u), group); // past the edge: never stored
    uint frow[TM];
    TGL_UNROLL for (uint r = 0u; r < uint(TM); r++)
        frow[r] = u_f_off + (group * u_ocg + min(m0 + r, u_ocg - 1u)) * k;

    float acc[TM * TN];
    TGL_UNROLL for (uint e = 0u; e < uint(TM * TN); e++)
        acc[e] = 0.0;
    uvec3 t = uvec3(0u); // (input channel, ky, kx) of kk, stepped rather than divided
    for (uint kk = 0u; kk < k; kk++, t = conv_next(t)) {
        float x[TN];
        TGL_UNROLL for (uint c = 0u; c < uint(TN); c++)
            x[c] = conv_tap(cols[c], t.x, t.y, t.z);
        TGL_UNROLL for (uint r = 0u; r < uint(TM); r++) {
            float f = f_at(frow[r] + kk);
            TGL_UNROLL for (uint c = 0u; c < uint(TN); c++)
                acc[r * uint(TN) + c] += f * x[c];
        }
    }
    for (uint r = 0u; r < uint(TM) && m0 + r < u_ocg; r++)
        for (uint c = 0u; c < uint(TN) && j0 + c < u_cols; c++)
            conv_store(group, m0 + r, j0 + c, acc[r * uint(TN) + c]);
}

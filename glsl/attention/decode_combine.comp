#version 430
// Attention for few query rows, second pass (see attention/decode.comp): one workgroup per
// query row merges its chunks' (output, m, l) into softmax-weighted values. Invocation c4
// owns the row's dims 4 c4 .. 4 c4 + 3. A row whose chunks saw no key is zeros.
#extension GL_GOOGLE_include_directive : enable
#include "common/locations.glsl"
#ifndef TGL_WG_SIZE
#define TGL_WG_SIZE 64
#endif
#ifndef DP
#define DP 64
#endif
#include "common/math.glsl"
#include "common/index.glsl"

#include "common/local_size.glsl"
layout(std430, binding = 3) writeonly buffer O { float o_mem[]; };
layout(std430, binding = 4) readonly buffer Part { vec4 part[]; };
layout(location = LOC_ATT_ROWS) uniform uint u_rows;
layout(location = LOC_ATT_D) uniform uint u_d;
layout(location = LOC_ATT_O_OFF) uniform uint u_o_off;
layout(location = LOC_ATT_DECODE_CHUNKS) uniform uint u_chunks;

void main()
{
    uint row = tgl_group_index(), c4 = gl_LocalInvocationIndex;
    const uint dv = uint(DP / 4);
    if (row >= u_rows || c4 >= dv || c4 * 4u >= u_d)
        return;
    uint base = row * u_chunks * (dv + 1u);
    float mx = -tgl_inf();
    for (uint c = 0u; c < u_chunks; c++)
        mx = max(mx, part[base + c * (dv + 1u) + dv].x);
    vec4 o = vec4(0.0);
    float l = 0.0;
    if (mx != -tgl_inf())
        for (uint c = 0u; c < u_chunks; c++) {
            vec2 ml = part[base + c * (dv + 1u) + dv].xy;
            float w = ml.x == -tgl_inf() ? 0.0 : exp(ml.x - mx);
            l += w * ml.y;
            o += w * part[base + c * (dv + 1u) + c4];
        }
    o *= l > 0.0 ? 1.0 / l : 0.0;
    uint at = u_o_off + row * u_d + c4 * 4u;
    for (uint c = 0u; c < 4u && c4 * 4u + c < u_d; c++)
        o_mem[at + c] = o[c];
}

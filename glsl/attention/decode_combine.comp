#version 430
// Attention for few query rows, second pass (see attention/decode.comp): one workgroup per
// query row merges its chunks' (output, m, l) into softmax-weighted values. The invocations
// stride over the chunks for the row's max m and sum l (workgroup reductions), then split
// (chunk, vec4 of dims) pairs: invocation c4 + way dv sums dims 4 c4 .. 4 c4 + 3 over the chunks
// way, way + ways, ..., and the ways' sums meet in shared memory (H200, GQA decode 1 x 32/8
// heads x 4096 keys x 128, 32 chunks a row, alternated runs: 30.0 -> 26.1 us). Rows of at most
// FEW_CHUNKS chunks (prefill split over keys: many rows, few chunks) skip the reductions' barriers:
// an invocation per vec4 walks the chunks alone (with the reductions, 1 x 16 x 1024 x 64 prefill
// ran 136 -> 143 us). A row whose chunks saw no key is zeros.
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
#include "common/group.glsl"

#include "common/local_size.glsl"
layout(std430, binding = 3) writeonly buffer O { float o_mem[]; };
layout(std430, binding = 4) readonly buffer Part { vec4 part[]; };
layout(location = LOC_ATT_ROWS) uniform uint u_rows;
layout(location = LOC_ATT_D) uniform uint u_d;
layout(location = LOC_ATT_O_OFF) uniform uint u_o_off;
layout(location = LOC_ATT_DECODE_CHUNKS) uniform uint u_chunks;

#define FEW_CHUNKS 8u
shared vec4 s_o[TGL_WG_SIZE];

// Chunk c's (m, l).
vec2 chunk_ml(uint base, uint c)
{
    return part[base + c * uint(DP / 4 + 1) + uint(DP / 4)].xy;
}

// Chunk (m, l)'s weight against the row's max mx: 0 for a chunk that saw no key.
float chunk_weight(vec2 ml, float mx)
{
    return ml.x == -tgl_inf() ? 0.0 : exp(ml.x - mx);
}

// Row `row`'s dims 4 c4 .. 4 c4 + 3 (those below u_d): the weighted sum o over the sum of weights l.
void store(uint row, uint c4, vec4 o, float l)
{
    o *= l > 0.0 ? 1.0 / l : 0.0;
    uint at = u_o_off + row * u_d + c4 * 4u;
    for (uint c = 0u; c < 4u && c4 * 4u + c < u_d; c++)
        o_mem[at + c] = o[c];
}

void main()
{
    uint row = tgl_group_index(), tid = gl_LocalInvocationIndex;
    if (row >= u_rows)
        return; // uniform across the workgroup
    const uint dv = uint(DP / 4), ways = uint(TGL_WG_SIZE) / dv;
    uint base = row * u_chunks * (dv + 1u);
    if (u_chunks <= FEW_CHUNKS) { // uniform: each vec4's invocation walks the chunks alone
        uint c4 = tid;
        if (c4 >= dv || c4 * 4u >= u_d)
            return;
        float mx = -tgl_inf(), l = 0.0;
        for (uint c = 0u; c < u_chunks; c++)
            mx = max(mx, chunk_ml(base, c).x);
        vec4 o = vec4(0.0);
        if (mx != -tgl_inf())
            for (uint c = 0u; c < u_chunks; c++) {
                vec2 ml = chunk_ml(base, c);
                float w = chunk_weight(ml, mx);
                l += w * ml.y;
                o += w * part[base + c * (dv + 1u) + c4];
            }
        store(row, c4, o, l);
        return;
    }
    float mx = -tgl_inf();
    for (uint c = tid; c < u_chunks; c += uint(TGL_WG_SIZE))
        mx = max(mx, chunk_ml(base, c).x);
    mx = tgl_group_max(mx);
    float l = 0.0;
    if (mx != -tgl_inf()) // uniform
        for (uint c = tid; c < u_chunks; c += uint(TGL_WG_SIZE)) {
            vec2 ml = chunk_ml(base, c);
            l += chunk_weight(ml, mx) * ml.y;
        }
    l = tgl_group_sum(l);
    uint c4 = tid % dv, way = tid / dv;
    vec4 o = vec4(0.0);
    if (mx != -tgl_inf() && way < ways)
        for (uint c = way; c < u_chunks; c += ways) {
            o += chunk_weight(chunk_ml(base, c), mx) * part[base + c * (dv + 1u) + c4];
        }
    s_o[tid] = o;
    memoryBarrierShared();
    barrier();
    if (way != 0u || c4 * 4u >= u_d)
        return;
    for (uint w = 1u; w < ways; w++)
        o += s_o[w * dv + c4];
    store(row, c4, o, l);
}

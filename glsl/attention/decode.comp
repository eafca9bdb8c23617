#version 430
// Attention for few query rows over long key ranges (decode), first pass: the keys are cut
// into chunks of CH and a workgroup takes one (query row, chunk) pair (workgroup x = chunk,
// y = row), so a single query still fills the device. Each invocation scores keys of the
// chunk (full dots against q in shared memory), the workgroup takes the chunk's max m and
// sum l of exp(score - m), and the invocations split (key, vec4 of dims) pairs to sum the
// weighted values. The unnormalized output, m and l go to `part`; attention/decode_combine
// merges a row's chunks. A chunk the row sees no key of records m = -inf, l = 0. Where one
// (batch, head) block's keys are longer than an SSBO window, a dispatch covers the chunks from
// u_chunk0 on, its k and v windows starting at key u_chunk0 * CH of the block.
#extension GL_GOOGLE_include_directive : enable
#include "common/locations.glsl"
#include "common/unroll.glsl"
#ifndef TGL_WG_SIZE
#define TGL_WG_SIZE 128
#endif
#ifndef DP
#define DP 64 // head dims covered (u_d <= DP, a multiple of 4, DP / 4 <= TGL_WG_SIZE)
#define CH 256
#endif
#include "common/math.glsl"
#include "common/group.glsl"
#include "common/attention_io.glsl"

#include "common/local_size.glsl"
layout(std430, binding = 4) writeonly buffer Part { vec4 part[]; }; // per (row, chunk): DP/4 + 1 vec4s
layout(location = LOC_ATT_DECODE_CHUNKS) uniform uint u_chunks;
layout(location = LOC_ATT_DECODE_CHUNK0) uniform uint u_chunk0;

shared vec4 s_q[DP / 4];
shared float s_p[CH];
shared vec4 s_o[TGL_WG_SIZE];

void main()
{
    uint tid = gl_LocalInvocationIndex, chunk = u_chunk0 + gl_WorkGroupID.x, row = gl_WorkGroupID.y;
    uint bh = row / u_seq_q, i = row - bh * u_seq_q, j0 = chunk * uint(CH);
    // the chunk's keys the row sees: [lo, n) of the chunk
    uint keys = attention_keys(i), n = keys > j0 ? min(uint(CH), keys - j0) : 0u;
    uint seen = attention_first_key(i), lo = seen > j0 ? min(seen - j0, n) : 0u;
    float slope = attention_slope(bh);
    bool adjusts = attention_adjusts();
    // key j0 + jj of the block is row (j0 - u_chunk0 * CH) + jj of the window
    uint first = gl_WorkGroupID.x * uint(CH);
    uint k_rows = u_k_off + (kv_block(bh) * u_kv_cap + first) * u_d, v_rows = u_v_off + (kv_block(bh) * u_kv_cap + first) * u_d;
    for (uint c4 = tid; c4 < uint(DP / 4); c4 += uint(TGL_WG_SIZE))
        s_q[c4] = q_load4(u_q_off + row * u_d, c4 * 4u) * u_scale;
    memoryBarrierShared();
    barrier();

    float mx = -tgl_inf();
    for (uint jj = lo + tid; jj < n; jj += uint(TGL_WG_SIZE)) {
        uint k_row = k_rows + jj * u_d;
        vec4 acc = vec4(0.0);
        TGL_UNROLL for (uint c4 = 0u; c4 < uint(DP / 4); c4++)
            acc += s_q[c4] * k_load4(k_row, c4 * 4u);
        float s = (acc.x + acc.y) + (acc.z + acc.w);
        if (adjusts) // uniform: tgl_attention_t's capping and ALiBi bias
            s = attention_adjust(s, slope, bh, i, j0 + jj, 1.0);
        s_p[jj] = s;
        mx = max(mx, s);
    }
    mx = tgl_group_max(mx); // uniform: every invocation sees the same m
    float sum = 0.0;
    for (uint jj = lo + tid; jj < n; jj += uint(TGL_WG_SIZE)) {
        float p = mx == -tgl_inf() ? 0.0 : exp(s_p[jj] - mx); // every score -inf (masked): weight 0
        s_p[jj] = p;
        sum += p;
    }
    float l = tgl_group_sum(sum); // its barriers also publish s_p

    const uint dv = uint(DP / 4), ways = uint(TGL_WG_SIZE) / dv;
    uint c4 = tid % dv, way = tid / dv;
    vec4 acc = vec4(0.0);
    if (way < ways)
        for (uint jj = lo + way; jj < n; jj += ways)
            acc += s_p[jj] * v_load4(v_rows + jj * u_d, c4 * 4u);
    s_o[tid] = acc;
    memoryBarrierShared();
    barrier();
    uint base = (row * u_chunks + chunk) * (dv + 1u);
    if (tid < dv) {
        vec4 o = vec4(0.0);
        for (uint w = 0u; w < ways; w++)
            o += s_o[w * dv + tid];
        part[base + tid] = o;
    }
    if (tid == 0u)
        part[base + dv] = vec4(n > lo ? mx : -tgl_inf(), l, 0.0, 0.0);
}

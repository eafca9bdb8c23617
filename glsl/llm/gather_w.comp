#version 430
// tgl_gather_rows_t: out[k, c] = table[ids[k], c] decoded to f32, one invocation per output
// element. The table is a window of u_id_rows rows from row u_id0 (common/weights.glsl's
// formats, WFMT 0..4: float formats by element index, rows u_w_rs and columns u_w_cs elements
// apart; blocks by byte offset, rows u_w_rs bytes apart); an id outside the window is another
// dispatch's (the ids were checked against the whole table before). A block element is q * d
// (q4_0: q - 8), the product rounded on its own as the CPU's (exact in f32 either way).
// Strides are two's complement uints (wrapping sums from each window's offset).
#extension GL_GOOGLE_include_directive : enable
#include "common/locations.glsl"
#ifndef TGL_WG_SIZE
#define TGL_WG_SIZE 64
#endif
#ifndef WFMT
#define WFMT 0
#endif
#include "common/index.glsl"
#include "common/local_size.glsl"
#include "common/precise.glsl"

layout(std430, binding = 0) readonly buffer Table { uint wq[]; };
layout(std430, binding = 1) readonly buffer Ids { int ids[]; };
layout(std430, binding = 2) writeonly buffer Out { float y[]; };
#include "common/weights.glsl"

layout(location = LOC_GW_COUNT) uniform uint u_count;   // output elements of this dispatch
layout(location = LOC_GW_COLS) uniform uint u_cols;
layout(location = LOC_GW_W_OFF) uniform uint u_w_off;
layout(location = LOC_GW_W_RS) uniform uint u_w_rs;
layout(location = LOC_GW_W_CS) uniform uint u_w_cs;
layout(location = LOC_GW_ID0) uniform uint u_id0;
layout(location = LOC_GW_ID_ROWS) uniform uint u_id_rows;
layout(location = LOC_GW_IDS_OFF) uniform uint u_ids_off;
layout(location = LOC_GW_IDS_STRIDE) uniform uint u_ids_stride;
layout(location = LOC_GW_Y_OFF) uniform uint u_y_off;
layout(location = LOC_GW_Y_RS) uniform uint u_y_rs;
layout(location = LOC_GW_Y_CS) uniform uint u_y_cs;

void main()
{
    uint p = tgl_global_index();
    if (p >= u_count)
        return;
    uint k = p / u_cols, c = p - k * u_cols;
    uint r = uint(ids[u_ids_off + k * u_ids_stride]) - u_id0;
    if (r >= u_id_rows)
        return;
#if WFMT < TGL_WFMT_Q8_0
    float v = tgl_w_float(u_w_off + r * u_w_rs + c * u_w_cs, uint(WFMT));
#else
    uint j = c % 32u, at = u_w_off + r * u_w_rs + (c / 32u) * (WFMT == TGL_WFMT_Q8_0 ? 34u : 18u);
    float d = tgl_w_scale(at);
#if WFMT == TGL_WFMT_Q8_0
    uint byte = (tgl_w_u16(at + 2u + (j & ~1u)) >> (8u * (j & 1u))) & 0xFFu;
    float q = float(int(byte << 24) >> 24);
#else
    uint i = j & 15u, byte = (tgl_w_u16(at + 2u + (i & ~1u)) >> (8u * (i & 1u))) & 0xFFu;
    float q = float(int(j < 16u ? byte & 15u : byte >> 4) - 8);
#endif
    TGL_PRECISE float v = q * d;
#endif
    y[u_y_off + k * u_y_rs + c * u_y_cs] = v;
}

#version 430
// Embedding lookup in two passes over the same bindings, status[0] a fresh status word
// (0xFFFFFFFF: tgl_gl_status_slot in gl_tensor_ewise.c). CHECK_IDS: every id outside
// [0, u_table_rows) lowers status[0] to its position (atomicMin), so the host learns the first
// bad one. Otherwise (gather): if status[0] names a bad position nothing is written; else
// out[k, :] = table[ids[k], :] on a 2-D grid, x over a row's columns (vec4s with TGL_VEC4, where
// the host saw cols and both windows' offsets in whole vec4s), y over the ids: no division per
// element (llvmpipe runs integer division lane by lane). A table larger than the SSBO block
// limit is bound as windows of u_win_rows rows from row u_row0, one dispatch each: a gather
// writes the rows whose id falls in its window.
// ROW_LOOP (llvmpipe, with TGL_TEX): one invocation per id walks its whole row, reading the
// table through a buffer texture. llvmpipe loads from an SSBO lane by lane, so the status word
// and the id, loaded per invocation, cost as much as the element copied; walking the row loads
// them once per row, and texel fetches gather. With TGL_WIDE (rows of whole pairs of vec4s, the
// output 32-byte aligned) pairs of vec4s are stored as dvec4s (common/wide_store.glsl).
#extension GL_GOOGLE_include_directive : enable
#include "common/locations.glsl"
#ifndef TGL_WG_SIZE
#define TGL_WG_SIZE 64
#endif
#include "common/index.glsl"
#include "common/texel.glsl"
#include "common/wide_store.glsl"

#include "common/local_size.glsl"
layout(std430, binding = 0) readonly buffer Ids { int ids[]; };
layout(std430, binding = 1) buffer Status { uint status[]; };
#if !defined(CHECK_IDS)
#ifdef TGL_VEC4
#define ELEM vec4
#else
#define ELEM float
#endif
#ifdef TGL_TEX
layout(location = LOC_TEXTURE2, binding = 2) uniform highp samplerBuffer table_tex;
#define TABLE_AT(i) TGL_READ(table_tex, i)
#else
layout(std430, binding = 2) readonly buffer Table { ELEM table[]; };
#define TABLE_AT(i) table[i]
#endif
#ifdef TGL_WIDE
layout(std430, binding = 3) writeonly buffer Dst { dvec4 y2[]; };
#else
layout(std430, binding = 3) writeonly buffer Dst { ELEM y[]; };
#endif
layout(location = LOC_GATHER_COLS) uniform uint u_cols;   // row length, in ELEMs
layout(location = LOC_GATHER_T_OFF) uniform uint u_t_off;  // window offsets, in ELEMs
layout(location = LOC_GATHER_Y_OFF) uniform uint u_y_off;
layout(location = LOC_GATHER_ROW0) uniform uint u_row0;
layout(location = LOC_GATHER_WIN_ROWS) uniform uint u_win_rows;
#endif
layout(location = LOC_GATHER_COUNT) uniform uint u_count;      // ids to check, or elements to gather
layout(location = LOC_GATHER_IDS_OFF) uniform uint u_ids_off;
layout(location = LOC_GATHER_TABLE_ROWS) uniform uint u_table_rows;
layout(location = LOC_GATHER_FIRST) uniform uint u_first;      // position of ids[u_ids_off] in the whole call

void main()
{
#if defined(CHECK_IDS)
    uint i = tgl_global_index();
    if (i >= u_count)
        return;
    int id = ids[u_ids_off + i];
    if (id < 0 || uint(id) >= u_table_rows)
        atomicMin(status[0], u_first + i);
#elif defined(ROW_LOOP)
    uint k = tgl_global_index();
    if (k >= u_count || status[0] != 0xFFFFFFFFu)
        return;
    uint r = uint(ids[u_ids_off + k]) - u_row0; // ids are checked: in [0, table rows)
    if (r >= u_win_rows)
        return;
    uint src = u_t_off + r * u_cols, dst = u_y_off + k * u_cols;
#ifdef TGL_WIDE
    for (uint c = 0u; c < u_cols; c += 2u) // u_cols and dst even (the host checks)
        y2[(dst + c) / 2u] = tgl_wide(TABLE_AT(src + c), TABLE_AT(src + c + 1u));
#else
    for (uint c = 0u; c < u_cols; c++)
        y[dst + c] = TABLE_AT(src + c);
#endif
#else
    uint c = gl_GlobalInvocationID.x, k = gl_WorkGroupID.y;
    if (c >= u_cols || status[0] != 0xFFFFFFFFu)
        return;
    uint r = uint(ids[u_ids_off + k]) - u_row0; // ids are checked: in [0, table rows)
    if (r < u_win_rows)
        y[u_y_off + k * u_cols + c] = table[u_t_off + r * u_cols + c];
#endif
}

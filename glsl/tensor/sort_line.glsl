// The lines of tgl_sort and tgl_topk as the kernels that sort them see them (tensor/sort.comp,
// tensor/radix.comp; tgl__sort in src/core/internal.h): the uniforms gl_sort.c sets for both,
// in's elements (DTYPE) through the includer's X_WORD(w) (word w of in), the order's key of an
// element, a line's offsets in its group's box, and (SORT_LINE_STORE: the includer declares
// values yv[] and indices yi[]) the store of one output.
#ifndef TGL_SORT_LINE_GLSL
#define TGL_SORT_LINE_GLSL
#ifndef DTYPE
#define DTYPE 0
#endif
#if DTYPE == 0 || DTYPE == 3
#define BYTES 4
#elif DTYPE == 4
#define BYTES 1
#else
#define BYTES 2
#endif
// in's element e (DTYPE's bits; bool as 0 or 1) from its words, X_WORD(w)
#if BYTES == 4
#define LOAD_DATA(e) X_WORD(e)
#elif BYTES == 2
#define LOAD_DATA(e) ((X_WORD((e) >> 1) >> (16u * ((e) & 1u))) & 0xFFFFu)
#else
#define LOAD_DATA(e) (((X_WORD((e) >> 2) >> (8u * ((e) & 3u))) & 0xFFu) != 0u ? 1u : 0u)
#endif

layout(location = LOC_SRT_N) uniform uint u_n;
layout(location = LOC_SRT_START) uniform uint u_start;
layout(location = LOC_SRT_NDIM) uniform uint u_ndim;
layout(location = LOC_SRT_LEN) uniform uint u_len;
layout(location = LOC_SRT_LOG_P) uniform uint u_log_p;
layout(location = LOC_SRT_SIZE) uniform uint u_size;
layout(location = LOC_SRT_STRIDE) uniform uint u_stride;
layout(location = LOC_SRT_DESC) uniform uint u_desc;
layout(location = LOC_SRT_K) uniform uint u_k;
layout(location = LOC_SRT_IN_BASE) uniform uint u_in_base;
layout(location = LOC_SRT_IN_STEP) uniform uint u_in_step;
layout(location = LOC_SRT_V_BASE) uniform uint u_v_base;
layout(location = LOC_SRT_V_STEP) uniform uint u_v_step;
layout(location = LOC_SRT_I_BASE) uniform uint u_i_base;
layout(location = LOC_SRT_I_STEP) uniform uint u_i_step;
layout(location = LOC_SRT_TEMP_BASE) uniform uint u_temp_base;
layout(location = LOC_SRT_HAS) uniform uint u_has;
layout(location = LOC_SRT_LINE0) uniform uint u_line0;
layout(location = LOC_SRT_MINIMA) uniform uint u_minima; // TOPK
layout(location = LOC_SRT_SHAPE) uniform uint u_shape[8];
layout(location = LOC_SRT_LO) uniform uint u_lo[8];
layout(location = LOC_SRT_IN_STRIDE) uniform uint u_in_stride[8];
layout(location = LOC_SRT_V_STRIDE) uniform uint u_v_stride[8];
layout(location = LOC_SRT_I_STRIDE) uniform uint u_i_stride[8];

// The ascending key of an element's bits: unsigned order is the value's, -0 equal to +0, NaN
// past every number; bool false before true.
uint sort_key(uint v)
{
#if DTYPE == 3
    return v ^ 0x80000000u;
#elif DTYPE == 4
    return v;
#else
    uint f = tgl_to_f32(v, uint(DTYPE));
    if ((f & 0x7FFFFFFFu) > 0x7F800000u)
        return 0xFFFFFFFFu;
    f = f == 0x80000000u ? 0u : f;
    return (f >> 31) != 0u ? ~f : f | 0x80000000u;
#endif
}

// The offsets of line u_line0 + l in its box: in's, values', indices'.
uvec3 line_offsets(uint l)
{
    uint rest = u_line0 + l;
    uvec3 o = uvec3(u_in_base, u_v_base, u_i_base);
    for (int d = int(u_ndim) - 1; d >= 0; d--) {
        uint c = rest % u_shape[d] - u_lo[d];
        rest /= u_shape[d];
        o += c * uvec3(u_in_stride[d], u_v_stride[d], u_i_stride[d]);
    }
    return o;
}

#ifdef SORT_LINE_STORE
// Output p of the line at offsets o: the element at position `from` into values, the position
// into indices, where u_has says.
void store_result(uvec3 o, uint p, uint from)
{
    if ((u_has & 2u) != 0u)
        yi[o.z + p * u_i_step] = from;
    if ((u_has & 1u) != 0u) {
        uint v = LOAD_DATA(o.x + from * u_in_step);
        uint at = o.y + p * u_v_step;
#if BYTES == 4
        yv[at] = v;
#else
        const uint per = uint(4 / BYTES), mask = (1u << uint(8 * BYTES)) - 1u;
        uint shift = uint(8 * BYTES) * (at % per);
        atomicAnd(yv[at / per], ~(mask << shift));
        atomicOr(yv[at / per], v << shift);
#endif
    }
}
#endif
#endif

/* GL driver for the f16 casts (glsl/cast/). Tensors larger than one window are processed in
 * chunks. When the f16 side starts at an odd half, the 32-bit word at a chunk boundary is
 * merged by two successive dispatches; the hazard tracker orders them with a barrier. */
#include "gl_internal.h"

/* The casts' flags: the direction, and the piece (one element or word per invocation, four
 * elements (TGL_VEC4), or f16 -> f32 eight per invocation stored as a dvec4 (TGL_WIDE)). */
enum { PIECE_PLAIN, PIECE_VEC4, PIECE_WIDE };
typedef struct cast_flags {
    uint32_t vec4, wide;
} cast_flags;
static const tgl_gl_def cast_defs[] = {
    TGL_GL_FLAG(cast_flags, vec4, "TGL_VEC4"),
    TGL_GL_FLAG(cast_flags, wide, "TGL_WIDE"),
};

static tgl_gl_plan cast_plan(int to_f16, int piece)
{
    static const char *const why[3] = {
        "an unaligned head or tail, or too few elements for vec4s (cast_vec4_min)",
        "both windows 16-byte aligned: four elements per invocation",
        "whole workgroups of eight halves, read as texels and stored as dvec4s (wide_stores)",
    };
    cast_flags f = {piece == PIECE_VEC4, piece == PIECE_WIDE};
    tgl_gl_plan p = {.op = to_f16 ? "tgl_cast_f32_to_f16" : "tgl_cast_f16_to_f32", .why = why[piece]};
    tgl_gl_plan_kernel(&p, to_f16 ? "cast/f32_to_f16" : "cast/f16_to_f32", TGL_GL_DEFS(cast_defs), &f);
    return p;
}

/* llvmpipe's f16 -> f32 over whole workgroups (TGL_WIDE in f16_to_f32.comp: eight halves per
 * invocation from two RGBA16UI texels, one dvec4 store), where the halves start 8-byte aligned
 * in their texture window and the floats 32-byte aligned; *done gets the elements converted
 * (0 when the operands do not allow it). 16M halves on llvmpipe: 72-74 -> 8.8-9.2 ms. */
static tgl_status wide_f16_to_f32(tgl_backend *b, tgl__view in, tgl__view out, size_t n, unsigned backward,
                                  size_t *done)
{
    const tgl_gl_limits *l = &tgl_gl_of(b)->limits;
    size_t per_group = (size_t)l->workgroup_size * 8;
    size_t align = tgl_gl_window_align(l, 1);
    *done = 0;
    if (!l->wide_stores || !l->texture_buffer_texels || out.offset % 32 || n < per_group)
        return TGL_OK;
    /* groups per dispatch: one grid row (no bounds test, so none may be rounded up), the
     * texel limit (two texels per invocation) and the output's block limit */
    size_t max_groups = l->wg_count[0];
    size_t by_texels = (size_t)(l->texture_buffer_texels / 2 / l->workgroup_size);
    size_t by_block = tgl_gl_max_window_elems(l, 4) / per_group;
    if (by_texels <= max_groups) /* one group fewer: room for the windows' alignment pads */
        max_groups = by_texels > 0 ? by_texels - 1 : 0;
    if (by_block <= max_groups)
        max_groups = by_block > 0 ? by_block - 1 : 0;
    GLuint prog;
    tgl_gl_plan plan = cast_plan(0, PIECE_WIDE);
    plan.groups = n / per_group;
    tgl_status st = tgl_gl_plan_program(b, &plan, &prog);
    while (!st && n - *done >= per_group && max_groups > 0) {
        size_t groups = (n - *done) / per_group < max_groups ? (n - *done) / per_group : max_groups;
        size_t count = groups * per_group, pad_h, pad_y;
        tgl_gl_binding bind[2] = {
            tgl_gl_window_aligned((tgl__view){in.buf, in.offset + *done * 2}, count * 2, 0, align, &pad_h),
            tgl_gl_window_aligned((tgl__view){out.buf, out.offset + *done * 4}, count * 4, 1,
                                  l->ssbo_align < 32 ? 32 : l->ssbo_align, &pad_y),
        };
        if (pad_h % 8 || pad_y % 32) /* the same for every dispatch: decided by the first */
            return TGL_OK;
        bind[0].texture_format = GL_RGBA16UI;
        tgl_gl_uniform_ui(b, prog, LOC_CAST_IN_OFF, (GLuint)(pad_h / 8));
        tgl_gl_uniform_ui(b, prog, LOC_CAST_OUT_OFF, (GLuint)(pad_y / 32));
        tgl_gl_uniform_ui(b, prog, LOC_SWEEP, backward);
        st = tgl_gl_dispatch(b, prog, bind, 2, groups);
        if (!st)
            *done += count;
    }
    return st;
}

/* The plain kernels over n elements (chunked by the window limits): one float per invocation
 * from f16, one 32-bit word of two halves per invocation to f16. */
static tgl_status plain_cast(tgl_backend *b, int to_f16, tgl__view in, tgl__view out, size_t n, unsigned backward)
{
    const tgl_gl_limits *l = &tgl_gl_of(b)->limits;
    size_t in_size = to_f16 ? 4 : 2, out_size = to_f16 ? 2 : 4;
    size_t chunk = tgl_gl_max_window_elems(l, 4) / 2 * 2; /* f32 side bounds the window */
    uint64_t grid = (uint64_t)l->wg_count[0] * l->wg_count[1] * l->workgroup_size / 2 * 2;
    if (chunk > grid)
        chunk = (size_t)grid;
    GLuint prog;
    tgl_gl_plan plan = cast_plan(to_f16, PIECE_PLAIN);
    plan.groups = tgl_gl_ceil_div(to_f16 ? tgl_gl_ceil_div(n, 2) : n, l->workgroup_size);
    tgl_status st = n ? tgl_gl_plan_program(b, &plan, &prog) : TGL_OK;
    for (size_t start = 0; !st && start < n; start += chunk) {
        size_t count = n - start < chunk ? n - start : chunk;
        size_t in_pad, out_pad;
        tgl_gl_binding bind[2] = {
            tgl_gl_window(b, (tgl__view){in.buf, in.offset + start * in_size}, count * in_size, 0, &in_pad),
            tgl_gl_window(b, (tgl__view){out.buf, out.offset + start * out_size}, count * out_size, 1, &out_pad),
        };
        size_t half_pad = to_f16 ? out_pad / 2 : in_pad / 2;
        size_t items = to_f16 ? (half_pad + count + 1) / 2 : count; /* words written, or floats */
        tgl_gl_uniform_ui(b, prog, LOC_CAST_N, (GLuint)count);
        tgl_gl_uniform_ui(b, prog, LOC_CAST_IN_OFF, (GLuint)(to_f16 ? in_pad / 4 : half_pad));
        tgl_gl_uniform_ui(b, prog, LOC_CAST_OUT_OFF, (GLuint)(to_f16 ? half_pad : out_pad / 4));
        tgl_gl_uniform_ui(b, prog, LOC_SWEEP, backward);
        st = tgl_gl_dispatch(b, prog, bind, 2, (items + l->workgroup_size - 1) / l->workgroup_size);
    }
    return st;
}

/* The elements before the first one at which both windows start 16-byte aligned (0..7), or n
 * when there is none: the plain kernel takes them, the TGL_VEC4 variant the groups of eight
 * after. */
static size_t vec4_head(int to_f16, tgl__view in, tgl__view out, size_t n)
{
    size_t in_size = to_f16 ? 4 : 2, out_size = to_f16 ? 2 : 4;
    for (size_t s = 0; s < 8 && s < n; s++)
        if ((in.offset + s * in_size) % 16 == 0 && (out.offset + s * out_size) % 16 == 0)
            return s;
    return n;
}

/* The TGL_VEC4 variants over n elements, a multiple of 8, both windows 16-byte aligned: four
 * elements per invocation, a 16-byte access on the f32 side and an 8-byte one on the f16 side
 * (limits.cast_vec4_min says from what size). Eight per invocation (two 16-byte accesses on
 * the f32 side) ran llvmpipe's 16M floats to f16 in 19.7-19.9 ms against 24.0-24.7 for four,
 * but the H100's casts to f32 of 1-4M elements 27-63% slower than four; one variant is kept. */
static tgl_status vec4_cast(tgl_backend *b, int to_f16, tgl__view in, tgl__view out, size_t n, unsigned backward)
{
    const tgl_gl_limits *l = &tgl_gl_of(b)->limits;
    size_t in_size = to_f16 ? 4 : 2, out_size = to_f16 ? 2 : 4;
    size_t chunk = tgl_gl_max_window_elems(l, 4) / 8 * 8;
    uint64_t grid = (uint64_t)l->wg_count[0] * l->wg_count[1] * l->workgroup_size * 4 / 8 * 8;
    if (chunk > grid)
        chunk = (size_t)grid;
    GLuint prog;
    tgl_gl_plan plan = cast_plan(to_f16, PIECE_VEC4);
    plan.groups = tgl_gl_ceil_div(n / 4, l->workgroup_size);
    tgl_status st = tgl_gl_plan_program(b, &plan, &prog);
    for (size_t start = 0; !st && start < n; start += chunk) {
        size_t count = n - start < chunk ? n - start : chunk, in_pad, out_pad;
        tgl_gl_binding bind[2] = {
            tgl_gl_window(b, (tgl__view){in.buf, in.offset + start * in_size}, count * in_size, 0, &in_pad),
            tgl_gl_window(b, (tgl__view){out.buf, out.offset + start * out_size}, count * out_size, 1, &out_pad),
        };
        if (in_pad % 16 || out_pad % 16) /* vec4_head saw the offsets; the windows keep them */
            return tgl__fail(b, TGL_ERR_INTERNAL, "cast: a 16-byte-aligned window lost its alignment");
        /* four elements per invocation: offsets in 16 bytes on the f32 side, 8 on the f16 side */
        tgl_gl_uniform_ui(b, prog, LOC_CAST_N, (GLuint)(count / 4));
        tgl_gl_uniform_ui(b, prog, LOC_CAST_IN_OFF, (GLuint)(in_pad / (to_f16 ? 16 : 8)));
        tgl_gl_uniform_ui(b, prog, LOC_CAST_OUT_OFF, (GLuint)(out_pad / (to_f16 ? 8 : 16)));
        tgl_gl_uniform_ui(b, prog, LOC_SWEEP, backward);
        st = tgl_gl_dispatch(b, prog, bind, 2, tgl_gl_ceil_div(count / 4, l->workgroup_size));
    }
    return st;
}

tgl_status tgl_gl_cast(tgl_backend *b, int to_f16, tgl__view in, tgl__view out, size_t n)
{
    tgl_gl *gl = tgl_gl_of(b);
    size_t in_size = to_f16 ? 4 : 2, out_size = to_f16 ? 2 : 4, done = 0;
    uint64_t bytes = (uint64_t)n * 6; /* the four bytes of the float and the two of the half */
    unsigned backward = tgl_gl_sweep_direction(gl, bytes);
    if (!to_f16) {
        tgl_status st = wide_f16_to_f32(b, in, out, n, backward, &done);
        if (st)
            return st;
        in.offset += done * in_size;
        out.offset += done * out_size;
        n -= done;
    }
    /* Where the windows allow, the 16-byte variant takes the middle (split at a multiple of 8
     * halves, so no word of the output is shared between dispatches) and the plain kernel the
     * elements around it. */
    size_t head = n >= gl->limits.cast_vec4_min ? vec4_head(to_f16, in, out, n) : n;
    size_t body = (n - head) / 8 * 8;
    tgl_status st = plain_cast(b, to_f16, in, out, head, backward);
    if (!st && body)
        st = vec4_cast(b, to_f16, (tgl__view){in.buf, in.offset + head * in_size},
                       (tgl__view){out.buf, out.offset + head * out_size}, body, backward);
    if (!st)
        st = plain_cast(b, to_f16, (tgl__view){in.buf, in.offset + (head + body) * in_size},
                        (tgl__view){out.buf, out.offset + (head + body) * out_size}, n - head - body, backward);
    if (!st)
        tgl_gl_sweep_done(gl, bytes);
    return st;
}

void tgl_gl_cast_variants(void (*fn)(void *ctx, const char *kernel, const char *defines), void *ctx)
{
    for (int to_f16 = 1; to_f16 >= 0; to_f16--)
        for (int piece = PIECE_PLAIN; piece <= (to_f16 ? PIECE_VEC4 : PIECE_WIDE); piece++) {
            tgl_gl_plan p = cast_plan(to_f16, piece);
            fn(ctx, p.kernel, p.defines);
        }
}

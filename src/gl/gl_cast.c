/* GL driver for the f16 casts (glsl/cast/). Tensors larger than one window are processed in
 * chunks. When the f16 side starts at an odd half, the 32-bit word at a chunk boundary is
 * merged by two successive dispatches; the hazard tracker orders them with a barrier. */
#include "gl_internal.h"

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
    tgl_status st = tgl_gl_program_get(b, "cast/f16_to_f32", "#define TGL_WIDE\n", &prog);
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
        tgl_gl_uniform_ui(b, prog, 1, (GLuint)(pad_h / 8));
        tgl_gl_uniform_ui(b, prog, 2, (GLuint)(pad_y / 32));
        tgl_gl_uniform_ui(b, prog, TGL_GL_SWEEP_LOCATION, backward);
        st = tgl_gl_dispatch(b, prog, bind, 2, groups);
        if (!st)
            *done += count;
    }
    return st;
}

tgl_status tgl_gl_cast(tgl_backend *b, int to_f16, tgl__view in, tgl__view out, size_t n)
{
    tgl_gl *gl = tgl_gl_of(b);
    const tgl_gl_limits *l = &gl->limits;
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
    size_t chunk = tgl_gl_max_window_elems(l, 4) / 2 * 2; /* f32 side bounds the window */
    uint64_t grid = (uint64_t)l->wg_count[0] * l->wg_count[1] * l->workgroup_size / 2 * 2;
    if (chunk > grid)
        chunk = (size_t)grid;
    GLuint prog;
    tgl_status st = tgl_gl_program_get(b, to_f16 ? "cast/f32_to_f16" : "cast/f16_to_f32", "", &prog);
    if (st)
        return st;
    for (size_t start = 0; start < n; start += chunk) {
        size_t count = n - start < chunk ? n - start : chunk;
        size_t in_pad, out_pad;
        tgl_gl_binding bind[2] = {
            tgl_gl_window(b, (tgl__view){in.buf, in.offset + start * in_size}, count * in_size, 0, &in_pad),
            tgl_gl_window(b, (tgl__view){out.buf, out.offset + start * out_size}, count * out_size, 1, &out_pad),
        };
        size_t half_pad = to_f16 ? out_pad / 2 : in_pad / 2;
        size_t items = to_f16 ? (half_pad + count + 1) / 2 : count; /* words written, or floats */
        tgl_gl_uniform_ui(b, prog, 0, (GLuint)count);
        tgl_gl_uniform_ui(b, prog, 1, (GLuint)(to_f16 ? in_pad / 4 : half_pad));
        tgl_gl_uniform_ui(b, prog, 2, (GLuint)(to_f16 ? half_pad : out_pad / 4));
        tgl_gl_uniform_ui(b, prog, TGL_GL_SWEEP_LOCATION, backward);
        if ((st = tgl_gl_dispatch(b, prog, bind, 2, (items + l->workgroup_size - 1) / l->workgroup_size)))
            return st;
    }
    tgl_gl_sweep_done(gl, bytes);
    return TGL_OK;
}

void tgl_gl_cast_variants(void (*fn)(void *ctx, const char *kernel, const char *defines), void *ctx)
{
    fn(ctx, "cast/f32_to_f16", "");
    fn(ctx, "cast/f16_to_f32", "");
    fn(ctx, "cast/f16_to_f32", "#define TGL_WIDE\n");
}

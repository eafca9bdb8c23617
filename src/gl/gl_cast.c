/* GL driver for the f16 casts (glsl/cast/). Tensors larger than one window are processed in
 * chunks. When the f16 side starts at an odd half, the 32-bit word at a chunk boundary is
 * merged by two successive dispatches; the hazard tracker orders them with a barrier. */
#include "gl_internal.h"

tgl_status tgl_gl_cast(tgl_backend *b, int to_f16, tgl__view in, tgl__view out, size_t n)
{
    const tgl_gl_limits *l = &tgl_gl_of(b)->limits;
    size_t in_size = to_f16 ? 4 : 2, out_size = to_f16 ? 2 : 4;
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
        if ((st = tgl_gl_dispatch(b, prog, bind, 2, (items + l->workgroup_size - 1) / l->workgroup_size)))
            return st;
    }
    return TGL_OK;
}

void tgl_gl_cast_variants(void (*fn)(void *ctx, const char *kernel, const char *defines), void *ctx)
{
    fn(ctx, "cast/f32_to_f16", "");
    fn(ctx, "cast/f16_to_f32", "");
}

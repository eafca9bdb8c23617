/* GL driver of tgl_matvec (glsl/gemm/matvec.comp): rows are processed in slabs whose W window
 * fits the SSBO block limit and whose workgroups fit the grid. */
#include "gl_internal.h"

#include <stdio.h>

#define F32 sizeof(float)

tgl_status tgl_gl_matvec(tgl_backend *b, tgl__view w, tgl__view x, tgl__view y, size_t rows, size_t cols)
{
    const tgl_gl_limits *l = &tgl_gl_of(b)->limits;
    if (cols == 0)
        return tgl_gl_fill(b, y, 0.0f, rows);
    size_t max = tgl_gl_max_window_elems(l, F32);
    if (cols > max)
        return tgl__fail(b, TGL_ERR_UNSUPPORTED, "tgl_matvec: a row of %zu floats exceeds the SSBO block limit",
                         cols);
    /* A row per invocation walks cols / 4 vec4s in one invocation: beyond llvmpipe's loop limit
     * (iterations per invocation, all loops together) long rows take a workgroup each. */
    int per_invocation = l->gemm.matvec_row_per_invocation && (!l->loop_limit || cols / 4 < l->loop_limit / 2);
    int tex = per_invocation && l->gemm.textures; /* the texture variants are per-invocation ones */
    size_t align = tgl_gl_window_align(l, tex);
    uint32_t wg = per_invocation ? l->workgroup_size : l->reduce_workgroup_size;
    /* A workgroup per row: each invocation walks cols / wg elements, so under a loop limit long
     * rows take wider groups (powers of two, for the tree sum). */
    while (!per_invocation && l->loop_limit && cols / wg + 1 >= l->loop_limit / 2 && wg * 2 <= l->wg_invocations &&
           wg * 2 <= l->wg_size[0])
        wg *= 2;
    uint64_t groups_max = (uint64_t)l->wg_count[0] * l->wg_count[1];
    size_t per = max / cols;
    uint32_t rows_per_group = per_invocation ? wg : 1;
    uint64_t grid_rows = groups_max * rows_per_group;
    if (per > grid_rows)
        per = (size_t)grid_rows;
    if (tex && per * cols > l->texture_buffer_texels)
        per = (size_t)(l->texture_buffer_texels / cols);
    if (per == 0)
        return tgl__fail(b, TGL_ERR_UNSUPPORTED, "tgl_matvec: a row of %zu floats exceeds the buffer texture limit",
                         cols);

    size_t pad_x;
    tgl_gl_binding xb = tgl_gl_window_aligned(x, cols * F32, 0, align, &pad_x);
    for (size_t r0 = 0; r0 < rows; r0 += per) {
        size_t nr = rows - r0 < per ? rows - r0 : per, pad_w, pad_y;
        tgl_gl_binding bind[3] = {
            tgl_gl_window_aligned((tgl__view){w.buf, w.offset + r0 * cols * F32}, nr * cols * F32, 0, align,
                                  &pad_w),
            xb,
            tgl_gl_window(b, (tgl__view){y.buf, y.offset + r0 * F32}, nr * F32, 1, &pad_y),
        };
        int vec4 = cols % 4 == 0 && (pad_w / F32) % 4 == 0 && (pad_x / F32) % 4 == 0;
        if (tex)
            bind[0].texture_format = bind[1].texture_format = vec4 ? GL_RGBA32F : GL_R32F;
        char defines[96];
        snprintf(defines, sizeof defines, "%s%s%s", per_invocation ? "#define ROW_PER_INVOCATION\n" : "",
                 vec4 ? "#define VEC4\n" : "", tex ? "#define TEX\n" : "");
        GLuint prog;
        tgl_status st = tgl_gl_program_get_wg(b, "gemm/matvec", defines, wg, &prog);
        if (st)
            return st;
        tgl_gl_uniform_ui(b, prog, 0, (GLuint)nr);
        tgl_gl_uniform_ui(b, prog, 1, (GLuint)cols);
        tgl_gl_uniform_ui(b, prog, 2, (GLuint)(pad_w / F32));
        tgl_gl_uniform_ui(b, prog, 3, (GLuint)(pad_x / F32));
        tgl_gl_uniform_ui(b, prog, 4, (GLuint)(pad_y / F32));
        if ((st = tgl_gl_dispatch(b, prog, bind, 3, (nr + rows_per_group - 1) / rows_per_group)))
            return st;
    }
    return TGL_OK;
}

void tgl_gl_matvec_variants(void (*fn)(void *ctx, const char *kernel, const char *defines), void *ctx)
{
    static const char *variants[] = {
        "#define ROW_PER_INVOCATION\n#define VEC4\n#define TEX\n", "#define ROW_PER_INVOCATION\n#define TEX\n",
        "#define ROW_PER_INVOCATION\n#define VEC4\n", "#define ROW_PER_INVOCATION\n", "#define VEC4\n", "",
    };
    for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++)
        fn(ctx, "gemm/matvec", variants[i]);
}

/* GL driver for the row-wise ops (glsl/norm/rows.comp): one workgroup per row, rows processed
 * in slabs whose windows fit the SSBO block limit. */
#include "gl_internal.h"

#include <stdio.h>

#define F32 sizeof(float)

static const char *const kind_defines[TGL__ROWS_COUNT] = {"SOFTMAX", "LOG_SOFTMAX", "RMSNORM", "LAYERNORM"};

#define ROW_PER_INVOCATION_MAX 8192

/* tex: rows read through a buffer texture; alone: one invocation per row (both llvmpipe's);
 * vec4: rows taken a vec4 at a time; wide: (with alone and vec4) stored two vec4s at a time. */
static void defines_for(char *out, size_t size, int kind, int weight, int bias, int tex, int alone, int vec4,
                        int wide)
{
    snprintf(out, size, "#define %s\n%s%s%s%s%s%s", kind_defines[kind], weight ? "#define HAS_WEIGHT\n" : "",
             bias ? "#define HAS_BIAS\n" : "", tex ? "#define TGL_TEX\n" : "",
             alone ? "#define ROW_PER_INVOCATION\n" : "", vec4 ? "#define TGL_VEC4\n" : "",
             wide ? "#define TGL_WIDE\n" : "");
}

/* Vec4s per invocation of norm/softmax_lanes for rows of `cols` floats over `lanes` invocations:
 * the fewest of 2, 4, ... 32 that hold the row, 0 for a longer row. */
#define LANES_MAX_REGS 32u
#define LANES_ROWS 8u /* rows per workgroup (see the kernel) */
static unsigned lanes_regs(size_t cols, unsigned lanes)
{
    unsigned regs = 2;
    while (regs < LANES_MAX_REGS && (size_t)lanes * 4 * regs < cols)
        regs *= 2;
    return (size_t)lanes * 4 * regs >= cols ? regs : 0;
}

static void lanes_defines(char *out, size_t size, int kind, unsigned lanes, unsigned regs, int exact)
{
    snprintf(out, size, "#define %s\n#define LANES %u\n#define REGS %u\n#define ROWS %u\n%s", kind_defines[kind], lanes,
             regs, LANES_ROWS, exact ? "#define EXACT\n" : "");
}

/* A window's start inside its binding, in floats: vec4 views need a multiple of 4. */
static int whole_vec4(size_t pad_bytes)
{
    return (pad_bytes / F32) % 4 == 0;
}

tgl_status tgl_gl_rows(tgl_backend *b, int kind, tgl__view in, tgl__view w, tgl__view bias, tgl__view out,
                       size_t rows, size_t cols, float eps)
{
    size_t max_elems = tgl_gl_max_window_elems(&tgl_gl_of(b)->limits, F32);
    if (cols > max_elems)
        return tgl__fail(b, TGL_ERR_UNSUPPORTED, "a row of %zu floats exceeds the device's SSBO block limit", cols);
    const tgl_gl_limits *l = &tgl_gl_of(b)->limits;
    /* Rows read through a buffer texture where element-wise inputs are (llvmpipe). */
    int tex = l->texel_inputs && cols <= l->texture_buffer_texels;
    size_t per = max_elems / cols;
    if (tex && per > l->texture_buffer_texels / cols)
        per = l->texture_buffer_texels / cols;
    if (per > ((size_t)1 << 26))
        per = (size_t)1 << 26;
    size_t in_align = tgl_gl_window_align(l, tex);
    /* One invocation per row (llvmpipe), for rows its loop limit lets one invocation walk: it
     * ends a shader's loops after 65535 iterations in all, and a row takes up to four passes. */
    int alone = l->rows_per_invocation && cols <= ROW_PER_INVOCATION_MAX;
    uint32_t wg = alone ? l->workgroup_size : l->reduce_workgroup_size;
    /* Each invocation walks up to four passes of cols / wg elements: under a loop limit
     * (llvmpipe) long rows take wider groups (powers of two, for the tree sums). */
    while (l->loop_limit && !alone && 4 * (cols / wg + 1) >= l->loop_limit && wg * 2 <= l->wg_invocations &&
           wg * 2 <= l->wg_size[0])
        wg *= 2;
    if (l->loop_limit && !alone && 4 * (cols / wg + 1) >= l->loop_limit)
        return tgl__fail(b, TGL_ERR_UNSUPPORTED, "a row of %zu floats passes the device's loop limit (%u iterations "
                         "per invocation at %u invocations per row)", cols, l->loop_limit, wg);
    tgl_gl_binding bind[4];
    int nbind = 2;
    size_t pad, w_pad = 0, b_pad = 0, in_pad, out_pad;
    if (w.buf)
        bind[nbind++] = tgl_gl_window(b, w, cols * F32, 0, &w_pad);
    if (bias.buf) {
        if (!w.buf) /* bias sits at binding 3 whatever comes before it */
            bind[nbind++] = tgl_gl_window(b, bias, cols * F32, 0, &b_pad);
        bind[nbind++] = tgl_gl_window(b, bias, cols * F32, 0, &b_pad);
    }
    /* vec4 steps when the row length and every window's start are whole vec4s. Slabs start
     * cols floats apart, so with cols % 4 == 0 every slab's windows keep the first one's. */
    tgl_gl_window_aligned(in, cols * F32, 0, in_align, &in_pad);
    tgl_gl_window(b, out, cols * F32, 1, &out_pad);
    int vec4 = l->vec4_lines && cols % 4 == 0 && whole_vec4(in_pad) && whole_vec4(out_pad) && whole_vec4(w_pad) && whole_vec4(b_pad);
    /* Pairs of vec4s per store (llvmpipe, common/wide_store.glsl): rows of whole pairs whose
     * output starts 32 bytes into its window; slabs start cols floats apart, so keep that. */
    int wide = l->wide_stores && alone && vec4 && cols % 8 == 0 && out_pad % 32 == 0;
    /* llvmpipe's softmax and log-softmax of rows up to 128 x row_lanes floats: row_lanes
     * invocations per row, LANES_ROWS rows per workgroup (norm/softmax_lanes.comp: pairs of vec4s
     * read through a texture, stored as dvec4s, as wide says). */
    unsigned regs = wide && tex && kind <= TGL__ROWS_LOG_SOFTMAX && l->row_lanes ? lanes_regs(cols, l->row_lanes)
                                                                                 : 0;
    char defines[192];
    if (regs) {
        lanes_defines(defines, sizeof defines, kind, l->row_lanes, regs, cols == (size_t)l->row_lanes * 4 * regs);
        wg = l->row_lanes * LANES_ROWS;
    } else {
        defines_for(defines, sizeof defines, kind, w.buf != NULL, bias.buf != NULL, tex, alone, vec4, wide);
    }
    GLuint prog;
    tgl_status st = tgl_gl_program_get_wg(b, regs ? "norm/softmax_lanes" : "norm/rows", defines, wg, &prog);
    if (st)
        return st;
    if (w.buf)
        tgl_gl_uniform_ui(b, prog, 4, (GLuint)(w_pad / F32));
    if (bias.buf)
        tgl_gl_uniform_ui(b, prog, 5, (GLuint)(b_pad / F32));
    if (kind >= TGL__ROWS_RMSNORM)
        tgl_gl_uniform_f(b, prog, 6, eps);
    tgl_gl_uniform_ui(b, prog, 0, (GLuint)cols);
    /* the rows in and out (glsl/common/sweep.glsl) */
    uint64_t bytes = (uint64_t)rows * cols * 2 * F32;
    tgl_gl_uniform_ui(b, prog, TGL_GL_SWEEP_LOCATION, tgl_gl_sweep_direction(tgl_gl_of(b), bytes));
    for (size_t r0 = 0; r0 < rows; r0 += per) {
        size_t nr = rows - r0 < per ? rows - r0 : per;
        size_t off = r0 * cols * F32;
        bind[0] = tgl_gl_window_aligned((tgl__view){in.buf, in.offset + off}, nr * cols * F32, 0, in_align, &pad);
        bind[0].texture_format = tex ? (vec4 ? GL_RGBA32F : GL_R32F) : 0;
        tgl_gl_uniform_ui(b, prog, 2, (GLuint)(pad / F32));
        if (vec4 && !whole_vec4(pad))
            return tgl__fail(b, TGL_ERR_INTERNAL, "row-wise op: slab at row %zu lost its vec4 alignment", r0);
        bind[1] = tgl_gl_window(b, (tgl__view){out.buf, out.offset + off}, nr * cols * F32, 1, &pad);
        tgl_gl_uniform_ui(b, prog, 3, (GLuint)(pad / F32));
        if ((vec4 && !whole_vec4(pad)) || (wide && pad % 32))
            return tgl__fail(b, TGL_ERR_INTERNAL, "row-wise op: slab at row %zu lost its vec4 alignment", r0);
        tgl_gl_uniform_ui(b, prog, 1, (GLuint)nr);
        size_t groups = regs ? tgl_gl_ceil_div(nr, LANES_ROWS) : alone ? tgl_gl_ceil_div(nr, wg) : nr;
        if ((st = tgl_gl_dispatch(b, prog, bind, nbind, groups)))
            return st;
    }
    tgl_gl_sweep_done(tgl_gl_of(b), bytes);
    return TGL_OK;
}

void tgl_gl_rows_variants(void (*fn)(void *ctx, const char *kernel, const char *defines), void *ctx)
{
    char defines[192];
    for (int kind = 0; kind < TGL__ROWS_COUNT; kind++) {
        int params = kind == TGL__ROWS_LAYERNORM ? 2 : kind == TGL__ROWS_RMSNORM ? 1 : 0;
        for (int wb = 0; wb < (1 << params); wb++)
            for (int v = 0; v < 10; v++) { /* the 8 combinations of tex, alone, vec4, then wide */
                int tex = v & 1, alone = v >= 8 || (v >> 1) & 1, vec4 = v >= 8 || v >> 2, wide = v >= 8;
                defines_for(defines, sizeof defines, kind, wb & 1, (wb >> 1) & 1, tex, alone, vec4, wide);
                fn(ctx, "norm/rows", defines);
            }
    }
    /* norm/softmax_lanes at llvmpipe's 4, 8 and 16 lanes (128-, 256- and 512-bit vectors; the
     * widths gl_limits.c takes) */
    for (int kind = TGL__ROWS_SOFTMAX; kind <= TGL__ROWS_LOG_SOFTMAX; kind++)
        for (unsigned lanes = 4; lanes <= 16; lanes *= 2)
            for (unsigned regs = 2; regs <= LANES_MAX_REGS; regs *= 2)
                for (int exact = 0; exact < 2; exact++) {
                    lanes_defines(defines, sizeof defines, kind, lanes, regs, exact);
                    fn(ctx, "norm/softmax_lanes", defines);
                }
}

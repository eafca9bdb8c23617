/* GL driver for the row-wise ops (glsl/norm/rows.comp): one workgroup per row, rows processed
 * in slabs whose windows fit the SSBO block limit. */
#include "gl_internal.h"

#include <stdio.h>

#define F32 sizeof(float)

static const char *const kind_defines[TGL__ROWS_COUNT] = {"SOFTMAX", "LOG_SOFTMAX", "RMSNORM", "LAYERNORM"};
static const char *const op_names[TGL__ROWS_COUNT] = {"tgl_softmax", "tgl_log_softmax", "tgl_rmsnorm",
                                                      "tgl_layernorm"};

#define ROW_PER_INVOCATION_MAX 8192

/* norm/rows: tex, rows read through a buffer texture; alone, one invocation per row (both
 * llvmpipe's); vec4, rows taken a vec4 at a time; wide, (with alone and vec4) stored two vec4s
 * at a time. */
typedef struct rows_flags {
    uint32_t kind, weight, bias, tex, alone, vec4, wide;
} rows_flags;
static const tgl_gl_def rows_defs[] = {
    TGL_GL_NAME(rows_flags, kind, kind_defines), TGL_GL_FLAG(rows_flags, weight, "HAS_WEIGHT"),
    TGL_GL_FLAG(rows_flags, bias, "HAS_BIAS"),   TGL_GL_FLAG(rows_flags, tex, "TGL_TEX"),
    TGL_GL_FLAG(rows_flags, alone, "ROW_PER_INVOCATION"), TGL_GL_FLAG(rows_flags, vec4, "TGL_VEC4"),
    TGL_GL_FLAG(rows_flags, wide, "TGL_WIDE"),
};

/* norm/softmax_lanes: LANES invocations per row, REGS vec4 pairs each, ROWS rows per workgroup;
 * EXACT when the row fills them. */
#define LANES_MAX_REGS 32u
#define LANES_ROWS 8u /* rows per workgroup (see the kernel) */
typedef struct lanes_flags {
    uint32_t kind, lanes, regs, rows, exact;
} lanes_flags;
static const tgl_gl_def lanes_defs[] = {
    TGL_GL_NAME(lanes_flags, kind, kind_defines), TGL_GL_UINT(lanes_flags, lanes, "LANES"),
    TGL_GL_UINT(lanes_flags, regs, "REGS"),       TGL_GL_UINT(lanes_flags, rows, "ROWS"),
    TGL_GL_FLAG(lanes_flags, exact, "EXACT"),
};

/* Vec4s per invocation of norm/softmax_lanes for rows of `cols` floats over `lanes` invocations:
 * the fewest of 2, 4, ... 32 that hold the row, 0 for a longer row. */
static unsigned lanes_regs(size_t cols, unsigned lanes)
{
    unsigned regs = 2;
    while (regs < LANES_MAX_REGS && (size_t)lanes * 4 * regs < cols)
        regs *= 2;
    return (size_t)lanes * 4 * regs >= cols ? regs : 0;
}

/* A row-wise op's shape and its operands' window starts (pads, in bytes). */
typedef struct rows_shape {
    int kind, weight, bias;
    size_t rows, cols, in_pad, out_pad, w_pad, b_pad;
} rows_shape;

/* Rows read through a buffer texture where element-wise inputs are (llvmpipe). */
static int rows_read_texture(const tgl_gl_limits *l, size_t cols)
{
    return l->texel_inputs && cols <= l->texture_buffer_texels;
}

/* A window's start inside its binding, in floats: vec4 views need a multiple of 4. */
static int whole_vec4(size_t pad_bytes)
{
    return (pad_bytes / F32) % 4 == 0;
}

/* A row-wise op's plan and the choices its dispatch follows: rows read through a texture, in
 * vec4s, stored in pairs of vec4s, and rows per workgroup. */
typedef struct rows_run {
    tgl_gl_plan plan;
    int tex, vec4, wide;
    uint32_t rows_per_group;
} rows_run;

/* Elements per invocation below which a workgroup-per-row softmax narrows its workgroup, where
 * it has at least SOFTMAX_NARROW_ROWS rows per compute unit (fewer: each row's latency is what
 * counts, and the wider group has it shorter; H100, 64 x 1024 6.3 -> 6.4 us at 128 wide). */
#define SOFTMAX_MIN_ITEMS 8u
#define SOFTMAX_NARROW_ROWS 4u

/* The plan for a row-wise op (norm/rows or norm/softmax_lanes), pure in the shape and the
 * device profile; -1 with the plan's why saying so where the device's loop limit stops the row. */
static int rows_plan(const tgl_gl_limits *l, const rows_shape *s, rows_run *r)
{
    size_t cols = s->cols;
    tgl_gl_plan *p = &r->plan;
    *r = (rows_run){.plan = {.op = op_names[s->kind]}};
    int tex = rows_read_texture(l, cols);
    /* One invocation per row (llvmpipe), for rows its loop limit lets one invocation walk: it
     * ends a shader's loops after 65535 iterations in all, and a row takes up to four passes. */
    int alone = l->rows_per_invocation && cols <= ROW_PER_INVOCATION_MAX;
    uint32_t wg = alone ? l->workgroup_size : l->reduce_workgroup_size;
    /* Softmax rows (three passes over the row, two trees) of under SOFTMAX_MIN_ITEMS elements an
     * invocation take narrower groups, down to 32: H100, softmax of 1024 x 1024 9.8 -> 8.0 us at
     * 128 wide (at 4096 x 4096 128 wide took 82 us against 53; rmsnorm's one tree gained nothing). */
    while (!alone && s->kind <= TGL__ROWS_LOG_SOFTMAX && s->rows >= (size_t)SOFTMAX_NARROW_ROWS * l->compute_units &&
           wg / 2 >= 32 && cols < (size_t)SOFTMAX_MIN_ITEMS * wg)
        wg /= 2;
    /* Each invocation walks up to four passes of cols / wg elements: under a loop limit
     * (llvmpipe) long rows take wider groups (powers of two, for the tree sums). */
    while (l->loop_limit && !alone && 4 * (cols / wg + 1) >= l->loop_limit && wg * 2 <= l->wg_invocations &&
           wg * 2 <= l->wg_size[0])
        wg *= 2;
    if (l->loop_limit && !alone && 4 * (cols / wg + 1) >= l->loop_limit) {
        p->wg = wg;
        p->why = "the row passes the device's loop limit";
        return -1;
    }
    /* vec4 steps when the row length and every window's start are whole vec4s. Slabs start
     * cols floats apart, so with cols % 4 == 0 every slab's windows keep the first one's. */
    int vec4 = l->vec4_lines && cols % 4 == 0 && whole_vec4(s->in_pad) && whole_vec4(s->out_pad) &&
               whole_vec4(s->w_pad) && whole_vec4(s->b_pad);
    /* Pairs of vec4s per store (llvmpipe, common/wide_store.glsl): rows of whole pairs whose
     * output starts 32 bytes into its window; slabs start cols floats apart, so keep that. */
    int wide = l->wide_stores && alone && vec4 && cols % 8 == 0 && s->out_pad % 32 == 0;
    /* llvmpipe's softmax and log-softmax of rows up to 128 x row_lanes floats: row_lanes
     * invocations per row, LANES_ROWS rows per workgroup (norm/softmax_lanes.comp: pairs of vec4s
     * read through a texture, stored as dvec4s, as wide says). */
    unsigned regs = wide && tex && s->kind <= TGL__ROWS_LOG_SOFTMAX && l->row_lanes ? lanes_regs(cols, l->row_lanes)
                                                                                    : 0;
    r->tex = tex;
    r->vec4 = vec4;
    r->wide = wide;
    if (regs) {
        lanes_flags f = {(uint32_t)s->kind, l->row_lanes, regs, LANES_ROWS, cols == (size_t)l->row_lanes * 4 * regs};
        tgl_gl_plan_kernel(p, "norm/softmax_lanes", TGL_GL_DEFS(lanes_defs), &f);
        p->wg = l->row_lanes * LANES_ROWS;
        r->rows_per_group = LANES_ROWS;
        p->groups = tgl_gl_ceil_div(s->rows, LANES_ROWS);
        p->why = "a short softmax row on row_lanes invocations, vec4 pairs through a texture";
        return 0;
    }
    rows_flags f = {(uint32_t)s->kind, (uint32_t)s->weight, (uint32_t)s->bias, (uint32_t)tex, (uint32_t)alone,
                    (uint32_t)vec4, (uint32_t)wide};
    tgl_gl_plan_kernel(p, "norm/rows", TGL_GL_DEFS(rows_defs), &f);
    p->wg = wg;
    r->rows_per_group = alone ? wg : 1;
    p->groups = tgl_gl_ceil_div(s->rows, r->rows_per_group);
    p->why = alone ? (wide ? "one invocation per row (rows_per_invocation), vec4 pairs stored (wide_stores)"
                           : "one invocation per row (rows_per_invocation)")
                   : vec4 ? "one workgroup per row, vec4 steps (vec4_lines, aligned windows)"
                          : "one workgroup per row";
    return 0;
}

tgl_status tgl_gl_rows(tgl_backend *b, int kind, tgl__view in, tgl__view w, tgl__view bias, tgl__view out,
                       size_t rows, size_t cols, float eps)
{
    size_t max_elems = tgl_gl_max_window_elems(&tgl_gl_of(b)->limits, F32);
    if (cols > max_elems)
        return tgl__fail(b, TGL_ERR_UNSUPPORTED, "a row of %zu floats exceeds the device's SSBO block limit", cols);
    const tgl_gl_limits *l = &tgl_gl_of(b)->limits;
    int tex = rows_read_texture(l, cols);
    size_t per = max_elems / cols;
    if (tex && per > l->texture_buffer_texels / cols)
        per = l->texture_buffer_texels / cols;
    if (per > ((size_t)1 << 26))
        per = (size_t)1 << 26;
    size_t in_align = tgl_gl_window_align(l, tex);
    tgl_gl_binding bind[4];
    int nbind = 2;
    rows_shape shape = {kind, w.buf != NULL, bias.buf != NULL, rows, cols, 0, 0, 0, 0};
    size_t pad;
    if (w.buf)
        bind[nbind++] = tgl_gl_window(b, w, cols * F32, 0, &shape.w_pad);
    if (bias.buf) {
        if (!w.buf) /* bias sits at binding 3 whatever comes before it */
            bind[nbind++] = tgl_gl_window(b, bias, cols * F32, 0, &shape.b_pad);
        bind[nbind++] = tgl_gl_window(b, bias, cols * F32, 0, &shape.b_pad);
    }
    tgl_gl_window_aligned(in, cols * F32, 0, in_align, &shape.in_pad);
    tgl_gl_window(b, out, cols * F32, 1, &shape.out_pad);
    rows_run run;
    if (rows_plan(l, &shape, &run))
        return tgl__fail(b, TGL_ERR_UNSUPPORTED, "a row of %zu floats passes the device's loop limit (%u iterations "
                         "per invocation at %u invocations per row)", cols, l->loop_limit, run.plan.wg);
    int vec4 = run.vec4, wide = run.wide;
    GLuint prog;
    tgl_status st = tgl_gl_plan_program(b, &run.plan, &prog);
    if (st)
        return st;
    if (w.buf)
        tgl_gl_uniform_ui(b, prog, LOC_ROWS_W_OFF, (GLuint)(shape.w_pad / F32));
    if (bias.buf)
        tgl_gl_uniform_ui(b, prog, LOC_ROWS_B_OFF, (GLuint)(shape.b_pad / F32));
    if (kind >= TGL__ROWS_RMSNORM)
        tgl_gl_uniform_f(b, prog, LOC_ROWS_EPS, eps);
    tgl_gl_uniform_ui(b, prog, LOC_ROWS_COLS, (GLuint)cols);
    /* the rows in and out (glsl/common/sweep.glsl) */
    uint64_t bytes = (uint64_t)rows * cols * 2 * F32;
    tgl_gl_uniform_ui(b, prog, LOC_SWEEP, tgl_gl_sweep_direction(tgl_gl_of(b), bytes));
    for (size_t r0 = 0; r0 < rows; r0 += per) {
        size_t nr = rows - r0 < per ? rows - r0 : per;
        size_t off = r0 * cols * F32;
        bind[0] = tgl_gl_window_aligned((tgl__view){in.buf, in.offset + off}, nr * cols * F32, 0, in_align, &pad);
        bind[0].texture_format = tex ? (vec4 ? GL_RGBA32F : GL_R32F) : 0;
        tgl_gl_uniform_ui(b, prog, LOC_ROWS_X_OFF, (GLuint)(pad / F32));
        if (vec4 && !whole_vec4(pad))
            return tgl__fail(b, TGL_ERR_INTERNAL, "row-wise op: slab at row %zu lost its vec4 alignment", r0);
        bind[1] = tgl_gl_window(b, (tgl__view){out.buf, out.offset + off}, nr * cols * F32, 1, &pad);
        tgl_gl_uniform_ui(b, prog, LOC_ROWS_Y_OFF, (GLuint)(pad / F32));
        if ((vec4 && !whole_vec4(pad)) || (wide && pad % 32))
            return tgl__fail(b, TGL_ERR_INTERNAL, "row-wise op: slab at row %zu lost its vec4 alignment", r0);
        tgl_gl_uniform_ui(b, prog, LOC_ROWS_ROWS, (GLuint)nr);
        if ((st = tgl_gl_dispatch(b, prog, bind, nbind, tgl_gl_ceil_div(nr, run.rows_per_group))))
            return st;
    }
    tgl_gl_sweep_done(tgl_gl_of(b), bytes);
    return TGL_OK;
}

void tgl_gl_rows_variants(void (*fn)(void *ctx, const char *kernel, const char *defines), void *ctx)
{
    tgl_gl_plan p;
    for (uint32_t kind = 0; kind < TGL__ROWS_COUNT; kind++) {
        uint32_t params = kind == TGL__ROWS_LAYERNORM ? 2 : kind == TGL__ROWS_RMSNORM ? 1 : 0;
        for (uint32_t wb = 0; wb < (1u << params); wb++)
            for (uint32_t v = 0; v < 10; v++) { /* the 8 combinations of tex, alone, vec4, then wide */
                uint32_t alone = v >= 8 || (v >> 1) & 1, vec4 = v >= 8 || v >> 2, wide = v >= 8;
                rows_flags f = {kind, wb & 1, (wb >> 1) & 1, v & 1, alone, vec4, wide};
                tgl_gl_plan_kernel(&p, "norm/rows", TGL_GL_DEFS(rows_defs), &f);
                fn(ctx, p.kernel, p.defines);
            }
    }
    /* norm/softmax_lanes at llvmpipe's 4, 8 and 16 lanes (128-, 256- and 512-bit vectors; the
     * widths gl_limits.c takes) */
    for (uint32_t kind = TGL__ROWS_SOFTMAX; kind <= TGL__ROWS_LOG_SOFTMAX; kind++)
        for (uint32_t lanes = 4; lanes <= 16; lanes *= 2)
            for (uint32_t regs = 2; regs <= LANES_MAX_REGS; regs *= 2)
                for (uint32_t exact = 0; exact < 2; exact++) {
                    lanes_flags f = {kind, lanes, regs, LANES_ROWS, exact};
                    tgl_gl_plan_kernel(&p, "norm/softmax_lanes", TGL_GL_DEFS(lanes_defs), &f);
                    fn(ctx, p.kernel, p.defines);
                }
}

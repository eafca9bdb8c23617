/* GL driver of tgl_matvec (glsl/gemm/matvec.comp): rows are processed in slabs whose W window
 * fits the SSBO block limit and whose workgroups fit the grid. */
#include "gl_internal.h"


#define F32 sizeof(float)

/* matvec.comp's flags: a row per invocation (else a workgroup per row), vec4 loads, W and x read
 * through buffer textures (per-invocation rows only), tgl_gemm_fused's epilogue. */
typedef struct mv_flags {
    uint32_t alone, vec4, tex, epilogue;
} mv_flags;
static const tgl_gl_def mv_defs[] = {
    TGL_GL_FLAG(mv_flags, alone, "ROW_PER_INVOCATION"),
    TGL_GL_FLAG(mv_flags, vec4, "VEC4"),
    TGL_GL_FLAG(mv_flags, tex, "TEX"),
    TGL_GL_FLAG(mv_flags, epilogue, "EPILOGUE"),
};

/* gemm/matvec_lanes (profiles with row_lanes: llvmpipe): row_lanes invocations share LANES_RPS
 * rows, LANES_GROUPS such vectors a workgroup, for rows of LANES_MIN_COLS or more (vec4s, both
 * through textures). llvmpipe, 2 cores, alternated against the row per invocation (GB/s of W):
 * 4096 x 4096 15-16 -> 24-25, 16384 x 4096 14-15 -> 23-24, 4096 x 1024 15-16 -> 20-21, 2048 x
 * 3072 16-17 -> 22-25; rows of 768 between 0.7x and 1.4x (50257 x 768 12.4-16.5 against 11.8-14.7,
 * 768 x 768 10-14 against 13-19), so they keep theirs. 4 rows a vector, or 4 vectors a
 * workgroup, ran up to 25% slower at 4096 columns. */
#define LANES_RPS 8u
#define LANES_GROUPS 8u
#define LANES_MIN_COLS 1024u
typedef struct lanes_flags {
    uint32_t lanes, rps, groups, epilogue;
} lanes_flags;
static const tgl_gl_def lanes_defs[] = {
    TGL_GL_UINT(lanes_flags, lanes, "LANES"),
    TGL_GL_UINT(lanes_flags, rps, "RPS"),
    TGL_GL_UINT(lanes_flags, groups, "GROUPS"),
    TGL_GL_FLAG(lanes_flags, epilogue, "EPILOGUE"),
};

/* The plan for vectors of `lanes` invocations; *rows: the rows a workgroup takes. */
static tgl_gl_plan lanes_plan(uint32_t lanes, int epilogue, size_t *rows)
{
    /* a lane writes each row */
    lanes_flags f = {lanes, lanes < LANES_RPS ? lanes : LANES_RPS, LANES_GROUPS, (uint32_t)epilogue};
    tgl_gl_plan p = {.op = "tgl_matvec", .why = "row_lanes invocations share 8 rows, summed across them; W and x "
                                                "through textures (matvec_row_per_invocation, textures, row_lanes)"};
    tgl_gl_plan_kernel(&p, "gemm/matvec_lanes", TGL_GL_DEFS(lanes_defs), &f);
    p.wg = lanes * f.groups;
    *rows = (size_t)f.rps * f.groups;
    return p;
}

static tgl_gl_plan mv_plan(const mv_flags *f)
{
    tgl_gl_plan p = {.op = "tgl_matvec"};
    tgl_gl_plan_kernel(&p, "gemm/matvec", TGL_GL_DEFS(mv_defs), f);
    p.why = f->alone ? (f->tex ? "a row per invocation, read through textures (matvec_row_per_invocation, textures)"
                               : "a row per invocation (matvec_row_per_invocation)")
                     : "a workgroup per row, tree sum";
    return p;
}

/* The matvec's variant for rows of `cols`, pure in the shape and the profile: the flags but
 * vec4 (a slab's alignment says that), the workgroup size and rows per workgroup. */
static void mv_choose(const tgl_gl_limits *l, size_t cols, mv_flags *f, uint32_t *wg_out)
{
    /* A row per invocation walks cols / 4 vec4s in one invocation: beyond llvmpipe's loop limit
     * (iterations per invocation, all loops together) long rows take a workgroup each. */
    int per_invocation = l->gemm.matvec_row_per_invocation && (!l->loop_limit || cols / 4 < l->loop_limit / 2);
    f->alone = (uint32_t)per_invocation;
    f->tex = per_invocation && l->gemm.textures; /* the texture variants are per-invocation ones */
    f->vec4 = 0;
    uint32_t wg = per_invocation ? l->workgroup_size : l->reduce_workgroup_size;
    /* A workgroup per row: each invocation walks cols / wg elements, so under a loop limit long
     * rows take wider groups (powers of two, for the tree sum). */
    while (!per_invocation && l->loop_limit && cols / wg + 1 >= l->loop_limit / 2 && wg * 2 <= l->wg_invocations &&
           wg * 2 <= l->wg_size[0])
        wg *= 2;
    *wg_out = wg;
}

tgl_status tgl_gl_matvec(tgl_backend *b, tgl__view w, tgl__view x, tgl__view y, size_t rows, size_t cols)
{
    return tgl_gl_matvec_epilogue(b, w, x, y, rows, cols, NULL);
}

tgl_status tgl_gl_matvec_epilogue(tgl_backend *b, tgl__view w, tgl__view x, tgl__view y, size_t rows, size_t cols,
                                  const tgl__gemm *epilogue)
{
    const tgl_gl_limits *l = &tgl_gl_of(b)->limits;
    if (cols == 0 && epilogue)
        return tgl__fail(b, TGL_ERR_INTERNAL, "tgl_matvec: an epilogue over empty rows (matvec_w's to run)");
    if (cols == 0)
        return tgl_gl_fill(b, y, 0.0f, rows);
    size_t max = tgl_gl_max_window_elems(l, F32);
    if (cols > max)
        return tgl__fail(b, TGL_ERR_UNSUPPORTED, "tgl_matvec: a row of %zu floats exceeds the SSBO block limit",
                         cols);
    mv_flags f;
    uint32_t wg;
    mv_choose(l, cols, &f, &wg);
    int per_invocation = (int)f.alone, tex = (int)f.tex;
    size_t align = tgl_gl_window_align(l, tex);
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
        tgl_gl_binding bind[4] = { /* W, x, y; the epilogue's bias */
            tgl_gl_window_aligned((tgl__view){w.buf, w.offset + r0 * cols * F32}, nr * cols * F32, 0, align,
                                  &pad_w),
            xb,
            tgl_gl_window(b, (tgl__view){y.buf, y.offset + r0 * F32}, nr * F32, 1, &pad_y),
        };
        int vec4 = cols % 4 == 0 && (pad_w / F32) % 4 == 0 && (pad_x / F32) % 4 == 0;
        if (tex)
            bind[0].texture_format = bind[1].texture_format = vec4 ? GL_RGBA32F : GL_R32F;
        f.vec4 = (uint32_t)vec4;
        f.epilogue = epilogue != NULL;
        int lanes = tex && vec4 && l->row_lanes && cols >= LANES_MIN_COLS &&
                    (!l->loop_limit || cols / 4 / l->row_lanes < l->loop_limit / 2);
        size_t group_rows = rows_per_group;
        tgl_gl_plan plan = lanes ? lanes_plan(l->row_lanes, epilogue != NULL, &group_rows) : mv_plan(&f);
        if (!lanes)
            plan.wg = wg;
        plan.groups = tgl_gl_ceil_div(nr, group_rows);
        GLuint prog;
        tgl_status st = tgl_gl_plan_program(b, &plan, &prog);
        if (st)
            return st;
        tgl_gl_uniform_ui(b, prog, LOC_MV_ROWS, (GLuint)nr);
        tgl_gl_uniform_ui(b, prog, LOC_MV_COLS, (GLuint)cols);
        tgl_gl_uniform_ui(b, prog, LOC_MV_W_OFF, (GLuint)(pad_w / F32));
        tgl_gl_uniform_ui(b, prog, LOC_MV_X_OFF, (GLuint)(pad_x / F32));
        tgl_gl_uniform_ui(b, prog, LOC_MV_Y_OFF, (GLuint)(pad_y / F32));
        if (epilogue) { /* the bias indexed by the row */
            bind[3] = tgl_gl_epilogue(b, prog, epilogue, r0, nr, bind[2]);
            tgl_gl_uniform_f(b, prog, LOC_MV_ALPHA, epilogue->alpha);
            tgl_gl_uniform_f(b, prog, LOC_MV_BETA, epilogue->beta);
        }
        if ((st = tgl_gl_dispatch(b, prog, bind, epilogue ? 4 : 3, plan.groups)))
            return st;
    }
    return TGL_OK;
}

void tgl_gl_matvec_variants(void (*fn)(void *ctx, const char *kernel, const char *defines), void *ctx)
{
    for (uint32_t v = 0; v < 16; v++) {
        mv_flags f = {v & 1, (v >> 1) & 1, (v >> 2) & 1, (v >> 3) & 1};
        if (f.tex && !f.alone) /* the texture variants are per-invocation ones */
            continue;
        tgl_gl_plan p = mv_plan(&f);
        fn(ctx, p.kernel, p.defines);
    }
    for (uint32_t lanes = 4; lanes <= 16; lanes *= 2) /* llvmpipe's 128-, 256- and 512-bit vectors */
        for (int epilogue = 0; epilogue < 2; epilogue++) {
            size_t rows;
            tgl_gl_plan p = lanes_plan(lanes, epilogue, &rows);
            fn(ctx, p.kernel, p.defines);
        }
}

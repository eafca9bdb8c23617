/* GL drivers of tgl_matvec_t (glsl/gemm/matvec_w.comp) and of tgl_quantize / tgl_dequantize
 * to and from the block formats (glsl/tensor/quantize.comp). W is walked in slabs of rows
 * whose window fits the SSBO block limit and whose workgroups fit the grid; x and y in chunks
 * of up to XR_MAX rows, which share each weight load. Windows are taken around whatever the
 * strides reach, negative ones included, and offsets given from each window's start. */
#include "gl_internal.h"

#define XR_MAX 4u

/* WFMT of glsl/common/weights.glsl: 0 f32, 1 f16, 2 bf16, 3 q8_0, 4 q4_0. */
static uint32_t wfmt(tgl_dtype dt)
{
    switch (dt) {
    case TGL_DTYPE_F16: return 1;
    case TGL_DTYPE_BF16: return 2;
    case TGL_DTYPE_Q8_0: return 3;
    case TGL_DTYPE_Q4_0: return 4;
    default: return 0;
    }
}

/* The window over rows [i0, i0 + ni) x units [u0, u0 + nu) of a 2-D view (strides in units;
 * callers keep what they reach within the SSBO block limit) and the offset of unit (i0, u0)
 * from the window's start, in elements (float views) or bytes (block views). */
typedef struct window2 {
    tgl_gl_binding bind;
    GLuint off;
} window2;

static window2 window_2d(const tgl__tensor_view *v, size_t i0, size_t ni, size_t u0, size_t nu, int writes,
                         size_t align)
{
    window2 w;
    tgl__tensor_view s = tgl__sub_view(v, i0, ni, u0, nu);
    size_t ub = tgl__unit_bytes(v->dtype), pad;
    w.bind = tgl_gl_window_aligned(s.view, s.span * ub, writes, align, &pad);
    /* whole words: a half type's or a block's last bytes may end inside one (the buffer's tail
     * makes room) */
    w.bind.bytes = (w.bind.bytes + 3) / 4 * 4;
    size_t off = pad + s.base * ub;
    w.off = (GLuint)(tgl__is_block(v->dtype) ? off : off / ub);
    return w;
}

/* A stride as the kernels take it: elements (float views) or bytes (a block view's rows). */
static GLuint stride_bits(const tgl__tensor_view *v, int d)
{
    int64_t s = v->strides[d] * (tgl__is_block(v->dtype) ? (int64_t)tgl__unit_bytes(v->dtype) : 1);
    return (GLuint)(uint64_t)s;
}

/* ---- tgl_matvec_t ---- */

/* matvec_w.comp's variant: a row per invocation (else a workgroup, or subgroups, per row), the
 * subgroups per row (mvw_split) and rows per subgroup (WROWS, mvw_wrows), the weight format,
 * rows of x per weight load, how W and x are read (textures only with a row per invocation),
 * x as vec4s (block formats), and tgl_gemm_fused's epilogue (tgl_matvec_t_fused; tgl_gemm's thin
 * products). */
typedef struct mvw_flags {
    uint32_t alone, fmt, xr, read, xvec4, lanes, split, wrows, wvec4, unpack, epilogue;
} mvw_flags;
/* LANES: a subgroup of this many invocations per row, summed by shuffles; only 32, the
 * subgroup of NVIDIA's and AMD's (wave32) GPUs (other sizes take a workgroup per row). */
#define MVW_LANES 32u
static const tgl_gl_def mvw_defs[] = {
    TGL_GL_FLAG(mvw_flags, alone, "ROW_PER_INVOCATION"),
    TGL_GL_UINT(mvw_flags, lanes, "LANES"),
    TGL_GL_UINT(mvw_flags, split, "ROW_SPLIT"),
    TGL_GL_UINT(mvw_flags, wrows, "WROWS"),
    TGL_GL_UINT(mvw_flags, fmt, "WFMT"),
    TGL_GL_UINT(mvw_flags, xr, "XR"),
    TGL_GL_READ(mvw_flags, read),
    TGL_GL_FLAG(mvw_flags, xvec4, "XVEC4"),
    TGL_GL_FLAG(mvw_flags, wvec4, "WVEC4"),
    TGL_GL_FLAG(mvw_flags, unpack, "TGL_WEIGHTS_UNPACK"),
    TGL_GL_FLAG(mvw_flags, epilogue, "EPILOGUE"),
};

static tgl_gl_plan mvw_plan(const mvw_flags *f)
{
    tgl_gl_plan p = {.op = "tgl_matvec_t"};
    tgl_gl_plan_kernel(&p, "gemm/matvec_w", TGL_GL_DEFS(mvw_defs), f);
    p.why = f->lanes  ? "a subgroup per row, or ROW_SPLIT of them (subgroup_shuffle of 32; float weights with long rows), "
                        "shuffle sums, XR rows of x per weight load"
            : !f->alone ? "a workgroup per row, tree sum, XR rows of x per weight load"
            : f->read != TGL_GL_READ_SSBO
                ? "a row per invocation (matvec_row_per_invocation), W and x through textures (textures), XR rows of x "
                  "per weight load"
                : "a row per invocation (matvec_row_per_invocation), XR rows of x per weight load";
    return p;
}

/* Loop trips an invocation makes over a row of `units` units (an element, or a block, whose
 * word and quant loops count about 14 trips), for llvmpipe's per-invocation loop limit. */
static uint64_t row_trips(tgl_dtype dt, size_t units, uint32_t wg, int alone)
{
    uint64_t per_unit = tgl__is_block(dt) ? 14 : 1;
    return (alone ? units : units / wg + 1) * per_unit;
}

/* W holds binary16s: f16 elements or the block formats' scales (weight_unpack's concern). */
static int has_halves(tgl_dtype dt)
{
    return dt == TGL_DTYPE_F16 || tgl__is_block(dt);
}

/* Subgroups per row (matvec_w.comp's ROW_SPLIT) for a subgroup path over rows of `units` units
 * (elements of a float weight, 8-element words of a block format): float weights split a row
 * while each invocation keeps at least 16 units (H200, f16 4096 x 11008, 86 units an invocation
 * whole: 61.3 us, halves 55.6, quarters 52.2); q4_0 into 4 and q8_0 into 2 while each keeps at
 * least 4 (H100, one row of x, 4096 x 11008 and 4096 x 4096, us: q4_0 whole 23.2 and 11.8, in
 * quarters with mvw_wrows' 4 rows 19.5 and 10.6; q8_0 whole 31.3 and 12.5, in halves 25.3 and
 * 12.4). The workgroup must hold whole rows. */
static uint32_t mvw_split(tgl_dtype dt, size_t units, uint32_t wg)
{
    uint32_t split = 1, most = dt == TGL_DTYPE_Q4_0 ? 4u : dt == TGL_DTYPE_Q8_0 ? 2u : 4u;
    size_t keep = tgl__is_block(dt) ? 4 : 16;
    while (split < most && units / (MVW_LANES * split * 2) >= keep && wg % (MVW_LANES * split * 2) == 0)
        split *= 2;
    return split;
}

/* Rows of W a subgroup takes (WROWS) on the subgroup path: 4 for q4_0 under one row of x with
 * its rows in quarters, whose x loads, 4 bytes an element against W's half byte, outweigh W's
 * (H100, 4096 x 11008, in quarter rows: 21.6 us with 1 row, 19.5 with 4; q8_0 with 4 rows in
 * quarters 28.6 against 25.3 with 1 in halves); 1 otherwise (whole rows four at a time leave too
 * few subgroups: 1024 x 1024 ran 5.8 -> 7.9 us, 4096 x 4096 11.7 -> 13.8). */
static uint32_t mvw_wrows(tgl_dtype dt, size_t n, uint32_t split)
{
    return dt == TGL_DTYPE_Q4_0 && n == 1 && split == 4 ? 4u : 1u;
}

/* The variant for m, pure in the shape and the profile (xvec4 and read decided per dispatch
 * from the windows: see tgl_gl_matvec_t). */
static void mvw_choose(const tgl_gl_limits *l, const tgl__matvec_t *m, mvw_flags *f, uint32_t *wg_out)
{
    size_t units = tgl__is_block(m->w.dtype) ? m->cols / 32 : m->cols;
    int alone = l->gemm.matvec_row_per_invocation &&
                (!l->loop_limit || row_trips(m->w.dtype, units, 1, 1) < l->loop_limit / 2);
    uint32_t wg = alone ? l->workgroup_size : l->reduce_workgroup_size;
    while (!alone && l->loop_limit && row_trips(m->w.dtype, units, wg, 0) >= l->loop_limit / 2 &&
           wg * 2 <= l->wg_invocations && wg * 2 <= l->wg_size[0])
        wg *= 2;
    int lanes = !alone && l->subgroup_shuffle == MVW_LANES && wg % MVW_LANES == 0;
    /* invocations sharing a row take a block format's rows a word (8 elements) at a time */
    uint32_t split = lanes ? mvw_split(m->w.dtype, tgl__is_block(m->w.dtype) ? m->cols / 8 : m->cols, wg) : 1u;
    *f = (mvw_flags){(uint32_t)alone, wfmt(m->w.dtype), m->n > 1 ? XR_MAX : 1u,
                     (uint32_t)tgl_gl_input_read(l, alone && l->gemm.textures), 0, lanes ? MVW_LANES : 0u,
                     split, lanes ? mvw_wrows(m->w.dtype, m->n, split) : 1u, 0,
                     (uint32_t)(l->weight_unpack && has_halves(m->w.dtype)), m->epilogue != NULL};
    *wg_out = wg;
}

/* m is one plain row of x over an f32 W of back-to-back rows: tgl_matvec's kernels, whose two
 * accumulation chains and four steps a loop trip run it at 2.3-2.7x matvec_w's rate on llvmpipe
 * (768 x 768 to 50257 x 768, a GPT-2-small decode step's layers). With an epilogue only where
 * rows run per invocation (llvmpipe: the residual products of a decode step). */
static int plain_row(const tgl_gl_limits *l, const tgl__matvec_t *m)
{
    return (!m->epilogue || (l->gemm.matvec_row_per_invocation && m->cols)) && m->n == 1 &&
           m->w.dtype == TGL_DTYPE_F32 && m->w.strides[1] == 1 && m->w.strides[0] == (int64_t)m->cols &&
           m->x.strides[1] == 1 && m->y.strides[1] == 1;
}

tgl_status tgl_gl_matvec_t(tgl_backend *b, const tgl__matvec_t *m)
{
    const tgl_gl_limits *l = &tgl_gl_of(b)->limits;
    if (plain_row(l, m))
        return tgl_gl_matvec_epilogue(b, tgl__view_at_base(&m->w), tgl__view_at_base(&m->x),
                                      tgl__view_at_base(&m->y), m->rows, m->cols, m->epilogue);
    size_t units = tgl__is_block(m->w.dtype) ? m->cols / 32 : m->cols;
    mvw_flags f;
    uint32_t wg;
    mvw_choose(l, m, &f, &wg);
    int tex = f.read != TGL_GL_READ_SSBO;
    size_t max_bytes = tgl_gl_max_window_elems(l, 1), align = tgl_gl_window_align(l, tex);
    if (tex && (uint64_t)l->texture_buffer_texels * 4 < max_bytes) /* W's texels are words */
        max_bytes = (size_t)l->texture_buffer_texels * 4;
    uint32_t rows_per_group = f.alone ? wg : f.lanes ? wg / (f.lanes * f.split) * f.wrows : 1;
    uint64_t grid_rows = (uint64_t)l->wg_count[0] * l->wg_count[1] * rows_per_group;
    /* rows per slab: the weight's window and y's for XR rows of x within the limit */
    size_t per = m->rows < grid_rows ? m->rows : (size_t)grid_rows;
    while (per > 1 && (tgl__span_bytes(&m->w, per, units) > max_bytes ||
                       tgl__span_bytes(&m->y, m->n < f.xr ? m->n : f.xr, per) > max_bytes))
        per = per / 2;
    if (tgl__span_bytes(&m->w, 1, units) > max_bytes || tgl__span_bytes(&m->x, 1, m->cols) > max_bytes)
        return tgl__fail(b, TGL_ERR_UNSUPPORTED, "tgl_matvec_t: a row of %zu elements exceeds the %s limit", m->cols,
                         tex ? "buffer texture" : "SSBO block");
    for (size_t r0 = 0; r0 < m->rows; r0 += per) {
        size_t nr = m->rows - r0 < per ? m->rows - r0 : per;
        window2 w = m->cols ? window_2d(&m->w, r0, nr, 0, units, 0, align) : (window2){0};
        for (size_t j0 = 0; j0 < m->n; j0 += f.xr) {
            size_t nj = m->n - j0 < f.xr ? m->n - j0 : f.xr;
            if (tgl__span_bytes(&m->x, nj, m->cols) > max_bytes || tgl__span_bytes(&m->y, nj, nr) > max_bytes)
                return tgl__fail(b, TGL_ERR_UNSUPPORTED,
                                 "tgl_matvec_t: the strides of x or y reach past the SSBO block limit in %zu rows", nj);
            window2 y = window_2d(&m->y, j0, nj, r0, nr, 1, align), x = w;
            if (m->cols)
                x = window_2d(&m->x, j0, nj, 0, m->cols, 0, align);
            else { /* an epilogue of empty sums: W and x reach nothing; y's window stands in */
                w.bind = x.bind = y.bind;
                w.bind.writes = x.bind.writes = 0;
            }
            /* W's floats 4 at a time: unit column stride, whole vec4s from the window's start */
            f.wvec4 = !tgl__is_block(m->w.dtype) && m->w.strides[1] == 1 && m->cols % 4 == 0 && w.off % 4 == 0 &&
                      (nr == 1 || m->w.strides[0] % 4 == 0);
            /* x as vec4s: read 4 columns at a time (blocks, WVEC4), unit column stride, window
             * offset and row stride in whole vec4s */
            f.xvec4 = (tgl__is_block(m->w.dtype) || f.wvec4) && m->x.strides[1] == 1 && x.off % 4 == 0 &&
                      (nj == 1 || (m->x.strides[0] % 4 == 0));
            GLuint x_div = f.xvec4 ? 4u : 1u;
            tgl_gl_plan plan = mvw_plan(&f);
            plan.wg = wg;
            plan.groups = tgl_gl_ceil_div(nr, rows_per_group);
            GLuint prog;
            tgl_status st = tgl_gl_plan_program(b, &plan, &prog);
            if (st)
                return st;
            const tgl_gl_uniform u[] = {
                {LOC_MVW_ROWS, nr},
                {LOC_MVW_COLS, m->cols},
                {LOC_MVW_N, nj},
                {LOC_MVW_W_OFF, w.off},
                {LOC_MVW_W_RS, stride_bits(&m->w, 0)},
                {LOC_MVW_W_CS, stride_bits(&m->w, 1)},
                {LOC_MVW_X_OFF, x.off / x_div},
                {LOC_MVW_X_RS, f.xvec4 ? (GLuint)(m->x.strides[0] / 4) : stride_bits(&m->x, 0)},
                {LOC_MVW_X_CS, stride_bits(&m->x, 1)},
                {LOC_MVW_Y_OFF, y.off},
                {LOC_MVW_Y_RS, stride_bits(&m->y, 0)},
                {LOC_MVW_Y_CS, stride_bits(&m->y, 1)},
            };
            tgl_gl_uniforms_ui(b, prog, u, sizeof u / sizeof *u);
            tgl_gl_binding bind[4] = {w.bind, x.bind, y.bind};
            /* an f32 W read 4 words a texel (matvec_w's F32X4) */
            tgl_gl_bind_read(&bind[0], (tgl_gl_read)f.read,
                             f.wvec4 && m->w.dtype == TGL_DTYPE_F32 ? GL_RGBA32UI : GL_R32UI);
            tgl_gl_bind_read(&bind[1], (tgl_gl_read)f.read, f.xvec4 ? GL_RGBA32F : GL_R32F);
            if (m->epilogue) { /* W's rows are the product's columns */
                bind[3] = tgl_gl_epilogue(b, prog, m->epilogue, r0, nr, y.bind);
                tgl_gl_uniform_f(b, prog, LOC_MVW_ALPHA, m->epilogue->alpha);
                tgl_gl_uniform_f(b, prog, LOC_MVW_BETA, m->epilogue->beta);
            }
            if ((st = tgl_gl_dispatch(b, prog, bind, m->epilogue ? 4 : 3, plan.groups)))
                return st;
        }
    }
    return TGL_OK;
}

/* ---- tgl_quantize, tgl_dequantize ---- */

typedef struct quant_flags {
    uint32_t to_blocks, fmt;
} quant_flags;
static const tgl_gl_def quant_defs[] = {
    TGL_GL_FLAG(quant_flags, to_blocks, "TO_BLOCKS"),
    TGL_GL_UINT(quant_flags, fmt, "WFMT"),
};

static tgl_gl_plan quant_plan(const quant_flags *f)
{
    tgl_gl_plan p = {.op = f->to_blocks ? "tgl_quantize" : "tgl_dequantize", .why = "an invocation per block"};
    tgl_gl_plan_kernel(&p, "tensor/quantize", TGL_GL_DEFS(quant_defs), f);
    return p;
}

tgl_status tgl_gl_quantize(tgl_backend *b, const tgl__quant *q)
{
    const tgl_gl_limits *l = &tgl_gl_of(b)->limits;
    size_t max_bytes = tgl_gl_max_window_elems(l, 1), align = tgl_gl_window_align(l, 0);
    size_t blocks = q->cols / 32;
    quant_flags f = {(uint32_t)q->to_blocks, wfmt(q->q.dtype)};
    tgl_gl_plan plan = quant_plan(&f);
    plan.wg = l->workgroup_size;
    plan.groups = tgl_gl_ceil_div(q->rows * blocks, plan.wg);
    uint64_t grid = (uint64_t)l->wg_count[0] * l->wg_count[1] * plan.wg;
    if (grid > UINT32_MAX / 2)
        grid = UINT32_MAX / 2;
    /* Blocks are independent: a dispatch takes a slab of `per` rows of `chunk` blocks each (a
     * row too long for one window or grid in pieces), its windows and grid within the limits. */
    size_t per = q->rows, chunk = blocks;
    while (chunk > 1 && (chunk > grid || tgl__span_bytes(&q->q, 1, chunk) > max_bytes ||
                         tgl__span_bytes(&q->f, 1, chunk * 32) > max_bytes))
        chunk = (chunk + 1) / 2;
    while (per > 1 && ((uint64_t)per * chunk > grid || tgl__span_bytes(&q->q, per, chunk) > max_bytes ||
                       tgl__span_bytes(&q->f, per, chunk * 32) > max_bytes))
        per = (per + 1) / 2;
    if (tgl__span_bytes(&q->q, 1, 1) > max_bytes || tgl__span_bytes(&q->f, 1, 32) > max_bytes)
        return tgl__fail(b, TGL_ERR_UNSUPPORTED, "%s: a block's elements reach past the SSBO block limit", plan.op);
    GLuint prog;
    tgl_status st = tgl_gl_plan_program(b, &plan, &prog);
    if (st)
        return st;
    for (size_t r0 = 0; r0 < q->rows; r0 += per) {
        size_t nr = q->rows - r0 < per ? q->rows - r0 : per;
        for (size_t k0 = 0; k0 < blocks; k0 += chunk) {
            size_t nk = blocks - k0 < chunk ? blocks - k0 : chunk;
            window2 wb = window_2d(&q->q, r0, nr, k0, nk, q->to_blocks, align),
                    fb = window_2d(&q->f, r0, nr, k0 * 32, nk * 32, !q->to_blocks, align);
            const tgl_gl_uniform u[] = {
                {LOC_MVW_ROWS, nr},
                {LOC_MVW_COLS, nk * 32},
                {LOC_MVW_W_OFF, wb.off},
                {LOC_MVW_W_RS, stride_bits(&q->q, 0)},
                {LOC_MVW_X_OFF, fb.off},
                {LOC_MVW_X_RS, stride_bits(&q->f, 0)},
                {LOC_MVW_X_CS, stride_bits(&q->f, 1)},
            };
            tgl_gl_uniforms_ui(b, prog, u, sizeof u / sizeof *u);
            tgl_gl_binding bind[2] = {wb.bind, fb.bind};
            if ((st = tgl_gl_dispatch(b, prog, bind, 2, tgl_gl_ceil_div(nr * nk, plan.wg))))
                return st;
        }
    }
    return TGL_OK;
}

/* ---- tgl_gather_rows_t ---- */

typedef struct gw_flags {
    uint32_t fmt;
} gw_flags;
static const tgl_gl_def gw_defs[] = {TGL_GL_UINT(gw_flags, fmt, "WFMT")};

static tgl_gl_plan gw_plan(uint32_t fmt)
{
    gw_flags f = {fmt};
    tgl_gl_plan p = {.op = "tgl_gather_rows_t", .why = "an invocation per output element"};
    tgl_gl_plan_kernel(&p, "llm/gather_w", TGL_GL_DEFS(gw_defs), &f);
    return p;
}

/* The ids checked first (a wait for the status word); then, per run of columns (whole blocks),
 * the table in windows of rows that fit the SSBO block limit, each with every slab of ids and
 * output rows whose windows fit: a dispatch writes the rows whose ids fall in its window. */
tgl_status tgl_gl_gather_rows_t(tgl_backend *b, const tgl__tew *check, const tgl__gather_w *g, uint64_t *bad_pos,
                                int32_t *bad_value)
{
    tgl_status st = tgl_gl_check_index(b, check, bad_pos, bad_value);
    if (st || *bad_pos != UINT64_MAX)
        return st;
    const tgl_gl_limits *l = &tgl_gl_of(b)->limits;
    size_t max_bytes = tgl_gl_max_window_elems(l, 1), align = tgl_gl_window_align(l, 0);
    tgl__tensor_view ids = g->ids; /* as a 2-D view of [n, 1] for window_2d */
    ids.strides[1] = 1;
    uint64_t grid = (uint64_t)l->wg_count[0] * l->wg_count[1] * l->workgroup_size;
    if (grid > UINT32_MAX / 2)
        grid = UINT32_MAX / 2;
    /* columns per dispatch (whole blocks), table rows per window, output rows per slab */
    size_t ub = tgl__is_block(g->w.dtype) ? 32 : 1, cc = g->cols;
    while (cc > ub && (tgl__span_bytes(&g->out, 1, cc) > max_bytes || tgl__span_bytes(&g->w, 1, cc / ub) > max_bytes ||
                       cc > grid))
        cc = (cc / ub + 1) / 2 * ub;
    if (tgl__span_bytes(&g->out, 1, cc) > max_bytes || tgl__span_bytes(&g->w, 1, cc / ub) > max_bytes)
        return tgl__fail(b, TGL_ERR_UNSUPPORTED, "tgl_gather_rows_t: one %s of the table or out reaches past the SSBO "
                         "block limit", ub > 1 ? "block" : "element");
    size_t per_w = g->rows, per_k = g->n;
    while (per_w > 1 && tgl__span_bytes(&g->w, per_w, cc / ub) > max_bytes)
        per_w = (per_w + 1) / 2;
    while (per_k > 1 && ((uint64_t)per_k * cc > grid || tgl__span_bytes(&g->out, per_k, cc) > max_bytes ||
                         tgl__span_bytes(&ids, per_k, 1) > max_bytes))
        per_k = (per_k + 1) / 2;
    GLuint prog;
    tgl_gl_plan plan = gw_plan(wfmt(g->w.dtype));
    plan.wg = l->workgroup_size;
    if ((st = tgl_gl_plan_program(b, &plan, &prog)))
        return st;
    for (size_t c0 = 0; c0 < g->cols; c0 += cc) {
        size_t nc = g->cols - c0 < cc ? g->cols - c0 : cc;
        for (size_t r0 = 0; r0 < g->rows; r0 += per_w) {
            size_t nr = g->rows - r0 < per_w ? g->rows - r0 : per_w;
            window2 ww = window_2d(&g->w, r0, nr, c0 / ub, nc / ub, 0, align);
            for (size_t k0 = 0; k0 < g->n; k0 += per_k) {
                size_t nk = g->n - k0 < per_k ? g->n - k0 : per_k;
                window2 wi = window_2d(&ids, k0, nk, 0, 1, 0, align), wy = window_2d(&g->out, k0, nk, c0, nc, 1, align);
                const tgl_gl_uniform u[] = {
                    {LOC_GW_COUNT, nk * nc},            {LOC_GW_COLS, nc},
                    {LOC_GW_W_OFF, ww.off},             {LOC_GW_W_RS, stride_bits(&g->w, 0)},
                    {LOC_GW_W_CS, stride_bits(&g->w, 1)}, {LOC_GW_ID0, r0},
                    {LOC_GW_ID_ROWS, nr},               {LOC_GW_IDS_OFF, wi.off},
                    {LOC_GW_IDS_STRIDE, stride_bits(&ids, 0)}, {LOC_GW_Y_OFF, wy.off},
                    {LOC_GW_Y_RS, stride_bits(&g->out, 0)}, {LOC_GW_Y_CS, stride_bits(&g->out, 1)},
                };
                tgl_gl_uniforms_ui(b, prog, u, sizeof u / sizeof *u);
                tgl_gl_binding bind[3] = {ww.bind, wi.bind, wy.bind};
                if ((st = tgl_gl_dispatch(b, prog, bind, 3, tgl_gl_ceil_div(nk * nc, plan.wg))))
                    return st;
            }
        }
    }
    return TGL_OK;
}

void tgl_gl_quant_variants(void (*fn)(void *ctx, const char *kernel, const char *defines), void *ctx)
{
    for (uint32_t fmt = 0; fmt <= 4; fmt++)
        for (uint32_t alone = 0; alone < 2; alone++)
            for (uint32_t xr = 1; xr <= XR_MAX; xr += XR_MAX - 1)
                for (uint32_t read = 0; read < (alone ? TGL_GL_READS : 1u); read++)
                    for (uint32_t wvec4 = 0; wvec4 < (fmt < 3 ? 2u : 1u); wvec4++)
                        for (uint32_t xvec4 = 0; xvec4 < (fmt >= 3 || wvec4 ? 2u : 1u); xvec4++)
                            for (uint32_t lanes = 0; lanes <= (alone ? 0u : MVW_LANES); lanes += MVW_LANES)
                                for (uint32_t split = 1; split <= (lanes ? 4u : 1u); split *= 2)
                                    for (uint32_t wrows = 1; wrows <= (lanes && fmt == 4 && xr == 1 ? 4u : 1u); wrows *= 4)
                                        for (uint32_t unpack = 0; unpack < (fmt == 1 || fmt >= 3 ? 2u : 1u); unpack++)
                                            for (uint32_t epilogue = 0; epilogue < 2u; epilogue++) {
                                                mvw_flags f = {alone,  fmt,   xr,     read,     xvec4,   lanes,
                                                               split, wrows, wvec4, unpack, epilogue};
                                                tgl_gl_plan p = mvw_plan(&f);
                                                fn(ctx, p.kernel, p.defines);
                                            }
    for (uint32_t fmt = 0; fmt <= 4; fmt++)
        tgl_gl_list_plan(fn, ctx, gw_plan(fmt));
    for (uint32_t fmt = 3; fmt <= 4; fmt++) {
        for (uint32_t to = 0; to < 2; to++) {
            quant_flags f = {to, fmt};
            tgl_gl_plan p = quant_plan(&f);
            fn(ctx, p.kernel, p.defines);
        }
    }
}

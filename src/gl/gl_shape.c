/* GL driver for the strided gather (glsl/shape/strided.comp): tgl_binary_broadcast and
 * tgl_permute. Inputs are bound whole; the output is processed in chunks that fit the SSBO
 * block limit and the grid. Inputs past the block limit take the BOX variant: the index space
 * is halved, axis by axis, into boxes whose every operand window fits, one dispatch each. */
#include "gl_internal.h"

#define F32 sizeof(float)

/* strided.comp's flags: the op (COPY, then the binary ops), rows (a workgroup row per output
 * row), VEC (rows of vec4s) with A_RUN / B_RUN (an input read as vec4s) and TGL_WIDE (pairs
 * stored as dvec4s), the inputs through textures, and BOX (inputs past the block limit). */
typedef struct strided_flags {
    uint32_t op, rows, vec, a_run, b_run, wide, tex, box;
} strided_flags;
static const char *const op_names[1 + TGL__BINARY_FLAT_KERNELS] = {"COPY",   "OP_ADD", "OP_SUB", "OP_MUL",
                                                           "OP_DIV", "OP_MAX", "OP_MIN", "OP_POW"};
static const tgl_gl_def strided_defs[] = {
    TGL_GL_NAME(strided_flags, op, op_names),      TGL_GL_FLAG(strided_flags, rows, "ROWS"),
    TGL_GL_FLAG(strided_flags, vec, "VEC"),        TGL_GL_FLAG(strided_flags, a_run, "A_RUN"),
    TGL_GL_FLAG(strided_flags, b_run, "B_RUN"),    TGL_GL_FLAG(strided_flags, wide, "TGL_WIDE"),
    TGL_GL_FLAG(strided_flags, tex, "TGL_TEX"),    TGL_GL_FLAG(strided_flags, box, "BOX"),
};

/* variant: VARIANT_FLAT, VARIANT_ROWS, or VARIANT_VEC (rows of vec4s) with
 * VEC_A_RUN and VEC_B_RUN as the inputs allow and VEC_WIDE (pairs of vec4s stored as dvec4s). */
enum { VARIANT_FLAT = 0, VARIANT_ROWS = 1, VARIANT_VEC = 2, VEC_A_RUN = 4, VEC_B_RUN = 8, VEC_WIDE = 16 };

/* op: -1 for tgl_permute's copy, else the tgl_binary_op of tgl_binary_broadcast. */
static tgl_gl_plan strided_plan(int op, int variant, int tex, int box)
{
    strided_flags f = {(uint32_t)(op + 1), variant != VARIANT_FLAT, !!(variant & VARIANT_VEC),
                       !!(variant & VEC_A_RUN), !!(variant & VEC_B_RUN), !!(variant & VEC_WIDE),
                       (uint32_t)tex, (uint32_t)box};
    tgl_gl_plan p = {.op = op < 0 ? "tgl_permute" : "tgl_binary_broadcast"};
    tgl_gl_plan_kernel(&p, "shape/strided", TGL_GL_DEFS(strided_defs), &f);
    p.why = box                         ? "an input past the SSBO block limit: boxes whose windows fit"
            : variant & VEC_WIDE        ? "rows of whole vec4 pairs, stored as dvec4s (wide_stores)"
            : variant & VARIANT_VEC     ? "rows of whole vec4s"
            : variant != VARIANT_FLAT   ? "a workgroup row per output row (the last axis at least 64)"
                                        : "an invocation per output element";
    return p;
}

/* Whether the VEC variant reads an input as vec4s (A_RUN, B_RUN in glsl/shape/strided.comp):
 * contiguous along the row, and every row's start 16-byte aligned in its window. */
static int vec_run(const size_t *stride, size_t ndim, size_t pad_bytes)
{
    if (stride[ndim - 1] != 1 || pad_bytes % 16)
        return 0;
    for (size_t d = 0; d + 1 < ndim; d++)
        if (stride[d] % 4)
            return 0;
    return 1;
}

/* Rows at least this long take the ROWS variant (a group per row piece); shorter ones would
 * leave most of a group idle. */
#define ROWS_MIN_INNER 32

/* The boxes of one call: the operands, their strides (the output's row-major) and the limits a
 * box must keep. */
typedef struct boxes {
    tgl_backend *b;
    int op, tex;
    GLuint prog[2];    /* flat, ROWS */
    tgl__view a, bb, out;
    const tgl__strided *s;
    size_t y_stride[TGL_MAX_DIMS];
    size_t max_span, max_elems, align;
} boxes;

/* Elements from the box's first to its last element, with these strides. */
static size_t box_span(const size_t *lo, const size_t *hi, const size_t *stride, size_t ndim)
{
    size_t span = 1;
    for (size_t d = 0; d < ndim; d++)
        span += (hi[d] - lo[d] - 1) * stride[d];
    return span;
}

static size_t box_base(const size_t *lo, const size_t *stride, size_t ndim)
{
    size_t base = 0;
    for (size_t d = 0; d < ndim; d++)
        base += lo[d] * stride[d];
    return base;
}

static tgl_status run_box(boxes *x, size_t *lo, size_t *hi)
{
    const tgl__strided *s = x->s;
    const tgl_gl_limits *l = &tgl_gl_of(x->b)->limits;
    size_t nd = s->ndim, n = 1, ext[TGL_MAX_DIMS] = {0};
    if (nd == 0 || nd > TGL_MAX_DIMS)
        return tgl__fail(x->b, TGL_ERR_INTERNAL, "strided op of %zu dims", nd);
    for (size_t d = 0; d < nd; d++)
        n *= ext[d] = hi[d] - lo[d];
    size_t sa = box_span(lo, hi, s->a_stride, nd), sy = box_span(lo, hi, x->y_stride, nd);
    size_t sb = x->op >= 0 ? box_span(lo, hi, s->b_stride, nd) : 0;
    if (sa > x->max_span || sb > x->max_span || sy > x->max_span || n > x->max_elems) {
        /* Halve the axis that spreads the box furthest in some operand. */
        size_t best = nd, reach = 0;
        for (size_t d = 0; d < nd; d++) {
            size_t st = s->a_stride[d] > x->y_stride[d] ? s->a_stride[d] : x->y_stride[d];
            if (x->op >= 0 && s->b_stride[d] > st)
                st = s->b_stride[d];
            if (ext[d] > 1 && (best == nd || (ext[d] - 1) * (st ? st : 1) > reach)) {
                best = d;
                reach = (ext[d] - 1) * (st ? st : 1);
            }
        }
        if (best == nd)
            return tgl__fail(x->b, TGL_ERR_INTERNAL, "strided box of one element exceeds the limits");
        size_t keep = hi[best], mid = lo[best] + ext[best] / 2;
        hi[best] = mid;
        tgl_status st = run_box(x, lo, hi);
        hi[best] = keep;
        if (st)
            return st;
        keep = lo[best];
        lo[best] = mid;
        st = run_box(x, lo, hi);
        lo[best] = keep;
        return st;
    }
    size_t pad_a, pad_b = 0, pad_y;
    tgl_gl_binding bind[3];
    bind[0] = tgl_gl_window_aligned((tgl__view){x->a.buf, x->a.offset + box_base(lo, s->a_stride, nd) * F32},
                                    sa * F32, 0, x->align, &pad_a);
    bind[1] = x->op >= 0 ? tgl_gl_window_aligned((tgl__view){x->bb.buf, x->bb.offset + box_base(lo, s->b_stride, nd) * F32},
                                                 sb * F32, 0, x->align, &pad_b)
                         : bind[0];
    bind[2] = tgl_gl_window(x->b, (tgl__view){x->out.buf, x->out.offset + box_base(lo, x->y_stride, nd) * F32}, sy * F32,
                            1, &pad_y);
    if (x->tex)
        bind[0].texture_format = bind[1].texture_format = GL_R32F;
    size_t inner = ext[nd - 1], gx = tgl_gl_ceil_div(inner, l->workgroup_size);
    int rows = inner >= ROWS_MIN_INNER && gx <= l->wg_count[0] && n / inner <= l->wg_count[1];
    GLuint prog = x->prog[rows];
    tgl_gl_uniform_ui(x->b, prog, LOC_STRIDED_N, (GLuint)n);
    tgl_gl_uniform_ui(x->b, prog, LOC_STRIDED_START, 0);
    tgl_gl_uniform_ui(x->b, prog, LOC_STRIDED_A_OFF, (GLuint)(pad_a / F32));
    tgl_gl_uniform_ui(x->b, prog, LOC_STRIDED_B_OFF, (GLuint)(pad_b / F32));
    tgl_gl_uniform_ui(x->b, prog, LOC_STRIDED_Y_OFF, (GLuint)(pad_y / F32));
    tgl_gl_uniform_dims(x->b, prog, LOC_STRIDED_SHAPE, ext, nd);
    return rows ? tgl_gl_dispatch_grid(x->b, prog, bind, 3, (uint32_t)gx, (uint32_t)(n / inner), 1)
                : tgl_gl_dispatch(x->b, prog, bind, 3, (n + l->workgroup_size - 1) / l->workgroup_size);
}

static tgl_status strided_boxes(tgl_backend *b, int op, tgl__view a, tgl__view bb, tgl__view out, const tgl__strided *s)
{
    const tgl_gl_limits *l = &tgl_gl_of(b)->limits;
    boxes x = {.b = b, .op = op, .a = a, .bb = bb, .out = out, .s = s};
    x.max_span = tgl_gl_max_window_elems(l, F32);
    /* Textures where element-wise kernels read them so (llvmpipe), when a whole window fits. */
    x.tex = l->texel_inputs && l->texture_buffer_texels >= x.max_span + l->texture_align;
    x.align = tgl_gl_window_align(l, x.tex);
    size_t grid = (size_t)((uint64_t)l->wg_count[0] * l->wg_count[1] * l->workgroup_size);
    x.max_elems = grid < x.max_span ? grid : x.max_span;
    for (size_t d = s->ndim, st = 1; d-- > 0;) {
        x.y_stride[d] = st;
        st *= s->shape[d];
    }
    for (int rows = 0; rows < 2; rows++) {
        tgl_gl_plan plan = strided_plan(op, rows, x.tex, 1);
        tgl_status st = tgl_gl_plan_program(b, &plan, &x.prog[rows]);
        if (st)
            return st;
        tgl_gl_uniform_ui(b, x.prog[rows], LOC_STRIDED_NDIM, (GLuint)s->ndim);
        tgl_gl_uniform_dims(b, x.prog[rows], LOC_STRIDED_A_STRIDE, s->a_stride, s->ndim);
        tgl_gl_uniform_dims(b, x.prog[rows], LOC_STRIDED_Y_STRIDE, x.y_stride, s->ndim);
        if (op >= 0)
            tgl_gl_uniform_dims(b, x.prog[rows], LOC_STRIDED_B_STRIDE, s->b_stride, s->ndim);
    }
    size_t lo[TGL_MAX_DIMS] = {0}, hi[TGL_MAX_DIMS] = {0};
    for (size_t d = 0; d < s->ndim; d++)
        hi[d] = s->shape[d];
    return run_box(&x, lo, hi);
}

tgl_status tgl_gl_strided(tgl_backend *b, int op, tgl__view a, tgl__view bb, tgl__view out, const tgl__strided *s)
{
    const tgl_gl_limits *l = &tgl_gl_of(b)->limits;
    size_t max_elems = tgl_gl_max_window_elems(l, F32);
    if (s->n_out == 0)
        return TGL_OK;
    if (op < 0) { /* permutes that move the input's contiguous axis: tiles (gl_transpose.c) */
        int done;
        tgl_status st = tgl_gl_transpose(b, a, out, s, &done);
        if (st || done)
            return st;
    }
    /* (box indices are local to the box: outputs past 32-bit indices take boxes too) */
    if (s->n_a > max_elems || s->n_b > max_elems || s->n_out > (size_t)UINT32_MAX)
        return strided_boxes(b, op, a, bb, out, s);
    size_t grid = (size_t)((uint64_t)l->wg_count[0] * l->wg_count[1] * l->workgroup_size);
    size_t chunk = max_elems < grid ? max_elems : grid;
    size_t inner = s->shape[s->ndim - 1], gx = tgl_gl_ceil_div(inner, l->workgroup_size);
    int rows = inner >= ROWS_MIN_INNER && gx <= l->wg_count[0];
    if (rows) { /* whole rows per dispatch, at most one grid column of them */
        size_t per = chunk / inner < l->wg_count[1] ? chunk / inner : l->wg_count[1];
        chunk = per * inner;
    }
    /* Inputs through buffer textures where element-wise kernels read them so (llvmpipe). */
    int tex = l->texel_inputs && s->n_a <= l->texture_buffer_texels && s->n_b <= l->texture_buffer_texels;
    size_t align = tgl_gl_window_align(l, tex);
    size_t pad_a, pad_b = 0, pad_y;
    tgl_gl_binding bind[3];
    bind[0] = tgl_gl_window_aligned(a, s->n_a * F32, 0, align, &pad_a);
    /* COPY leaves binding 1 unused */
    bind[1] = op >= 0 ? tgl_gl_window_aligned(bb, s->n_b * F32, 0, align, &pad_b) : bind[0];
    /* Rows of whole vec4s take VEC, where a chunk's output window starts 16-byte aligned: a
     * row-bias add of 1024 x 1024 floats on llvmpipe (through textures) went from 5.7-7.1 to
     * 1.2-1.9 ms (docs/performance.md). */
    int vec = rows && inner % 4 == 0;
    /* ... and rows of whole pairs of vec4s at a 32-byte-aligned output store them as dvec4s
     * (common/wide_store.glsl): the same add at 4096 x 4096 20-31 -> 15-21 ms (docs/performance.md). */
    int wide = vec && tex && l->wide_stores && inner % 8 == 0;
    int run_a = vec_run(s->a_stride, s->ndim, pad_a), run_b = op >= 0 && vec_run(s->b_stride, s->ndim, pad_b);
    int vec_variant = VARIANT_ROWS | VARIANT_VEC | (run_a ? VEC_A_RUN : 0) | (run_b ? VEC_B_RUN : 0);
    GLuint prog[3] = {0, 0, 0}; /* rows (or flat), vec, wide */
    /* A vec variant's workgroup is cut down to its row's vec4s (or pairs) where the row has
     * fewer: llvmpipe runs a group's idle lanes through the whole kernel. */
    uint32_t wg[3] = {l->workgroup_size, l->workgroup_size, l->workgroup_size};
    for (int v = 1; v < 3; v++)
        while (wg[v] > 32 && wg[v] / 2 >= inner / (v == 2 ? 8 : 4))
            wg[v] /= 2;
    for (int v = 0; v <= vec + wide; v++) {
        int variant = v == 2 ? vec_variant | VEC_WIDE : v ? vec_variant : rows ? VARIANT_ROWS : VARIANT_FLAT;
        tgl_gl_plan plan = strided_plan(op, variant, tex, 0);
        plan.wg = wg[v];
        plan.groups = v ? tgl_gl_ceil_div(inner / (v == 2 ? 8 : 4), wg[v]) * (s->n_out / inner)
                        : tgl_gl_ceil_div(s->n_out, l->workgroup_size);
        tgl_status st = tgl_gl_plan_program(b, &plan, &prog[v]);
        if (st)
            return st;
        tgl_gl_uniform_ui(b, prog[v], LOC_STRIDED_NDIM, (GLuint)s->ndim);
        tgl_gl_uniform_ui(b, prog[v], LOC_STRIDED_A_OFF, (GLuint)(pad_a / F32));
        tgl_gl_uniform_dims(b, prog[v], LOC_STRIDED_SHAPE, s->shape, s->ndim);
        tgl_gl_uniform_dims(b, prog[v], LOC_STRIDED_A_STRIDE, s->a_stride, s->ndim);
        if (op >= 0) {
            tgl_gl_uniform_ui(b, prog[v], LOC_STRIDED_B_OFF, (GLuint)(pad_b / F32));
            tgl_gl_uniform_dims(b, prog[v], LOC_STRIDED_B_STRIDE, s->b_stride, s->ndim);
        }
        if (v) { /* the last axis as plain uniforms */
            tgl_gl_uniform_ui(b, prog[v], LOC_STRIDED_INNER, (GLuint)inner);
            tgl_gl_uniform_ui(b, prog[v], LOC_STRIDED_A_STEP, (GLuint)s->a_stride[s->ndim - 1]);
            tgl_gl_uniform_ui(b, prog[v], LOC_STRIDED_B_STEP, op >= 0 ? (GLuint)s->b_stride[s->ndim - 1] : 0);
        }
    }
    for (size_t start = 0; start < s->n_out; start += chunk) {
        size_t count = s->n_out - start < chunk ? s->n_out - start : chunk;
        bind[2] = tgl_gl_window(b, (tgl__view){out.buf, out.offset + start * F32}, count * F32, 1, &pad_y);
        int v = !vec || pad_y % 16 ? 0 : wide && pad_y % 32 == 0 ? 2 : 1;
        if (tex) {
            bind[0].texture_format = v && run_a ? GL_RGBA32F : GL_R32F;
            bind[1].texture_format = v && run_b ? GL_RGBA32F : GL_R32F;
        }
        tgl_gl_uniform_ui(b, prog[v], LOC_STRIDED_N, (GLuint)count);
        tgl_gl_uniform_ui(b, prog[v], LOC_STRIDED_START, (GLuint)(rows ? start / inner : start));
        tgl_gl_uniform_ui(b, prog[v], LOC_STRIDED_Y_OFF, (GLuint)(pad_y / F32));
        tgl_status st;
        if (v)
            st = tgl_gl_dispatch_grid(b, prog[v], bind, 3,
                                      (uint32_t)tgl_gl_ceil_div(inner / (v == 2 ? 8 : 4), wg[v]),
                                      (uint32_t)(count / inner), 1);
        else if (rows)
            st = tgl_gl_dispatch_grid(b, prog[0], bind, 3, (uint32_t)gx, (uint32_t)(count / inner), 1);
        else
            st = tgl_gl_dispatch(b, prog[0], bind, 3, (count + l->workgroup_size - 1) / l->workgroup_size);
        if (st)
            return st;
    }
    return TGL_OK;
}

void tgl_gl_shape_variants(void (*fn)(void *ctx, const char *kernel, const char *defines), void *ctx)
{
    tgl_gl_plan p;
    for (int variant = 0; variant < 8; variant++)
        for (int op = -1; op < TGL__BINARY_FLAT_KERNELS; op++) {
            p = strided_plan(op, variant & 1, (variant >> 1) & 1, variant >> 2);
            fn(ctx, p.kernel, p.defines);
        }
    for (int run = 0; run < 12; run++) /* VEC: rows, no boxes; textures then wide, or storage buffers */
        for (int op = -1; op < TGL__BINARY_FLAT_KERNELS; op++)
            if (op >= 0 || !(run & 2)) {
                p = strided_plan(op,
                                 VARIANT_ROWS | VARIANT_VEC | (run & 1 ? VEC_A_RUN : 0) | (run & 2 ? VEC_B_RUN : 0) |
                                     (run & 4 ? VEC_WIDE : 0),
                                 run < 8, 0);
                fn(ctx, p.kernel, p.defines);
            }
}

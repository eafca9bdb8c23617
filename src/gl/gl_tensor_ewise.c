/* GL driver for the element-wise descriptor ops (glsl/tensor/elementwise.comp): tgl_copy,
 * tgl_compare, tgl_where, tgl_unary_t, tgl_binary_t, tgl_clamp, tgl_fill_t, tgl_arange,
 * tgl_random, tgl_dropout, tgl_triu, tgl_tril, tgl_one_hot, tgl_masked_fill (and the flat ops' later unary and binary ops). One pure function routes a copy: nothing to do (in
 * place, no conversion), a buffer copy (one dtype, both sides dense), the strided gather of tgl_permute
 * (f32 into a dense f32 dst from non-negative strides: its transpose tiles and vec4 rows), or
 * the kernel, which the other ops always take. The kernel's operands are bound from their
 * lowest element; an index space whose windows pass the SSBO block limit is halved, axis by
 * axis, into boxes whose windows fit, and each box picks its variants (WORDS, LINEAR, VEC4)
 * itself. */
#include "gl_internal.h"

/* elementwise.comp's flags: the op, the dtypes (the inputs' but where's condition, and out's),
 * WORDS (a dense out of 1- or 2-byte elements, a word per invocation), LINEAR (every operand
 * dense: no coordinates), VEC4 (LINEAR with every operand on a multiple of four elements:
 * four per invocation, one access per operand) and, with VEC4, how the inputs are read (SSBO
 * loads, or buffer textures where the device profile says texel_inputs: llvmpipe). */
typedef struct tew_flags {
    uint32_t op, in, out, words, linear, vec4, read, line_quads;
} tew_flags;
static const char *const op_defines[TGL__TEW_COUNT] = {"COPY", "COMPARE", "WHERE", "UNARY", "BINARY", "CLAMP",
                                                          "FILL", "ARANGE", "MAP", /* MAP: gl_map.c's kernel */
                                                          "RANDOM", "DROPOUT", "TRIANGLE", "ONE_HOT", "MASKED_FILL",
                                                          "GATHER", "CHECK_INDEX"};
static const tgl_gl_def tew_defs[] = {
    TGL_GL_NAME(tew_flags, op, op_defines),
    TGL_GL_UINT(tew_flags, in, "IN_DTYPE"),
    TGL_GL_UINT(tew_flags, out, "OUT_DTYPE"),
    TGL_GL_FLAG(tew_flags, words, "WORDS"),
    TGL_GL_FLAG(tew_flags, linear, "LINEAR"),
    TGL_GL_FLAG(tew_flags, vec4, "VEC4"),
    TGL_GL_READ(tew_flags, read),
    TGL_GL_FLAG(tew_flags, line_quads, "LINE_QUADS"),
};
static const char *const op_fns[TGL__TEW_COUNT] = {"tgl_copy", "tgl_compare", "tgl_where", "tgl_unary_t",
                                                       "tgl_binary_t", "tgl_clamp", "tgl_fill_t",
                                                       "tgl_arange", "tgl_map_t", "tgl_random", "tgl_dropout",
                                                       "tgl_triu", /* or tgl_tril */
                                                       "tgl_one_hot", "tgl_masked_fill",
                                                       "tgl_gather", /* or tgl_index_select */
                                                       "tgl_gather"};
/* elementwise.comp's inputs: bindings 0..2 (out at 3) */
#define KERNEL_INPUTS 3

/* Whether op reads its inputs (fill, arange and random bind out as input 0, never read). */
static int reads_inputs(tgl__tew_op op)
{
    return op != TGL__TEW_FILL && op != TGL__TEW_ARANGE && op != TGL__TEW_RANDOM;
}

/* The variant: vec4 (which implies linear and no words; its inputs read as `read`; a gather's
 * quads each inside one line along the last dim where line_quads), else words and linear as
 * given, inputs from the SSBO. */
static tgl_gl_plan tew_plan(tgl__tew_op op, tgl_dtype in, tgl_dtype out, int words, int linear, int vec4,
                            tgl_gl_read read, int line_quads)
{
    if (!vec4 || !reads_inputs(op))
        read = TGL_GL_READ_SSBO;
    tew_flags f = {(uint32_t)op, (uint32_t)in, (uint32_t)out, (uint32_t)(words && !vec4), (uint32_t)(linear || vec4),
                   (uint32_t)vec4, (uint32_t)read, (uint32_t)(vec4 && line_quads && op == TGL__TEW_GATHER)};
    tgl_gl_plan p = {.op = op_fns[op]};
    tgl_gl_plan_kernel(&p, "tensor/elementwise", TGL_GL_DEFS(tew_defs), &f);
    p.why = vec4 && read ? "every operand dense and on a multiple of four elements: four per invocation, inputs as "
                           "buffer textures (texel_inputs)"
            : vec4          ? "every operand dense and on a multiple of four elements: four per invocation, one access each"
            : words && linear ? "every operand dense, out of 1- or 2-byte elements: a whole word per invocation"
            : words         ? "a dense out of 1- or 2-byte elements: a whole word per invocation"
            : linear        ? "every operand dense: an invocation per element, no coordinates"
            : tgl_dtype_size(out) < 4 ? "a strided out of 1- or 2-byte elements: atomic stores into its words"
                                      : "an invocation per element";
    return p;
}

/* The dtype the kernel's IN_DTYPE names: where's a and bb, masked_fill's in (input 0 the bool
 * mask), gather's in (input 0 the i32 index). */
static tgl_dtype in_dtype(const tgl__tew *e)
{
    return e->op == TGL__TEW_WHERE || e->op == TGL__TEW_MASKED_FILL || e->op == TGL__TEW_GATHER ? e->in[1].dtype
                                                                                                  : e->in[0].dtype;
}

/* Row-major dense over the dims of more than one index, with positive strides. */
static int dense(size_t ndim, const size_t *shape, const int64_t *strides)
{
    int64_t want = 1;
    for (size_t d = ndim; d-- > 0;) {
        if (shape[d] == 1)
            continue;
        if (strides[d] != want)
            return 0;
        want *= (int64_t)shape[d];
    }
    return 1;
}

typedef enum { ROUTE_NONE, ROUTE_BUFFER, ROUTE_STRIDED, ROUTE_KERNEL } tew_route;

static tew_route route(const tgl__tew *e)
{
    if (e->op != TGL__TEW_COPY)
        return ROUTE_KERNEL;
    const tgl__tensor_view *dst = &e->out, *src = &e->in[0];
    int same = dst->dtype == src->dtype && dst->dtype != TGL_DTYPE_BOOL; /* bits as they are */
    int dst_dense = dense(e->ndim, e->shape, dst->strides);
    if (same && e->in_place)
        return ROUTE_NONE; /* nothing moves */
    if (same && dst_dense && dense(e->ndim, e->shape, src->strides))
        return ROUTE_BUFFER;
    if (dst->dtype == TGL_DTYPE_F32 && src->dtype == TGL_DTYPE_F32 && dst_dense && e->ndim > 0) {
        int forward = 1;
        for (size_t d = 0; d < e->ndim; d++)
            forward &= src->strides[d] >= 0;
        if (forward)
            return ROUTE_STRIDED;
    }
    return ROUTE_KERNEL;
}

/* One box of the index space: its extents and each operand's window. */
typedef struct box {
    size_t shape[TGL_MAX_DIMS], index0; /* index0: the first index along dim 0 (arange's values) */
    size_t lo[TGL_MAX_DIMS];            /* the first index along each dim (random's counters) */
    uint64_t first;                     /* the whole index of its first element */
    int one_run;                        /* its elements are one run of the whole index space */
    tgl__tensor_view out, in[TGL__TEW_MAX_INPUTS];
} box;

/* The operand's window over a box starting at index `lo` with extents `ext` (from the whole
 * operand v over its shape). */
tgl__tensor_view tgl_gl_sub_view(const tgl__tensor_view *v, size_t ndim, const size_t *lo, const size_t *ext)
{
    tgl__tensor_view s = *v;
    int64_t origin = (int64_t)v->base, back = 0, ahead = 0;
    size_t es = tgl_dtype_size(v->dtype);
    for (size_t d = 0; d < ndim; d++) {
        origin += (int64_t)lo[d] * v->strides[d];
        int64_t reach = v->strides[d] * (int64_t)(ext[d] - 1);
        *(reach < 0 ? &back : &ahead) += reach < 0 ? -reach : reach;
    }
    s.view.offset = v->view.offset + (size_t)(origin - back) * es;
    s.base = (size_t)back;
    s.span = (size_t)(back + ahead + 1);
    return s;
}

typedef struct tew_run {
    tgl_backend *b;
    const tgl__tew *e;
    GLuint prog[2][2]; /* by WORDS and LINEAR, decided per box (a box cut across a dense
                          operand's rows is no longer dense); 0 until a box needs it */
    GLuint prog_vec4[2][TGL_GL_READS]; /* the VEC4 variant by LINE_QUADS and its inputs' read, 0
                                          until a box takes it */
    size_t max_bytes;  /* a window's limit */
    unsigned backward; /* the VEC4 variant's direction (glsl/common/sweep.glsl) */
    tgl_gl_map_t *map; /* tgl_map_t: its own kernel per box (gl_map.c) */
    size_t chunk_lo, chunk_len; /* gather: the indices along the axis that in's window holds */
    int whole_axis;             /* gather: ... which are all of them */
    tgl_gl_binding status;      /* gather: the check's status word (binding 2) */
} tew_run;

static size_t window_bytes(const tgl__tensor_view *v)
{
    return v->span * tgl_dtype_size(v->dtype);
}

static const GLint base_loc[KERNEL_INPUTS] = {LOC_TEW_BASE0, LOC_TEW_BASE1, LOC_TEW_BASE2};
static const GLint stride_loc[KERNEL_INPUTS] = {LOC_TEW_STRIDE0, LOC_TEW_STRIDE1, LOC_TEW_STRIDE2};

/* Two's complement strides: the kernel's sums wrap to the offset. */
static void set_strides(tgl_backend *b, GLuint prog, GLint loc, const int64_t *strides, size_t ndim)
{
    GLuint v[TGL_MAX_DIMS] = {0};
    tgl_gl_stride_bits(v, strides, ndim);
    if (ndim)
        tgl_gl_uniform_uiv(b, prog, loc, (GLsizei)ndim, v);
}

/* Whether a window's element (0, ..., 0), pad bytes into its binding plus base elements, and the
 * binding's own offset lie on multiples of four elements: its accesses of four elements are then
 * aligned (the VEC4 variant). */
static int quad_aligned(const tgl__tensor_view *v, size_t pad)
{
    size_t es = tgl_dtype_size(v->dtype), quad = 4 * es;
    return (v->view.offset - pad) % quad == 0 && (pad + v->base * es) % quad == 0;
}

/* Sets the program's uniforms of the box (all but the range of the dispatch). */
static void box_uniforms(tew_run *x, GLuint prog, const box *bx, const GLuint *base, GLuint out_base)
{
    tgl_backend *b = x->b;
    const tgl__tew *e = x->e;
    size_t ndim = e->ndim;
    for (size_t k = 0; k < KERNEL_INPUTS; k++) {
        tgl_gl_uniform_ui(b, prog, base_loc[k], base[k]);
        if (k < e->nin)
            set_strides(b, prog, stride_loc[k], bx->in[k].strides, ndim);
    }
    tgl_gl_uniform_ui(b, prog, LOC_TEW_OUT_BASE, out_base);
    set_strides(b, prog, LOC_TEW_OUT_STRIDE, bx->out.strides, ndim);
    tgl_gl_uniform_ui(b, prog, LOC_TEW_NDIM, (GLuint)ndim);
    tgl_gl_uniform_ui(b, prog, LOC_TEW_OP, (GLuint)e->sub);
    tgl_gl_uniform_ui(b, prog, LOC_TEW_VALUE, (GLuint)e->value);
    tgl_gl_uniform_ui(b, prog, LOC_TEW_STEP, (GLuint)e->step);
    tgl_gl_uniform_ui(b, prog, LOC_TEW_INDEX0, (GLuint)bx->index0);
    tgl_gl_uniform_dims(b, prog, LOC_TEW_SHAPE, bx->shape, ndim);
    tgl_gl_uniform_divisors(b, prog, LOC_TEW_DIV_M, LOC_TEW_DIV_S, bx->shape, ndim);
    if (e->op == TGL__TEW_TRIANGLE || e->op == TGL__TEW_ONE_HOT || e->op == TGL__TEW_RANDOM ||
        e->op == TGL__TEW_DROPOUT || e->op == TGL__TEW_CHECK_INDEX)
        tgl_gl_uniform_dims(b, prog, LOC_TEW_ORIGIN, bx->lo, ndim);
    if (e->op == TGL__TEW_CHECK_INDEX)
        tgl_gl_uniform_dims(b, prog, LOC_TEW_WHOLE, e->shape, ndim);
    if (e->op == TGL__TEW_GATHER) {
        tgl_gl_uniform_ui(b, prog, LOC_TEW_AXIS_STRIDE, (GLuint)(uint64_t)e->axis_stride); /* two's complement */
        tgl_gl_uniform_ui(b, prog, LOC_TEW_CHUNK_LO, (GLuint)x->chunk_lo);
        tgl_gl_uniform_ui(b, prog, LOC_TEW_CHUNK_LEN, (GLuint)x->chunk_len);
    }
    if (e->op == TGL__TEW_RANDOM || e->op == TGL__TEW_DROPOUT) {
        const GLuint seed[2] = {(GLuint)e->seed, (GLuint)(e->seed >> 32)};
        const GLuint offset[2] = {(GLuint)e->offset, (GLuint)(e->offset >> 32)};
        const GLuint first_index[2] = {(GLuint)bx->first, (GLuint)(bx->first >> 32)};
        tgl_gl_uniform_ui(b, prog, LOC_TEW_EXTRA, (GLuint)e->extra);
        tgl_gl_uniform_uiv(b, prog, LOC_TEW_SEED, 2, seed);
        tgl_gl_uniform_uiv(b, prog, LOC_TEW_OFFSET, 2, offset);
        tgl_gl_uniform_dims(b, prog, LOC_TEW_WHOLE, e->shape, ndim);
        tgl_gl_uniform_ui(b, prog, LOC_TEW_CONSECUTIVE, (GLuint)bx->one_run);
        tgl_gl_uniform_uiv(b, prog, LOC_TEW_FIRST_INDEX, 2, first_index);
    }
}

/* The variant's program; groups only for its log line. */
static tgl_status plan_program(tew_run *x, GLuint *prog, int words, int linear, int vec4, tgl_gl_read read,
                               int line_quads, uint64_t groups)
{
    if (*prog)
        return TGL_OK;
    tgl_gl_plan plan = tew_plan(x->e->op, in_dtype(x->e), x->e->out.dtype, words, linear, vec4, read, line_quads);
    plan.items = 1; /* an element, a word or (VEC4) four elements per invocation */
    plan.groups = groups;
    return tgl_gl_plan_program(x->b, &plan, prog);
}

/* The VEC4 variant's inputs as buffer textures, where the device reads element-wise inputs so
 * (texel_inputs: llvmpipe) and each window fits the texel and block limits when aligned for a
 * texture: bind[] and base[] are set for those windows and the read returned; else they are
 * left as they are (SSBO windows) and TGL_GL_READ_SSBO returned. A quad of 4-byte elements is
 * one RGBA32UI texel, anything else (gather's in too) R32UI words. */
static tgl_gl_read texture_inputs(tew_run *x, const box *bx, tgl_gl_binding *bind, GLuint *base)
{
    const tgl__tew *e = x->e;
    const tgl_gl_limits *l = &tgl_gl_of(x->b)->limits;
    if (!l->texel_inputs || !reads_inputs(e->op) || e->nin > TGL_GL_MAX_TEXTURE_BINDINGS)
        return TGL_GL_READ_SSBO;
    tgl_gl_binding t[KERNEL_INPUTS];
    GLuint tb[KERNEL_INPUTS];
    GLenum format[KERNEL_INPUTS];
    for (size_t k = 0; k < e->nin; k++) {
        const tgl__tensor_view *v = &bx->in[k];
        size_t pad, es = tgl_dtype_size(v->dtype);
        int quad = e->op != TGL__TEW_GATHER || k == 0;
        format[k] = quad && es == 4 ? GL_RGBA32UI : GL_R32UI;
        if (!tgl_gl_texture_window(l, v->view, window_bytes(v), format[k], &t[k], &pad) || (quad && !quad_aligned(v, pad)))
            return TGL_GL_READ_SSBO;
        tb[k] = (GLuint)(pad / es + v->base);
    }
    tgl_gl_read read = tgl_gl_input_read(l, 1);
    for (size_t k = 0; k < e->nin; k++) {
        bind[k] = t[k];
        base[k] = tb[k];
        tgl_gl_bind_read(&bind[k], read, format[k]);
    }
    return read;
}

static tgl_status dispatch_piece(tew_run *x, const box *bx, size_t n)
{
    tgl_backend *b = x->b;
    const tgl__tew *e = x->e;
    const tgl_gl_limits *l = &tgl_gl_of(b)->limits;
    size_t ndim = e->ndim, os = tgl_dtype_size(bx->out.dtype), pad;
    int out_dense = dense(ndim, bx->shape, bx->out.strides);
    /* check_index's out is the status word, never walked; gather's in (input 1) is walked by
     * coordinates in every variant */
    int linear = out_dense || e->op == TGL__TEW_CHECK_INDEX;
    size_t walked = e->op == TGL__TEW_GATHER ? 1 : e->nin;
    for (size_t k = 0; k < walked; k++)
        linear &= dense(ndim, bx->shape, bx->in[k].strides);
    int words = os < 4 && out_dense, vec4 = linear;
    if (e->op == TGL__TEW_RANDOM || e->op == TGL__TEW_DROPOUT) /* VEC4: four elements, one block */
        vec4 &= bx->one_run && bx->first % 4 == 0;
    if (e->op == TGL__TEW_GATHER) /* VEC4 stores four: every index inside the window */
        vec4 &= x->whole_axis;
    if (e->op == TGL__TEW_CHECK_INDEX) /* VEC4 takes a position as origin + index: one line */
        vec4 &= ndim == 1;
    if (x->map)
        return tgl_gl_map_t_box(b, x->map, &bx->out, bx->in, bx->shape, n, words, linear);
    /* bindings 0..nin-1 the inputs, 3 the output; unused ones repeat input 0 (never read) */
    tgl_gl_binding bind[4];
    GLuint base[KERNEL_INPUTS];
    for (size_t k = 0; k < KERNEL_INPUTS; k++) {
        size_t j = k < e->nin ? k : 0;
        bind[k] = tgl_gl_window(b, bx->in[j].view, window_bytes(&bx->in[j]), 0, &pad);
        base[k] = (GLuint)(pad / tgl_dtype_size(bx->in[j].dtype) + bx->in[j].base);
        vec4 &= j >= walked || quad_aligned(&bx->in[j], pad);
    }
    if (e->op == TGL__TEW_GATHER) /* in place of a third input */
        bind[2] = x->status;
    bind[3] = tgl_gl_window(b, bx->out.view, window_bytes(&bx->out), 1, &pad);
    GLuint out_base = (GLuint)(pad / os + bx->out.base);
    vec4 &= quad_aligned(&bx->out, pad);
    /* items per dispatch: the grid's invocations, a multiple of the workgroup */
    size_t grid = (size_t)((uint64_t)l->wg_count[0] * l->wg_count[1] * l->workgroup_size);
    size_t done = vec4 ? n / 4 * 4 : 0; /* the elements the VEC4 variant takes */
    tgl_status st = TGL_OK;
    if (done) {
        tgl_gl_binding vbind[4] = {bind[0], bind[1], bind[2], bind[3]};
        GLuint vbase[KERNEL_INPUTS] = {base[0], base[1], base[2]};
        tgl_gl_read read = texture_inputs(x, bx, vbind, vbase);
        /* a gather's quads, which start on multiples of four in the box, each lie inside one
         * line along the last dim where its extent is a multiple of four */
        int line_quads = e->op == TGL__TEW_GATHER && ndim > 0 && bx->shape[ndim - 1] % 4 == 0;
        GLuint *prog = &x->prog_vec4[line_quads][read];
        st = plan_program(x, prog, 0, 1, 1, read, line_quads, tgl_gl_ceil_div(done / 4, l->workgroup_size));
        if (st)
            return st;
        box_uniforms(x, *prog, bx, vbase, out_base);
        tgl_gl_uniform_ui(b, *prog, LOC_SWEEP, x->backward);
        for (size_t q = 0; !st && q < done / 4; q += grid) {
            size_t count = done / 4 - q < grid ? done / 4 - q : grid;
            tgl_gl_uniform_ui(b, *prog, LOC_TEW_N, (GLuint)count);
            tgl_gl_uniform_ui(b, *prog, LOC_TEW_START, (GLuint)(4 * q));
            st = tgl_gl_dispatch(b, *prog, vbind, 4, tgl_gl_ceil_div(count, l->workgroup_size));
        }
    }
    if (st || done == n)
        return st;
    GLuint *prog = &x->prog[words][linear];
    st = plan_program(x, prog, words, linear, 0, TGL_GL_READ_SSBO, 0, tgl_gl_ceil_div(n - done, l->workgroup_size));
    if (st)
        return st;
    box_uniforms(x, *prog, bx, base, out_base);
    if (words) { /* done is a multiple of four elements from a word boundary: whole words */
        size_t per = 4 / os, first = (out_base + done) / per, end = (out_base + n + per - 1) / per;
        tgl_gl_uniform_ui(b, *prog, LOC_TEW_N, (GLuint)n);
        for (size_t w = first; !st && w < end; w += grid) {
            size_t count = end - w < grid ? end - w : grid;
            tgl_gl_uniform_ui(b, *prog, LOC_TEW_START, (GLuint)w);
            st = tgl_gl_dispatch(b, *prog, bind, 4, tgl_gl_ceil_div(count, l->workgroup_size));
        }
        return st;
    }
    for (size_t i = done; !st && i < n; i += grid) {
        size_t count = n - i < grid ? n - i : grid;
        tgl_gl_uniform_ui(b, *prog, LOC_TEW_N, (GLuint)count);
        tgl_gl_uniform_ui(b, *prog, LOC_TEW_START, (GLuint)i);
        st = tgl_gl_dispatch(b, *prog, bind, 4, tgl_gl_ceil_div(count, l->workgroup_size));
    }
    return st;
}

/* Gather's in over a box (w, its stride along the axis 0) widened to the indices [c0, c0 + len)
 * along the axis (stride s): its base is then the offset of the box's first element at index 0
 * along the axis, from which the kernel steps index * s. */
static tgl__tensor_view axis_window(const tgl__tensor_view *w, int64_t s, size_t c0, size_t len)
{
    tgl__tensor_view r = *w;
    int64_t first = (int64_t)c0 * s, last = (int64_t)(c0 + len - 1) * s, base = (int64_t)w->base;
    int64_t lo = -base + (first < last ? first : last), hi = (int64_t)w->span - 1 - base + (first < last ? last : first);
    r.view.offset = (size_t)((int64_t)w->view.offset + (lo + base) * (int64_t)tgl_dtype_size(w->dtype));
    r.base = (size_t)-lo;
    r.span = (size_t)(hi - lo + 1);
    return r;
}

/* A box whose windows fit: gather runs it once per run of indices along the axis whose window
 * of in fits (each run's pass writes the elements whose index falls in it), the others once. */
static tgl_status dispatch_box(tew_run *x, const box *bx, size_t n)
{
    const tgl__tew *e = x->e;
    if (e->op != TGL__TEW_GATHER)
        return dispatch_piece(x, bx, n);
    /* the indices, checked, lie below the extent and below 2^31 (an in of stride 0 along the
     * axis may be longer, and the kernel's counts are 32-bit) */
    size_t extent = e->axis_len < (size_t)INT32_MAX + 1 ? e->axis_len : (size_t)INT32_MAX + 1;
    size_t most = x->max_bytes / tgl_dtype_size(e->in[1].dtype);
    uint64_t step = e->axis_stride < 0 ? 0 - (uint64_t)e->axis_stride : (uint64_t)e->axis_stride;
    size_t len = step ? (size_t)((most - bx->in[1].span) / step + 1) : extent; /* the box's window fits */
    tgl_status st = TGL_OK;
    for (size_t c0 = 0; !st && c0 < extent; c0 += len) {
        box piece = *bx;
        x->chunk_lo = c0;
        x->chunk_len = extent - c0 < len ? extent - c0 : len;
        x->whole_axis = c0 == 0 && x->chunk_len == extent;
        piece.in[1] = axis_window(&bx->in[1], e->axis_stride, c0, x->chunk_len);
        st = dispatch_piece(x, &piece, n);
    }
    return st;
}

/* Runs the box [lo, lo + ext), halving it along the axis that spreads it furthest while a
 * window or its index count is past the limits. */
static tgl_status run_box(tew_run *x, size_t *lo, size_t *ext)
{
    const tgl__tew *e = x->e;
    box bx = {.shape = {0}, .index0 = e->ndim ? lo[0] : 0, .one_run = 1};
    size_t n = 1;
    int inside = 0; /* one run: every dim inside the outermost of more than one index is whole */
    for (size_t d = 0; d < e->ndim; d++) {
        n *= bx.shape[d] = ext[d];
        bx.lo[d] = lo[d];
        bx.first = bx.first * e->shape[d] + lo[d];
        if (inside && (lo[d] != 0 || ext[d] != e->shape[d]))
            bx.one_run = 0;
        inside |= ext[d] > 1;
    }
    bx.out = tgl_gl_sub_view(&e->out, e->ndim, lo, ext);
    int fits = window_bytes(&bx.out) <= x->max_bytes && n <= UINT32_MAX;
    for (size_t k = 0; k < e->nin; k++) {
        bx.in[k] = tgl_gl_sub_view(&e->in[k], e->ndim, lo, ext);
        fits &= window_bytes(&bx.in[k]) <= x->max_bytes;
    }
    if (fits)
        return dispatch_box(x, &bx, n);
    size_t best = e->ndim;
    uint64_t reach = 0;
    for (size_t d = 0; d < e->ndim; d++) {
        uint64_t widest = (uint64_t)(e->out.strides[d] < 0 ? -e->out.strides[d] : e->out.strides[d]);
        for (size_t k = 0; k < e->nin; k++) {
            uint64_t s = (uint64_t)(e->in[k].strides[d] < 0 ? -e->in[k].strides[d] : e->in[k].strides[d]);
            widest = s > widest ? s : widest;
        }
        uint64_t r = (ext[d] - 1) * (widest | 1u);
        if (ext[d] > 1 && (best == e->ndim || r > reach)) {
            best = d;
            reach = r;
        }
    }
    if (best == e->ndim) /* one element always fits */
        return tgl__fail(x->b, TGL_ERR_INTERNAL, "%s: a box of one element exceeds the window limit", op_fns[e->op]);
    size_t keep_lo = lo[best], keep_ext = ext[best], half = keep_ext / 2;
    ext[best] = half;
    tgl_status st = run_box(x, lo, ext);
    lo[best] = keep_lo + half;
    ext[best] = keep_ext - half;
    if (!st)
        st = run_box(x, lo, ext);
    lo[best] = keep_lo;
    ext[best] = keep_ext;
    return st;
}

/* e; gather reads the status word at `status`. */
static tgl_status run_tew(tgl_backend *b, const tgl__tew *e, const tgl_gl_binding *status)
{
    const tgl_gl_limits *l = &tgl_gl_of(b)->limits;
    switch (route(e)) {
    case ROUTE_NONE: return TGL_OK;
    case ROUTE_BUFFER: return tgl_gl_copy(b, e->out.view, e->in[0].view, e->n * tgl_dtype_size(e->out.dtype));
    case ROUTE_STRIDED: {
        tgl__strided s = {.ndim = e->ndim, .n_out = e->n, .n_a = e->in[0].span};
        for (size_t d = 0; d < e->ndim; d++) {
            s.shape[d] = e->shape[d];
            s.a_stride[d] = (size_t)e->in[0].strides[d];
        }
        return tgl_gl_strided(b, -1, e->in[0].view, (tgl__view){0}, e->out.view, &s);
    }
    default: break;
    }
    /* the kernel takes a dim's extent in 32 bits for random's counters, 31 for coordinates */
    size_t most = e->op == TGL__TEW_TRIANGLE || e->op == TGL__TEW_ONE_HOT ? (size_t)INT32_MAX : (size_t)UINT32_MAX;
    if (e->op == TGL__TEW_CHECK_INDEX && e->n >= UINT32_MAX) /* positions in 32 bits, one for none */
        return tgl__fail(b, TGL_ERR_UNSUPPORTED, "%s: %zu indices, past 2^32 - 2", op_fns[e->op], e->n);
    for (size_t d = 0; e->op >= TGL__TEW_RANDOM && e->op != TGL__TEW_GATHER && d < e->ndim; d++)
        if (e->shape[d] > most)
            return tgl__fail(b, TGL_ERR_UNSUPPORTED, "%s: dim %zu has %zu indices, past %zu",
                             e->op == TGL__TEW_TRIANGLE && !e->sub ? "tgl_tril" : op_fns[e->op], d, e->shape[d], most);
    /* the bytes it streams: each operand's elements once */
    uint64_t bytes = (uint64_t)e->n * tgl_dtype_size(e->out.dtype);
    for (size_t k = 0; k < e->nin; k++)
        bytes += (uint64_t)e->n * tgl_dtype_size(e->in[k].dtype);
    tew_run x = {.b = b,
                 .e = e,
                 .status = status ? *status : (tgl_gl_binding){0},
                 .max_bytes = tgl_gl_max_window_elems(l, 4) * 4,
                 .backward = tgl_gl_sweep_direction(tgl_gl_of(b), bytes)};
    size_t lo[TGL_MAX_DIMS] = {0}, ext[TGL_MAX_DIMS] = {0};
    for (size_t d = 0; d < e->ndim; d++)
        ext[d] = e->shape[d];
    tgl_gl_map_t map;
    if (e->op == TGL__TEW_MAP) {
        tgl_status st = tgl_gl_map_t_begin(b, e, &map);
        if (st)
            return st;
        x.map = &map;
    }
    tgl_status st = run_box(&x, lo, ext);
    if (x.map)
        tgl_gl_map_t_end(&map);
    if (!st)
        tgl_gl_sweep_done(tgl_gl_of(b), bytes);
    return st;
}

tgl_status tgl_gl_tensor_ewise(tgl_backend *b, const tgl__tew *e)
{
    if (e->op == TGL__TEW_GATHER) /* (vtable->gather runs it, after its check) */
        return tgl__fail(b, TGL_ERR_INTERNAL, "tgl_gather: the gather pass without its check");
    return run_tew(b, e, NULL);
}

/* Status slots: each on its own SSBO-aligned 16 bytes, as many as one fill resets. */
#define STATUS_SLOTS 64u

tgl_status tgl_gl_status_slot(tgl_backend *b, tgl_gl_binding *slot)
{
    tgl_gl *gl = tgl_gl_of(b);
    size_t stride = gl->limits.ssbo_align > 16 ? (size_t)gl->limits.ssbo_align : 16;
    if (!gl->status || gl->status_next >= STATUS_SLOTS) {
        size_t words = STATUS_SLOTS * stride / 4;
        tgl_status st = tgl_gl_grow(b, &gl->status, STATUS_SLOTS * stride, "the index checks' status words");
        if (st)
            return st;
        /* a dispatch, where an upload would make GPUs wait for the device to go idle
         * (gl_buffers.c, upload_waits) */
        const tgl__tensor_view all = {.view = {gl->status, 0}, .dtype = TGL_DTYPE_I32, .span = words, .strides = {1}};
        tgl__tew fill = {.op = TGL__TEW_FILL, .value = 0xFFFFFFFFu, .ndim = 1, .n = words, .nin = 1,
                         .shape = {words}, .out = all, .in = {all}};
        if ((st = run_tew(b, &fill, NULL)))
            return st;
        gl->status_next = 0;
    }
    *slot = (tgl_gl_binding){.buf = gl->status, .offset = gl->status_next++ * stride, .bytes = 16};
    return TGL_OK;
}

/* Queues the index check into a fresh status slot (*slot), lowered to each bad index's
 * position (atomicMin), so the first is left. */
static tgl_status queue_check(tgl_backend *b, const tgl__tew *check, tgl_gl_binding *slot)
{
    tgl_status st = tgl_gl_status_slot(b, slot);
    if (st)
        return st;
    tgl__tew pass = *check;
    /* every index at the one word: strides 0 */
    pass.out = (tgl__tensor_view){.view = {slot->buf, slot->offset}, .dtype = TGL_DTYPE_I32, .span = 1};
    if (pass.ndim > 1 && dense(pass.ndim, pass.shape, pass.in[0].strides)) {
        /* a dense index is checked as one line: an index's row-major position is then its
         * element's own, which the VEC4 variant takes as the box's origin plus its index
         * instead of rebuilding it from coordinates, work llvmpipe does for every invocation
         * under a mask (both together, 16M: the check 20 -> 9-13 ms) */
        pass.ndim = 1;
        pass.shape[0] = pass.n;
        pass.in[0].strides[0] = 1;
    }
    return run_tew(b, &pass, NULL);
}

/* Reads the status word (a wait) into *bad_pos, and the bad index itself into *bad_value. */
static tgl_status read_check(tgl_backend *b, const tgl__tew *check, const tgl_gl_binding *slot, uint64_t *bad_pos,
                             int32_t *bad_value)
{
    uint32_t first = 0;
    tgl_status st = tgl_gl_download(b, &first, (tgl__view){slot->buf, slot->offset}, sizeof first);
    *bad_pos = first == 0xFFFFFFFFu ? UINT64_MAX : first;
    if (st || first == 0xFFFFFFFFu)
        return st;
    /* the bad index itself, from its coordinates */
    const tgl__tensor_view *v = &check->in[0];
    int64_t at = (int64_t)v->base;
    uint64_t rest = first;
    for (size_t d = check->ndim; d-- > 0;) {
        at += (int64_t)(rest % check->shape[d]) * v->strides[d];
        rest /= check->shape[d];
    }
    return tgl_gl_download(b, bad_value, (tgl__view){v->view.buf, v->view.offset + (size_t)at * 4}, 4);
}

/* The gather is queued right behind the check, reading the status word itself, so the host
 * waits once, for both: on an H200 a wait between them cost 50 us a call. */
tgl_status tgl_gl_gather(tgl_backend *b, const tgl__tew *check, const tgl__tew *e, uint64_t *bad_pos,
                         int32_t *bad_value)
{
    tgl_gl_binding slot;
    tgl_status st = queue_check(b, check, &slot);
    if (st || (st = run_tew(b, e, &slot)))
        return st;
    return read_check(b, check, &slot, bad_pos, bad_value);
}

tgl_status tgl_gl_check_index(tgl_backend *b, const tgl__tew *check, uint64_t *bad_pos, int32_t *bad_value)
{
    tgl_gl_binding slot;
    tgl_status st = queue_check(b, check, &slot);
    return st ? st : read_check(b, check, &slot, bad_pos, bad_value);
}

void tgl_gl_run_box(size_t ndim, const size_t *shape, size_t i0, size_t i1, size_t *lo, size_t *ext)
{
    size_t first[TGL_MAX_DIMS] = {0}, last[TGL_MAX_DIMS] = {0};
    for (size_t d = ndim, a = i0, z = i1 - 1; d-- > 0; a /= shape[d], z /= shape[d]) {
        first[d] = a % shape[d];
        last[d] = z % shape[d];
    }
    /* the dims outside the first that changes fixed at i0's index, that one from i0's to the
     * last's, the dims inside it whole */
    size_t split = 0;
    while (split < ndim && first[split] == last[split])
        split++;
    for (size_t d = 0; d < ndim; d++) {
        lo[d] = d <= split ? first[d] : 0;
        ext[d] = d < split ? 1 : d == split ? last[d] - first[d] + 1 : shape[d];
    }
}

void tgl_gl_tensor_ewise_variants(void (*fn)(void *ctx, const char *kernel, const char *defines), void *ctx)
{
    static const tgl_dtype data[] = {TGL_DTYPE_F32, TGL_DTYPE_F16, TGL_DTYPE_BF16, TGL_DTYPE_I32, TGL_DTYPE_BOOL};
    const size_t nd = sizeof data / sizeof *data;
    for (int op = 0; op < TGL__TEW_COUNT; op++) /* but map, whose kernel is gl_map.c's */
        for (size_t i = 0; i < nd; i++)
            for (size_t o = 0; o < nd; o++) {
                /* copy: any pair; compare: bool out; unary: also a float into bool (the tests);
                 * clamp: floats and i32; the others: out of the inputs' dtype */
                int float_in = data[i] != TGL_DTYPE_I32 && data[i] != TGL_DTYPE_BOOL;
                int tests = op == TGL__TEW_UNARY && float_in && data[o] == TGL_DTYPE_BOOL;
                if (op == TGL__TEW_ONE_HOT) { /* i32 indices into any out */
                    if (data[i] != TGL_DTYPE_I32)
                        continue;
                } else if (op == TGL__TEW_CHECK_INDEX) { /* i32 indices into the i32 status word */
                    if (data[i] != TGL_DTYPE_I32 || data[o] != TGL_DTYPE_I32)
                        continue;
                } else if (op == TGL__TEW_MAP || (op == TGL__TEW_DROPOUT && !float_in) ||
                    (op == TGL__TEW_COMPARE && data[o] != TGL_DTYPE_BOOL) ||
                    ((op == TGL__TEW_CLAMP || op == TGL__TEW_ARANGE) && data[i] == TGL_DTYPE_BOOL) ||
                    (op != TGL__TEW_COPY && op != TGL__TEW_COMPARE && o != i && !tests))
                    continue;
                for (int words = 0; words < (tgl_dtype_size(data[o]) < 4 ? 2 : 1); words++)
                    for (int linear = 0; linear < 2; linear++)
                        tgl_gl_list_plan(fn, ctx, tew_plan((tgl__tew_op)op, data[i], data[o], words, linear, 0,
                                                           TGL_GL_READ_SSBO, 0));
                for (int read = 0; read < (reads_inputs((tgl__tew_op)op) ? TGL_GL_READS : 1); read++)
                    for (int lq = 0; lq < (op == TGL__TEW_GATHER ? 2 : 1); lq++)
                        tgl_gl_list_plan(fn, ctx,
                                         tew_plan((tgl__tew_op)op, data[i], data[o], 0, 1, 1, (tgl_gl_read)read, lq));
            }
}

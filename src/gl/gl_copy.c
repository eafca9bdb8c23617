/* GL driver for tgl_copy (glsl/tensor/copy.comp). One pure function routes a copy: nothing to
 * do (in place, no conversion), a buffer copy (one dtype, both sides dense), the strided gather
 * of tgl_permute (f32 to a dense f32 dst from non-negative strides: its transpose tiles and vec4
 * rows), or copy.comp. copy.comp's operands are bound from their lowest element; an index
 * space whose windows pass the SSBO block limit is halved, axis by axis, into boxes whose
 * windows fit, one window pair per box. */
#include "gl_internal.h"

/* copy.comp's flags: the dtypes, and WORDS (a dense dst of 1- or 2-byte elements, a word per
 * invocation). */
typedef struct copy_flags {
    uint32_t src, dst, words, linear;
} copy_flags;
static const tgl_gl_def copy_defs[] = {
    TGL_GL_UINT(copy_flags, src, "SRC_DTYPE"),
    TGL_GL_UINT(copy_flags, dst, "DST_DTYPE"),
    TGL_GL_FLAG(copy_flags, words, "WORDS"),
    TGL_GL_FLAG(copy_flags, linear, "LINEAR"),
};

/* words: a dense dst of 1- or 2-byte elements, a word per invocation; linear: both operands
 * dense (no coordinates). */
static tgl_gl_plan copy_plan(tgl_dtype dst, tgl_dtype src, int words, int linear)
{
    copy_flags f = {(uint32_t)src, (uint32_t)dst, (uint32_t)words, (uint32_t)linear};
    tgl_gl_plan p = {.op = "tgl_copy"};
    tgl_gl_plan_kernel(&p, "tensor/copy", TGL_GL_DEFS(copy_defs), &f);
    p.why = words && linear ? "both sides dense, dst of 1- or 2-byte elements: a whole word per invocation"
            : words         ? "a dense dst of 1- or 2-byte elements: a whole word per invocation"
            : linear        ? "both sides dense: an invocation per element, no coordinates"
            : tgl_dtype_size(dst) < 4 ? "a strided dst of 1- or 2-byte elements: atomic stores into its words"
                                      : "an invocation per element";
    return p;
}

typedef enum { ROUTE_NONE, ROUTE_BUFFER, ROUTE_STRIDED, ROUTE_KERNEL } copy_route;

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

static copy_route route(const tgl__copy *c)
{
    int same = c->dst.dtype == c->src.dtype && c->dst.dtype != TGL_DTYPE_BOOL; /* bits as they are */
    int dst_dense = dense(c->ndim, c->shape, c->dst.strides);
    if (same && c->in_place)
        return ROUTE_NONE; /* nothing moves */
    if (same && dst_dense && dense(c->ndim, c->shape, c->src.strides))
        return ROUTE_BUFFER;
    if (c->dst.dtype == TGL_DTYPE_F32 && c->src.dtype == TGL_DTYPE_F32 && dst_dense && c->ndim > 0) {
        int forward = 1;
        for (size_t d = 0; d < c->ndim; d++)
            forward &= c->src.strides[d] >= 0;
        if (forward)
            return ROUTE_STRIDED;
    }
    return ROUTE_KERNEL;
}

/* One box of the index space: its extents and each operand's window. */
typedef struct box {
    size_t shape[TGL_MAX_DIMS];
    tgl__tensor_view dst, src;
} box;

/* The operand's window over a box starting at index `lo` with extents `ext` (from the whole
 * operand v over its shape). */
static tgl__tensor_view sub_view(const tgl__tensor_view *v, size_t ndim, const size_t *lo, const size_t *ext)
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

typedef struct copy_run {
    tgl_backend *b;
    const tgl__copy *c;
    GLuint prog[2][2]; /* by WORDS and LINEAR, decided per box (a box cut across a dense
                          operand's rows is no longer dense); 0 until a box needs it */
    size_t max_bytes; /* a window's limit */
} copy_run;

static size_t window_bytes(const tgl__tensor_view *v)
{
    return v->span * tgl_dtype_size(v->dtype);
}

static tgl_status dispatch_box(copy_run *x, const box *bx, size_t n)
{
    tgl_backend *b = x->b;
    const tgl_gl_limits *l = &tgl_gl_of(b)->limits;
    size_t ndim = x->c->ndim, pad_s, pad_d, ds = tgl_dtype_size(bx->dst.dtype), ss = tgl_dtype_size(bx->src.dtype);
    tgl_gl_binding bind[2] = {
        tgl_gl_window(b, bx->src.view, window_bytes(&bx->src), 0, &pad_s),
        tgl_gl_window(b, bx->dst.view, window_bytes(&bx->dst), 1, &pad_d),
    };
    GLuint src_stride[TGL_MAX_DIMS] = {0}, dst_stride[TGL_MAX_DIMS] = {0};
    for (size_t d = 0; d < ndim; d++) { /* two's complement: the kernel's sums wrap to the offset */
        src_stride[d] = (GLuint)(uint64_t)bx->src.strides[d];
        dst_stride[d] = (GLuint)(uint64_t)bx->dst.strides[d];
    }
    GLuint dst_base = (GLuint)(pad_d / ds + bx->dst.base);
    int dst_dense = dense(ndim, bx->shape, bx->dst.strides);
    int words = ds < 4 && dst_dense, linear = dst_dense && dense(ndim, bx->shape, bx->src.strides);
    if (!x->prog[words][linear]) {
        tgl_gl_plan plan = copy_plan(bx->dst.dtype, bx->src.dtype, words, linear);
        plan.items = n;
        tgl_status pst = tgl_gl_plan_program(b, &plan, &x->prog[words][linear]);
        if (pst)
            return pst;
    }
    GLuint prog = x->prog[words][linear];
    tgl_gl_uniform_ui(b, prog, LOC_COPY_NDIM, (GLuint)ndim);
    tgl_gl_uniform_ui(b, prog, LOC_COPY_SRC_BASE, (GLuint)(pad_s / ss + bx->src.base));
    tgl_gl_uniform_ui(b, prog, LOC_COPY_DST_BASE, dst_base);
    tgl_gl_uniform_dims(b, prog, LOC_COPY_SHAPE, bx->shape, ndim);
    if (ndim) {
        tgl_gl_uniform_uiv(b, prog, LOC_COPY_SRC_STRIDE, (GLsizei)ndim, src_stride);
        tgl_gl_uniform_uiv(b, prog, LOC_COPY_DST_STRIDE, (GLsizei)ndim, dst_stride);
    }
    /* items per dispatch: the grid's invocations, a multiple of the workgroup */
    size_t grid = (size_t)((uint64_t)l->wg_count[0] * l->wg_count[1] * l->workgroup_size);
    tgl_status st = TGL_OK;
    if (words) {
        size_t per = 4 / ds, first = dst_base / per, end = (dst_base + n + per - 1) / per;
        tgl_gl_uniform_ui(b, prog, LOC_COPY_N, (GLuint)n);
        for (size_t w = first; !st && w < end; w += grid) {
            size_t count = end - w < grid ? end - w : grid;
            tgl_gl_uniform_ui(b, prog, LOC_COPY_START, (GLuint)w);
            st = tgl_gl_dispatch(b, prog, bind, 2, tgl_gl_ceil_div(count, l->workgroup_size));
        }
        return st;
    }
    for (size_t i = 0; !st && i < n; i += grid) {
        size_t count = n - i < grid ? n - i : grid;
        tgl_gl_uniform_ui(b, prog, LOC_COPY_N, (GLuint)count);
        tgl_gl_uniform_ui(b, prog, LOC_COPY_START, (GLuint)i);
        st = tgl_gl_dispatch(b, prog, bind, 2, tgl_gl_ceil_div(count, l->workgroup_size));
    }
    return st;
}

/* Runs the box [lo, lo + ext), halving it along the axis that spreads it furthest while a
 * window or its index count is past the limits. */
static tgl_status run_box(copy_run *x, size_t *lo, size_t *ext)
{
    const tgl__copy *c = x->c;
    box bx;
    size_t n = 1;
    for (size_t d = 0; d < c->ndim; d++)
        n *= bx.shape[d] = ext[d];
    bx.dst = sub_view(&c->dst, c->ndim, lo, ext);
    bx.src = sub_view(&c->src, c->ndim, lo, ext);
    if (window_bytes(&bx.dst) <= x->max_bytes && window_bytes(&bx.src) <= x->max_bytes && n <= UINT32_MAX)
        return dispatch_box(x, &bx, n);
    size_t best = c->ndim;
    uint64_t reach = 0;
    for (size_t d = 0; d < c->ndim; d++) {
        uint64_t sd = (uint64_t)(c->dst.strides[d] < 0 ? -c->dst.strides[d] : c->dst.strides[d]);
        uint64_t s_s = (uint64_t)(c->src.strides[d] < 0 ? -c->src.strides[d] : c->src.strides[d]);
        uint64_t r = (ext[d] - 1) * ((sd > s_s ? sd : s_s) | 1u);
        if (ext[d] > 1 && (best == c->ndim || r > reach)) {
            best = d;
            reach = r;
        }
    }
    if (best == c->ndim) /* one element always fits */
        return tgl__fail(x->b, TGL_ERR_INTERNAL, "tgl_copy: a box of one element exceeds the window limit");
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

tgl_status tgl_gl_copy_tensor(tgl_backend *b, const tgl__copy *c)
{
    const tgl_gl_limits *l = &tgl_gl_of(b)->limits;
    switch (route(c)) {
    case ROUTE_NONE: return TGL_OK;
    case ROUTE_BUFFER: return tgl_gl_copy(b, c->dst.view, c->src.view, c->n * tgl_dtype_size(c->dst.dtype));
    case ROUTE_STRIDED: {
        tgl__strided s = {.ndim = c->ndim, .n_out = c->n, .n_a = c->src.span};
        for (size_t d = 0; d < c->ndim; d++) {
            s.shape[d] = c->shape[d];
            s.a_stride[d] = (size_t)c->src.strides[d];
        }
        return tgl_gl_strided(b, -1, c->src.view, (tgl__view){0}, c->dst.view, &s);
    }
    default: break;
    }
    copy_run x = {.b = b, .c = c, .max_bytes = tgl_gl_max_window_elems(l, 4) * 4};
    size_t lo[TGL_MAX_DIMS] = {0}, ext[TGL_MAX_DIMS];
    for (size_t d = 0; d < c->ndim; d++)
        ext[d] = c->shape[d];
    return run_box(&x, lo, ext);
}

void tgl_gl_copy_variants(void (*fn)(void *ctx, const char *kernel, const char *defines), void *ctx)
{
    static const tgl_dtype data[] = {TGL_DTYPE_F32, TGL_DTYPE_F16, TGL_DTYPE_BF16, TGL_DTYPE_I32, TGL_DTYPE_BOOL};
    for (size_t s = 0; s < sizeof data / sizeof *data; s++)
        for (size_t d = 0; d < sizeof data / sizeof *data; d++)
            for (int words = 0; words <= (tgl_dtype_size(data[d]) < 4); words++)
                for (int linear = 0; linear < 2; linear++)
                    tgl_gl_list_plan(fn, ctx, copy_plan(data[d], data[s], words, linear));
}

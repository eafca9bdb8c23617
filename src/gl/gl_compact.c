/* GL driver of the placement pass of tgl_masked_select and tgl_nonzero (glsl/tensor/compact.comp).
 * The index space is cut into runs of consecutive row-major indices whose windows fit the SSBO
 * block limit (the flag's and value's over the run's bounding box, the run's prefix counts),
 * halving a run until they do; out is bound a window of places at a time, and each dispatch
 * writes the elements placed inside its window. A run's places are below its last index + 1,
 * so a run needs only the windows of out up to there. */
#include "gl_internal.h"

typedef struct compact_flags {
    uint32_t kind, dtype;
} compact_flags;
static const char *const compact_kinds[2] = {"SELECT", "NONZERO"};
static const tgl_gl_def compact_defs[] = {
    TGL_GL_NAME(compact_flags, kind, compact_kinds),
    TGL_GL_UINT(compact_flags, dtype, "DTYPE"),
};

/* nonzero: dt is in's (the flag's); masked_select: out's (the value's). */
static tgl_gl_plan compact_plan(int nonzero, tgl_dtype dt)
{
    compact_flags f = {(uint32_t)(nonzero != 0), (uint32_t)dt};
    tgl_gl_plan p = {.op = nonzero ? "tgl_nonzero" : "tgl_masked_select",
                     .why = "an invocation per element: taken ones written at their place from the prefix count"};
    tgl_gl_plan_kernel(&p, "tensor/compact", TGL_GL_DEFS(compact_defs), &f);
    return p;
}

typedef struct compact_run {
    tgl_backend *b;
    const tgl__compact *c;
    GLuint prog;
    size_t max_bytes; /* a window's limit */
} compact_run;

static size_t window_bytes(const tgl__tensor_view *v)
{
    return v->span * tgl_dtype_size(v->dtype);
}

/* out's window over the places [p0, p0 + len). */
static tgl__tensor_view out_window(const tgl__compact *c, size_t p0, size_t len)
{
    const size_t lo[2] = {p0, 0}, ext[2] = {len, c->ndim};
    return tgl_gl_sub_view(&c->out, c->nonzero ? 2 : 1, lo, ext);
}

static tgl_status run_range(compact_run *x, size_t i0, size_t i1)
{
    tgl_backend *b = x->b;
    const tgl__compact *c = x->c;
    const tgl_gl_limits *l = &tgl_gl_of(b)->limits;
    size_t lo[TGL_MAX_DIMS] = {0}, ext[TGL_MAX_DIMS] = {0};
    tgl_gl_run_box(c->ndim, c->shape, i0, i1, lo, ext);
    tgl__tensor_view flag = tgl_gl_sub_view(&c->flag, c->ndim, lo, ext);
    tgl__tensor_view val = c->nonzero ? flag : tgl_gl_sub_view(&c->val, c->ndim, lo, ext);
    if (window_bytes(&flag) > x->max_bytes || window_bytes(&val) > x->max_bytes || (i1 - i0) * 4 > x->max_bytes) {
        if (i1 - i0 == 1) /* one element always fits */
            return tgl__fail(b, TGL_ERR_INTERNAL, "%s: one element's window exceeds the limit",
                             c->nonzero ? "tgl_nonzero" : "tgl_masked_select");
        size_t mid = i0 + (i1 - i0) / 2;
        tgl_status st = run_range(x, i0, mid);
        return st ? st : run_range(x, mid, i1);
    }
    size_t pad, len = i1; /* the places of [i0, i1) are below i1 */
    for (tgl__tensor_view w = out_window(c, 0, len); len > 1 && window_bytes(&w) > x->max_bytes;
         w = out_window(c, 0, len))
        len = (len + 1) / 2;
    GLuint prog = x->prog;
    tgl_gl_binding bind[4];
    bind[0] = tgl_gl_window(b, flag.view, window_bytes(&flag), 0, &pad);
    tgl_gl_uniform_ui(b, prog, LOC_CMP_FLAG_BASE, (GLuint)(pad / tgl_dtype_size(flag.dtype) + flag.base));
    bind[1] = tgl_gl_window(b, (tgl__view){c->prefix.buf, c->prefix.offset + i0 * 4}, (i1 - i0) * 4, 0, &pad);
    tgl_gl_uniform_ui(b, prog, LOC_CMP_PREFIX_BASE, (GLuint)(pad / 4) - (GLuint)i0); /* wraps to the run's first */
    if (!c->nonzero) {
        bind[3] = tgl_gl_window(b, val.view, window_bytes(&val), 0, &pad);
        tgl_gl_uniform_ui(b, prog, LOC_CMP_VAL_BASE, (GLuint)(pad / tgl_dtype_size(val.dtype) + val.base));
    }
    tgl_gl_uniform_dims(b, prog, LOC_CMP_LO, lo, c->ndim);
    size_t grid = (size_t)((uint64_t)l->wg_count[0] * l->wg_count[1] * l->workgroup_size);
    size_t os = tgl_dtype_size(c->out.dtype);
    tgl_status st = TGL_OK;
    for (size_t p0 = 0; !st && p0 < i1; p0 += len) {
        size_t n_places = i1 - p0 < len ? i1 - p0 : len;
        tgl__tensor_view out = out_window(c, p0, n_places);
        bind[2] = tgl_gl_window(b, out.view, window_bytes(&out), 1, &pad);
        tgl_gl_uniform_ui(b, prog, LOC_CMP_OUT_BASE, (GLuint)(pad / os + out.base));
        tgl_gl_uniform_ui(b, prog, LOC_CMP_POS_LO, (GLuint)p0);
        tgl_gl_uniform_ui(b, prog, LOC_CMP_POS_LEN, (GLuint)n_places);
        for (size_t s = i0; !st && s < i1; s += grid) {
            size_t count = i1 - s < grid ? i1 - s : grid;
            tgl_gl_uniform_ui(b, prog, LOC_CMP_N, (GLuint)count);
            tgl_gl_uniform_ui(b, prog, LOC_CMP_START, (GLuint)s);
            st = tgl_gl_dispatch(b, prog, bind, c->nonzero ? 3 : 4, tgl_gl_ceil_div(count, l->workgroup_size));
        }
    }
    return st;
}

tgl_status tgl_gl_compact(tgl_backend *b, const tgl__compact *c)
{
    if (c->nonzero && c->ndim == 0) /* a 0-d in: rows of no coordinates, only the count */
        return TGL_OK;
    const tgl_gl_limits *l = &tgl_gl_of(b)->limits;
    compact_run x = {.b = b, .c = c, .max_bytes = tgl_gl_max_window_elems(l, 4) * 4};
    tgl_gl_plan plan = compact_plan(c->nonzero, c->nonzero ? c->flag.dtype : c->out.dtype);
    plan.groups = tgl_gl_ceil_div(c->n, l->workgroup_size);
    tgl_status st = tgl_gl_plan_program(b, &plan, &x.prog);
    if (st)
        return st;
    GLuint v[TGL_MAX_DIMS] = {0};
    tgl_gl_uniform_ui(b, x.prog, LOC_CMP_NDIM, (GLuint)c->ndim);
    tgl_gl_uniform_dims(b, x.prog, LOC_CMP_SHAPE, c->shape, c->ndim);
    if (c->ndim) {
        tgl_gl_stride_bits(v, c->flag.strides, c->ndim);
        tgl_gl_uniform_uiv(b, x.prog, LOC_CMP_FLAG_STRIDE, (GLsizei)c->ndim, v);
        if (!c->nonzero) {
            tgl_gl_stride_bits(v, c->val.strides, c->ndim);
            tgl_gl_uniform_uiv(b, x.prog, LOC_CMP_VAL_STRIDE, (GLsizei)c->ndim, v);
        }
    }
    tgl_gl_stride_bits(v, c->out.strides, 2);
    tgl_gl_uniform_ui(b, x.prog, LOC_CMP_OUT_STEP, v[0]);
    tgl_gl_uniform_ui(b, x.prog, LOC_CMP_OUT_COL, v[1]);
    return run_range(&x, 0, c->n);
}

void tgl_gl_compact_variants(void (*fn)(void *ctx, const char *kernel, const char *defines), void *ctx)
{
    for (int nonzero = 0; nonzero < 2; nonzero++)
        for (int dt = TGL_DTYPE_F32; dt <= TGL_DTYPE_BOOL; dt++)
            tgl_gl_list_plan(fn, ctx, compact_plan(nonzero, (tgl_dtype)dt));
}

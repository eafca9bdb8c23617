/* GL driver of tgl_scatter and tgl_index_add (glsl/tensor/scatter.comp): the index check (a
 * wait for its status word), then INIT over out's index space, FIRST (and, for SET and float
 * ADD, SECOND) over the index space, FINAL over out's. Each space is cut into runs of
 * consecutive row-major indices whose windows fit the SSBO block limit (halving a run until they
 * do); INIT and FINAL bind the run's temp words with it, FIRST and SECOND the temp words a window
 * of out's elements at a time, each dispatch combining the elements that land inside it. Those
 * windows are also cut to the profile's scatter_window_bytes: a GPU's atomics at random places
 * of a few hundred MB run several times slower than within a smaller range, even counting the
 * index read once per window. ADD_UNORDERED of floats is one pass, ATOMIC, over the index space,
 * adding each term to out's element itself, a window of out's span at a time. */
#include "gl_internal.h"

typedef struct scatter_flags {
    uint32_t pass, dtype;
} scatter_flags;
enum { PASS_INIT, PASS_FIRST, PASS_SECOND, PASS_FINAL, PASS_ATOMIC, PASS_COUNT };
static const char *const pass_names[PASS_COUNT] = {"INIT", "FIRST", "SECOND", "FINAL", "ATOMIC"};
static const tgl_gl_def scatter_defs[] = {
    TGL_GL_NAME(scatter_flags, pass, pass_names),
    TGL_GL_UINT(scatter_flags, dtype, "DTYPE"),
};

static tgl_gl_plan scatter_plan(int pass, tgl_dtype dt)
{
    scatter_flags f = {(uint32_t)pass, (uint32_t)dt};
    tgl_gl_plan p = {.op = "tgl_scatter",
                     .why = pass == PASS_ATOMIC ? "ADD_UNORDERED: an invocation per element of index, its term "
                                                  "added to out's element by a float atomic (or a compare-and-swap)"
                                                : "an invocation per element: out's to and from its temporary words, "
                                                  "index's landing on them with atomics that commute"};
    tgl_gl_plan_kernel(&p, "tensor/scatter", TGL_GL_DEFS(scatter_defs), &f);
    return p;
}

typedef struct scatter_run {
    tgl_backend *b;
    const tgl__scatter *s;
    int pass;
    GLuint prog;
    size_t max_bytes;  /* a window's limit */
    size_t temp_bytes; /* FIRST and SECOND's temp window: max_bytes, or less (scatter_window_bytes) */
} scatter_run;

static size_t window_bytes(const tgl__tensor_view *v)
{
    return v->span * tgl_dtype_size(v->dtype);
}

/* Dispatches the run's `count` invocations from index i0, a grid at a time. */
static tgl_status dispatch_run(scatter_run *x, const tgl_gl_binding *bind, size_t n_bind, size_t i0, size_t count)
{
    const tgl_gl_limits *l = &tgl_gl_of(x->b)->limits;
    size_t grid = (size_t)((uint64_t)l->wg_count[0] * l->wg_count[1] * l->workgroup_size);
    tgl_status st = TGL_OK;
    for (size_t s = i0; !st && s < i0 + count; s += grid) {
        size_t k = i0 + count - s < grid ? i0 + count - s : grid;
        tgl_gl_uniform_ui(x->b, x->prog, LOC_SCT_N, (GLuint)k);
        tgl_gl_uniform_ui(x->b, x->prog, LOC_SCT_START, (GLuint)s);
        st = tgl_gl_dispatch(x->b, x->prog, bind, n_bind, tgl_gl_ceil_div(k, l->workgroup_size));
    }
    return st;
}

/* The binding of the temp words of out's elements [t0, t0 + len), the kernel told where. */
static tgl_gl_binding bind_temp(scatter_run *x, size_t t0, size_t len, int writes)
{
    size_t pad, w = x->s->words;
    tgl_gl_binding bind = tgl_gl_window(x->b, (tgl__view){x->s->temp.buf, x->s->temp.offset + t0 * w * 4}, len * w * 4,
                                        writes, &pad);
    tgl_gl_uniform_ui(x->b, x->prog, LOC_SCT_TEMP_BASE, (GLuint)(pad / 4));
    tgl_gl_uniform_ui(x->b, x->prog, LOC_SCT_T_LO, (GLuint)t0);
    tgl_gl_uniform_ui(x->b, x->prog, LOC_SCT_T_LEN, (GLuint)len);
    return bind;
}

static tgl_status run_range(scatter_run *x, size_t i0, size_t i1)
{
    tgl_backend *b = x->b;
    const tgl__scatter *s = x->s;
    int over_out = x->pass == PASS_INIT || x->pass == PASS_FINAL;
    const size_t *shape = over_out ? s->out_shape : s->shape;
    size_t lo[TGL_MAX_DIMS] = {0}, ext[TGL_MAX_DIMS] = {0};
    tgl_gl_run_box(s->ndim, shape, i0, i1, lo, ext);
    tgl__tensor_view a = tgl_gl_sub_view(over_out ? &s->out : &s->index, s->ndim, lo, ext);
    tgl__tensor_view src = over_out ? a : tgl_gl_sub_view(&s->src, s->ndim, lo, ext);
    size_t temp_bytes = over_out ? (i1 - i0) * s->words * 4 : 0;
    if (window_bytes(&a) > x->max_bytes || window_bytes(&src) > x->max_bytes || temp_bytes > x->max_bytes) {
        if (i1 - i0 == 1) /* one element always fits */
            return tgl__fail(b, TGL_ERR_INTERNAL, "tgl_scatter: one element's window exceeds the limit");
        size_t mid = i0 + (i1 - i0) / 2;
        tgl_status st = run_range(x, i0, mid);
        return st ? st : run_range(x, mid, i1);
    }
    GLuint prog = x->prog;
    size_t pad;
    tgl_gl_binding bind[3];
    bind[0] = tgl_gl_window(b, a.view, window_bytes(&a), x->pass == PASS_FINAL, &pad);
    tgl_gl_uniform_ui(b, prog, LOC_SCT_A_BASE, (GLuint)(pad / tgl_dtype_size(a.dtype) + a.base));
    tgl_gl_uniform_dims(b, prog, LOC_SCT_LO, lo, s->ndim);
    if (over_out) {
        bind[1] = bind_temp(x, i0, i1 - i0, x->pass == PASS_INIT);
        return dispatch_run(x, bind, 2, i0, i1 - i0);
    }
    bind[1] = tgl_gl_window(b, src.view, window_bytes(&src), 0, &pad);
    tgl_gl_uniform_ui(b, prog, LOC_SCT_B_BASE, (GLuint)(pad / tgl_dtype_size(src.dtype) + src.base));
    tgl_status st = TGL_OK;
    if (x->pass == PASS_ATOMIC) { /* out's span a window of positions at a time */
        size_t es = tgl_dtype_size(s->out.dtype), per = x->temp_bytes / es ? x->temp_bytes / es : 1;
        for (size_t t0 = 0; !st && t0 < s->out.span; t0 += per) {
            size_t len = s->out.span - t0 < per ? s->out.span - t0 : per;
            bind[2] = tgl_gl_window(b, (tgl__view){s->out.view.buf, s->out.view.offset + t0 * es}, len * es, 1, &pad);
            tgl_gl_uniform_ui(b, prog, LOC_SCT_TEMP_BASE, (GLuint)(pad / es));
            tgl_gl_uniform_ui(b, prog, LOC_SCT_T_LO, (GLuint)t0);
            tgl_gl_uniform_ui(b, prog, LOC_SCT_T_LEN, (GLuint)len);
            st = dispatch_run(x, bind, 3, i0, i1 - i0);
        }
        return st;
    }
    size_t per = x->temp_bytes / (s->words * 4); /* out's elements a temp window holds */
    per = per ? per : 1;
    for (size_t t0 = 0; !st && t0 < s->out_n; t0 += per) {
        bind[2] = bind_temp(x, t0, s->out_n - t0 < per ? s->out_n - t0 : per, 1);
        st = dispatch_run(x, bind, 3, i0, i1 - i0);
    }
    return st;
}

static tgl_status run_pass(tgl_backend *b, const tgl__scatter *s, int pass)
{
    const tgl_gl_limits *l = &tgl_gl_of(b)->limits;
    int over_out = pass == PASS_INIT || pass == PASS_FINAL;
    size_t n = over_out ? s->out_n : s->n;
    scatter_run x = {.b = b, .s = s, .pass = pass, .max_bytes = tgl_gl_max_window_elems(l, 4) * 4};
    x.temp_bytes = l->scatter_window_bytes && l->scatter_window_bytes < x.max_bytes ? (size_t)l->scatter_window_bytes
                                                                                    : x.max_bytes;
    tgl_gl_plan plan = scatter_plan(pass, s->out.dtype);
    plan.groups = tgl_gl_ceil_div(n, l->workgroup_size);
    tgl_status st = tgl_gl_plan_program(b, &plan, &x.prog);
    if (st)
        return st;
    GLuint v[TGL_MAX_DIMS] = {0};
    size_t row[TGL_MAX_DIMS] = {0}; /* out's row-major strides */
    for (size_t d = s->ndim, r = 1; d-- > 0; r *= s->out_shape[d])
        row[d] = r;
    tgl_gl_uniform_ui(b, x.prog, LOC_SCT_NDIM, (GLuint)s->ndim);
    tgl_gl_uniform_ui(b, x.prog, LOC_SCT_AXIS, (GLuint)s->axis);
    tgl_gl_uniform_ui(b, x.prog, LOC_SCT_REDUCE, (GLuint)s->reduce);
    tgl_gl_uniform_ui(b, x.prog, LOC_SCT_WORDS, (GLuint)s->words);
    tgl_gl_uniform_ui(b, x.prog, LOC_SCT_SHIFT, (GLuint)s->shift);
    tgl_gl_uniform_ui(b, x.prog, LOC_SCT_B_BASE, 0);
    tgl_gl_uniform_dims(b, x.prog, LOC_SCT_SHAPE, over_out ? s->out_shape : s->shape, s->ndim);
    tgl_gl_uniform_dims(b, x.prog, LOC_SCT_ROW, row, s->ndim);
    tgl_gl_stride_bits(v, over_out ? s->out.strides : s->index.strides, s->ndim);
    tgl_gl_uniform_uiv(b, x.prog, LOC_SCT_A_STRIDE, (GLsizei)s->ndim, v);
    tgl_gl_stride_bits(v, over_out ? s->out.strides : s->src.strides, s->ndim);
    tgl_gl_uniform_uiv(b, x.prog, LOC_SCT_B_STRIDE, (GLsizei)s->ndim, v);
    if (pass == PASS_ATOMIC) {
        tgl_gl_uniform_ui(b, x.prog, LOC_SCT_C_BASE, (GLuint)s->out.base);
        tgl_gl_stride_bits(v, s->out.strides, s->ndim);
        tgl_gl_uniform_uiv(b, x.prog, LOC_SCT_C_STRIDE, (GLsizei)s->ndim, v);
    }
    return run_range(&x, 0, n);
}

tgl_status tgl_gl_scatter(tgl_backend *b, const tgl__tew *check, const tgl__scatter *s, uint64_t *bad_pos,
                          int32_t *bad_value)
{
    tgl_status st = tgl_gl_check_index(b, check, bad_pos, bad_value);
    if (st || *bad_pos != UINT64_MAX)
        return st;
    if (s->reduce == TGL_SCATTER_ADD_UNORDERED) /* floats (the API makes the others ADD) */
        return run_pass(b, s, PASS_ATOMIC);
    int two = s->words != 1; /* SET and float ADD */
    if ((st = run_pass(b, s, PASS_INIT)) || (st = run_pass(b, s, PASS_FIRST)) ||
        (two && (st = run_pass(b, s, PASS_SECOND))))
        return st;
    return run_pass(b, s, PASS_FINAL);
}

void tgl_gl_scatter_variants(void (*fn)(void *ctx, const char *kernel, const char *defines), void *ctx)
{
    for (int pass = 0; pass < PASS_COUNT; pass++)
        for (int dt = TGL_DTYPE_F32; dt <= (pass == PASS_ATOMIC ? TGL_DTYPE_BF16 : TGL_DTYPE_BOOL); dt++)
            tgl_gl_list_plan(fn, ctx, scatter_plan(pass, (tgl_dtype)dt));
}

/* GL driver for tgl_reduce_t, tgl_argmax_t and tgl_argmin_t (glsl/tensor/reduce.comp). One pure function picks the variant from
 * the shape and the device profile: a workgroup per out element (GROUP) where lines are long, an
 * invocation per out element otherwise. Operands are bound from their lowest element; out's
 * index space whose windows pass the SSBO block limit is halved, dim by dim, into boxes whose
 * windows fit (a line is never cut: one past the limit is TGL_ERR_UNSUPPORTED). */
#include "gl_internal.h"

typedef struct rdt_flags {
    uint32_t in, out, group;
} rdt_flags;
static const tgl_gl_def rdt_defs[] = {
    TGL_GL_UINT(rdt_flags, in, "IN_DTYPE"),
    TGL_GL_UINT(rdt_flags, out, "OUT_DTYPE"),
    TGL_GL_FLAG(rdt_flags, group, "GROUP"),
};

/* Lines at least this many reduce_workgroup_size long take a workgroup each; shorter ones too
 * when there are too few out elements to give the device an invocation per line. */
#define GROUP_LINES_PER_LANE 4u
#define FEW_OUTPUTS 4096u

static int use_group(const tgl_gl_limits *l, size_t n_out, size_t len)
{
    return len >= (size_t)GROUP_LINES_PER_LANE * l->reduce_workgroup_size || (len >= 64 && n_out < FEW_OUTPUTS);
}

static tgl_gl_plan rdt_plan(const tgl_gl_limits *l, const char *op, tgl_dtype in, tgl_dtype out, int group)
{
    rdt_flags f = {(uint32_t)in, (uint32_t)out, (uint32_t)group};
    tgl_gl_plan p = {.op = op};
    tgl_gl_plan_kernel(&p, "tensor/reduce", TGL_GL_DEFS(rdt_defs), &f);
    if (group && l)
        p.wg = l->reduce_workgroup_size;
    p.why = group ? "long lines (or few of them): a workgroup per out element, then a tree"
                  : "an invocation per out element, walking its line";
    return p;
}

/* The window over out's box [lo, lo + ext) of an operand v (strides over out's dims), its line
 * of len elements `step` apart included (len 0 or 1: none). */
static tgl__tensor_view sub_view(const tgl__tensor_view *v, size_t ndim, const size_t *lo, const size_t *ext,
                                 int64_t step, size_t len)
{
    tgl__tensor_view s = *v;
    int64_t origin = (int64_t)v->base, back = 0, ahead = 0;
    for (size_t d = 0; d <= ndim; d++) {
        int64_t reach = d < ndim ? v->strides[d] * (int64_t)(ext[d] - 1) : step * (int64_t)(len ? len - 1 : 0);
        if (d < ndim)
            origin += (int64_t)lo[d] * v->strides[d];
        *(reach < 0 ? &back : &ahead) += reach < 0 ? -reach : reach;
    }
    s.view.offset = v->view.offset + (size_t)(origin - back) * tgl_dtype_size(v->dtype);
    s.base = (size_t)back;
    s.span = (size_t)(back + ahead + 1);
    return s;
}

typedef struct rdt_run {
    tgl_backend *b;
    const tgl__rdt *r;
    GLuint prog;
    int group;
    size_t max_bytes;
} rdt_run;

static tgl_status dispatch_box(rdt_run *x, const tgl__tensor_view *in, const tgl__tensor_view *out,
                               const size_t *shape, size_t n)
{
    tgl_backend *b = x->b;
    const tgl__rdt *r = x->r;
    const tgl_gl_limits *l = &tgl_gl_of(b)->limits;
    size_t pad_in = 0, pad_out;
    tgl_gl_binding bind[2];
    /* an empty line reads nothing: out's window stands in for in's */
    bind[0] = r->len ? tgl_gl_window(b, in->view, in->span * tgl_dtype_size(in->dtype), 0, &pad_in)
                     : tgl_gl_window(b, out->view, out->span * tgl_dtype_size(out->dtype), 0, &pad_in);
    bind[1] = tgl_gl_window(b, out->view, out->span * tgl_dtype_size(out->dtype), 1, &pad_out);
    GLuint prog = x->prog;
    GLuint in_strides[TGL_MAX_DIMS] = {0}, out_strides[TGL_MAX_DIMS] = {0};
    for (size_t d = 0; d < r->ndim; d++) {
        in_strides[d] = (GLuint)(uint64_t)in->strides[d];
        out_strides[d] = (GLuint)(uint64_t)out->strides[d];
    }
    tgl_gl_uniform_ui(b, prog, LOC_RDT_NDIM, (GLuint)r->ndim);
    tgl_gl_uniform_ui(b, prog, LOC_RDT_OP, (GLuint)r->op);
    tgl_gl_uniform_ui(b, prog, LOC_RDT_LEN, (GLuint)r->len);
    tgl_gl_uniform_ui(b, prog, LOC_RDT_STEP, (GLuint)(uint64_t)r->in_step);
    tgl_gl_uniform_ui(b, prog, LOC_RDT_IN_BASE, r->len ? (GLuint)(pad_in / tgl_dtype_size(in->dtype) + in->base) : 0u);
    tgl_gl_uniform_ui(b, prog, LOC_RDT_OUT_BASE, (GLuint)(pad_out / tgl_dtype_size(out->dtype) + out->base));
    if (r->ndim) {
        tgl_gl_uniform_dims(b, prog, LOC_RDT_SHAPE, shape, r->ndim);
        tgl_gl_uniform_uiv(b, prog, LOC_RDT_IN_STRIDE, (GLsizei)r->ndim, in_strides);
        tgl_gl_uniform_uiv(b, prog, LOC_RDT_OUT_STRIDE, (GLsizei)r->ndim, out_strides);
    }
    /* out elements per dispatch: GROUP a workgroup each, else an invocation each */
    uint32_t wg = x->group ? l->reduce_workgroup_size : l->workgroup_size;
    size_t grid = (size_t)((uint64_t)l->wg_count[0] * l->wg_count[1] * (x->group ? 1u : wg));
    tgl_status st = TGL_OK;
    for (size_t i = 0; !st && i < n; i += grid) {
        size_t count = n - i < grid ? n - i : grid;
        tgl_gl_uniform_ui(b, prog, LOC_RDT_N, (GLuint)count);
        tgl_gl_uniform_ui(b, prog, LOC_RDT_START, (GLuint)i);
        st = tgl_gl_dispatch(b, prog, bind, 2, x->group ? count : tgl_gl_ceil_div(count, wg));
    }
    return st;
}

/* Runs out's box [lo, lo + ext), halving it along the dim that spreads it furthest while a
 * window or its element count is past the limits. */
static tgl_status run_box(rdt_run *x, size_t *lo, size_t *ext)
{
    const tgl__rdt *r = x->r;
    size_t n = 1;
    for (size_t d = 0; d < r->ndim; d++)
        n *= ext[d];
    tgl__tensor_view out = sub_view(&r->out, r->ndim, lo, ext, 0, 0);
    tgl__tensor_view in = r->len ? sub_view(&r->in, r->ndim, lo, ext, r->in_step, r->len) : out;
    size_t in_bytes = in.span * tgl_dtype_size(in.dtype), out_bytes = out.span * tgl_dtype_size(out.dtype);
    if (in_bytes <= x->max_bytes && out_bytes <= x->max_bytes && n <= UINT32_MAX)
        return dispatch_box(x, &in, &out, ext, n);
    size_t best = r->ndim;
    uint64_t reach = 0;
    for (size_t d = 0; d < r->ndim; d++) {
        uint64_t si = (uint64_t)(r->in.strides[d] < 0 ? -r->in.strides[d] : r->in.strides[d]);
        uint64_t so = (uint64_t)(r->out.strides[d] < 0 ? -r->out.strides[d] : r->out.strides[d]);
        uint64_t reach_d = (ext[d] - 1) * ((si > so ? si : so) | 1u);
        if (ext[d] > 1 && (best == r->ndim || reach_d > reach)) {
            best = d;
            reach = reach_d;
        }
    }
    if (best == r->ndim)
        return tgl__fail(x->b, TGL_ERR_UNSUPPORTED,
                         "tgl_reduce_t: one line of %zu elements, %lld apart, spans more than the device's buffer "
                         "window (%zu bytes)",
                         r->len, (long long)r->in_step, x->max_bytes);
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

tgl_status tgl_gl_reduce_t(tgl_backend *b, const tgl__rdt *r)
{
    const tgl_gl_limits *l = &tgl_gl_of(b)->limits;
    if (r->len > UINT32_MAX)
        return tgl__fail(b, TGL_ERR_UNSUPPORTED, "tgl_reduce_t: a line of %zu elements (GL takes up to 2^32 - 1)",
                         r->len);
    rdt_run x = {.b = b, .r = r, .group = use_group(l, r->n_out, r->len), .max_bytes = tgl_gl_max_window_elems(l, 4) * 4};
    const char *op = r->op == TGL__RDT_ARGMAX   ? "tgl_argmax_t"
                     : r->op == TGL__RDT_ARGMIN ? "tgl_argmin_t"
                                                : "tgl_reduce_t";
    tgl_gl_plan plan = rdt_plan(l, op, r->len ? r->in.dtype : r->out.dtype, r->out.dtype, x.group);
    plan.items = 1;
    plan.groups = x.group ? r->n_out : tgl_gl_ceil_div(r->n_out, l->workgroup_size);
    tgl_status st = tgl_gl_plan_program(b, &plan, &x.prog);
    if (st)
        return st;
    size_t lo[TGL_MAX_DIMS] = {0}, ext[TGL_MAX_DIMS] = {0};
    for (size_t d = 0; d < r->ndim; d++)
        ext[d] = r->shape[d];
    return run_box(&x, lo, ext);
}

void tgl_gl_reduce_t_variants(void (*fn)(void *ctx, const char *kernel, const char *defines), void *ctx)
{
    static const tgl_dtype data[] = {TGL_DTYPE_F32, TGL_DTYPE_F16, TGL_DTYPE_BF16, TGL_DTYPE_I32, TGL_DTYPE_BOOL};
    for (size_t i = 0; i < sizeof data / sizeof *data; i++)
        for (int group = 0; group < 2; group++) {
            if (data[i] != TGL_DTYPE_BOOL) /* the arithmetic ops: out of in's dtype */
                tgl_gl_list_plan(fn, ctx, rdt_plan(NULL, "tgl_reduce_t", data[i], data[i], group));
            tgl_gl_list_plan(fn, ctx, rdt_plan(NULL, "tgl_reduce_t", data[i], TGL_DTYPE_BOOL, group)); /* any, all */
            if (data[i] != TGL_DTYPE_I32 && data[i] != TGL_DTYPE_BOOL) /* argmax, argmin of floats */
                tgl_gl_list_plan(fn, ctx, rdt_plan(NULL, "tgl_argmax_t", data[i], TGL_DTYPE_I32, group));
        }
}

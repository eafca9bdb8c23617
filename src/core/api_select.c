/* tgl_masked_select, tgl_nonzero: packing the taken elements of an index space (tensorgl.h).
 * The checks turn the descriptors into a tgl__compact; then, on the backend's own passes and a
 * temporary buffer: the flags as bools (a tgl_copy's pass, unless the flag tensor already is a
 * dense bool one), their inclusive scan into i32 (vtable->reduce_t's cumsum: element i's place),
 * the placement (vtable->compact) and the count (a copy of the scan's last element). The public
 * ops are not called from here, so a trace records the one call. */
#include "trace.h"
#include "validate.h"

#define ANY_DTYPE ((1u << TGL_DTYPE_COUNT) - 1u)

/* count: one i32 element, resolved into *v. */
static tgl_status check_count(tgl_backend *b, const char *fn, const tgl_tensor *count, tgl__tensor_view *v)
{
    size_t n;
    tgl_status st = tgl__tensor_shape(b, fn, "count", count, ANY_DTYPE, &n);
    if (st)
        return st;
    if (count->dtype != TGL_DTYPE_I32)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "count: %s; i32 is wanted", tgl_dtype_name(count->dtype));
    if (n != 1)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "count: %zu elements; one is wanted", n);
    return tgl__resolve_tensor(b, "count", count->data, count->dtype, count->ndim, count->shape, count->strides, v);
}

static size_t view_bytes(const tgl__tensor_view *v)
{
    return v->span * tgl_dtype_size(v->dtype);
}

/* An element-wise pass of one input (a copy or a fill) over `ndim` dims of `shape`. */
static tgl_status tew_pass(tgl_backend *b, tgl__tew_op op, size_t ndim, const size_t *shape, size_t n,
                           const tgl__tensor_view *in, const tgl__tensor_view *out)
{
    tgl__tew e = {.op = op, .ndim = ndim, .n = n, .nin = 1, .out = *out, .in = {*in}};
    for (size_t d = 0; d < ndim; d++)
        e.shape[d] = shape[d];
    return b->vt->tensor_ewise(b, &e);
}

/* The passes after the checks; count is written in every case. */
static tgl_status run(tgl_backend *b, const char *fn, tgl__compact *c, const tgl__tensor_view *count)
{
    if (!b->vt->compact || !b->vt->reduce_t || !b->vt->tensor_ewise)
        return tgl__unsupported(b, fn);
    if (c->n == 0) { /* nothing taken: count = 0 */
        tgl__tew zero = {.op = TGL__TEW_FILL, .n = 1, .nin = 1, .out = *count, .in = {*count}};
        return b->vt->tensor_ewise(b, &zero);
    }
    /* the scan reads the flag tensor itself where it is a dense bool one, else bools copied into
     * the buffer's first n bytes (tgl_copy's conversion: not +-0 is true, NaN too) */
    int direct = c->flag.dtype == TGL_DTYPE_BOOL && tgl__row_major(c->ndim, c->shape, c->flag.strides);
    size_t flag_bytes = direct ? 0 : (c->n + 3) / 4 * 4, bytes = flag_bytes + 4 * c->n;
    void *buf;
    tgl_status st = tgl__temp_create(b, fn, bytes, &buf);
    if (st)
        return st;
    tgl__tensor_view flags = {.view = {buf, 0}, .dtype = TGL_DTYPE_BOOL, .span = c->n};
    tgl__tensor_view prefix = {.view = {buf, flag_bytes}, .dtype = TGL_DTYPE_I32, .span = c->n, .strides = {1}};
    if (direct) {
        flags = c->flag;
        flags.base = 0; /* dense with positive strides: element 0 is the lowest */
    } else {
        for (size_t d = c->ndim, s = 1; d-- > 0; s *= c->shape[d])
            flags.strides[d] = (int64_t)s;
        st = tew_pass(b, TGL__TEW_COPY, c->ndim, c->shape, c->n, &c->flag, &flags);
    }
    flags.strides[0] = 1; /* the scan sees one line of n */
    tgl__rdt scan = {.op = TGL__RDT_CUMSUM, .n_out = 1, .len = c->n, .in_step = 1, .out_step = 1,
                     .in = flags, .out = prefix};
    for (size_t d = 1; d < TGL_MAX_DIMS; d++)
        scan.in.strides[d] = 0;
    c->prefix = prefix.view;
    tgl__tensor_view last = prefix;
    last.view.offset += 4 * (c->n - 1);
    last.span = 1;
    if (!st && !(st = b->vt->reduce_t(b, &scan)) && !(st = b->vt->compact(b, c)))
        st = tew_pass(b, TGL__TEW_COPY, 0, NULL, 1, &last, count);
    tgl__temp_destroy(b, buf, bytes);
    return st;
}

/* The index space's checks shared by both: its element count, the count's and overlaps with
 * it. The inputs are resolved in c->flag (and c->val); out in c->out unless out has no element. */
static tgl_status finish_checks(tgl_backend *b, const char *fn, tgl__compact *c, const tgl_tensor *out,
                                size_t out_rows, const tgl_tensor *count, tgl__tensor_view *cv)
{
    tgl_status st;
    if (c->n > (size_t)INT32_MAX)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "%s: an index space of %zu elements (counts are i32: below 2^31)",
                         fn, c->n);
    if (out_rows < c->n)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "out: %zu %s where %zu elements may be taken", out_rows,
                         c->nonzero ? "rows" : "elements", c->n);
    if ((st = check_count(b, fn, count, cv)))
        return st;
    size_t n_out = 1;
    for (size_t d = 0; d < out->ndim; d++)
        n_out *= out->shape[d];
    if (n_out &&
        ((st = tgl__resolve_tensor(b, "out", out->data, out->dtype, out->ndim, out->shape, out->strides, &c->out)) ||
         (st = tgl__check_unique(b, "out", out->ndim, out->shape, out->strides))))
        return st;
    const tgl__tensor_view *in[2] = {&c->flag, &c->val};
    const char *names[2] = {c->nonzero ? "in" : "mask", "in"};
    for (size_t k = 0; c->n && k < (c->nonzero ? 1u : 2u); k++) {
        if (n_out && (st = tgl__check_disjoint(b, names[k], in[k]->view, view_bytes(in[k]), c->out.view,
                                               view_bytes(&c->out))))
            return st;
        if (tgl__overlaps(in[k]->view, view_bytes(in[k]), cv->view, 4))
            return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "count overlaps %s", names[k]);
    }
    if (n_out && tgl__overlaps(c->out.view, view_bytes(&c->out), cv->view, 4))
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "count overlaps out");
    return TGL_OK;
}

static tgl_status masked_select(tgl_backend *b, const tgl_tensor *in, const tgl_tensor *mask, const tgl_tensor *out,
                                const tgl_tensor *count)
{
    const char *fn = "tgl_masked_select";
    size_t n_in, n_mask, n_out;
    tgl_status st;
    if ((st = tgl__tensor_shape(b, fn, "in", in, TGL__DT_DATA, &n_in)) ||
        (st = tgl__tensor_shape(b, fn, "mask", mask, TGL__DT(BOOL), &n_mask)) ||
        (st = tgl__tensor_shape(b, fn, "out", out, TGL__DT_DATA, &n_out)))
        return st;
    if (out->dtype != in->dtype)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "in and out: %s and %s differ (tgl_copy converts first)",
                         tgl_dtype_name(in->dtype), tgl_dtype_name(out->dtype));
    if (out->ndim != 1)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "out: %zu dims; 1 is wanted", out->ndim);
    tgl__compact c = {.ndim = in->ndim > mask->ndim ? in->ndim : mask->ndim, .n = 1};
    for (size_t i = 0; i < c.ndim; i++) { /* i counts from the right */
        size_t x = i < in->ndim ? in->shape[in->ndim - 1 - i] : 1, y = i < mask->ndim ? mask->shape[mask->ndim - 1 - i] : 1;
        if (x != y && x != 1 && y != 1)
            return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT,
                             "in and mask: shapes do not broadcast: dim %zu from the right is %zu in in, %zu in mask", i,
                             x, y);
        c.shape[c.ndim - 1 - i] = x == 1 ? y : x;
    }
    for (size_t d = 0; d < c.ndim; d++)
        if ((st = tgl__mul(b, "in and mask's broadcast shape", c.n, c.shape[d], &c.n)))
            return st;
    tgl__tensor_view cv = {0};
    int64_t in_strides[TGL_MAX_DIMS] = {0}, mask_strides[TGL_MAX_DIMS] = {0};
    if ((st = tgl__broadcast_to(b, "in", in, c.ndim, c.shape, in_strides)) ||
        (st = tgl__broadcast_to(b, "mask", mask, c.ndim, c.shape, mask_strides)))
        return st;
    if (c.n && ((st = tgl__resolve_tensor(b, "in", in->data, in->dtype, c.ndim, c.shape, in_strides, &c.val)) ||
                (st = tgl__resolve_tensor(b, "mask", mask->data, mask->dtype, c.ndim, c.shape, mask_strides,
                                          &c.flag))))
        return st;
    if ((st = finish_checks(b, fn, &c, out, out->shape[0], count, &cv)))
        return st;
    return run(b, fn, &c, &cv);
}

static tgl_status nonzero(tgl_backend *b, const tgl_tensor *in, const tgl_tensor *out, const tgl_tensor *count)
{
    const char *fn = "tgl_nonzero";
    size_t n_out;
    tgl_status st;
    tgl__compact c = {.nonzero = 1};
    if ((st = tgl__tensor_shape(b, fn, "in", in, TGL__DT_DATA, &c.n)) ||
        (st = tgl__tensor_shape(b, fn, "out", out, ANY_DTYPE, &n_out)))
        return st;
    if (out->dtype != TGL_DTYPE_I32)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "out: %s; i32 is wanted", tgl_dtype_name(out->dtype));
    if (out->ndim != 2 || out->shape[1] != in->ndim)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT,
                         "out: a %zu-d tensor%s%zu columns; (rows, %zu) is wanted, a row per element of in", out->ndim,
                         out->ndim == 2 ? " of " : "", out->ndim == 2 ? out->shape[1] : 0, in->ndim);
    c.ndim = in->ndim;
    for (size_t d = 0; d < c.ndim; d++)
        c.shape[d] = in->shape[d];
    if (c.n && (st = tgl__resolve_tensor(b, "in", in->data, in->dtype, in->ndim, in->shape, in->strides, &c.flag)))
        return st;
    tgl__tensor_view cv = {0};
    if ((st = finish_checks(b, fn, &c, out, out->shape[0], count, &cv)))
        return st;
    return run(b, fn, &c, &cv);
}

TGL_API tgl_status tgl_masked_select(tgl_backend *b, const tgl_tensor *in, const tgl_tensor *mask,
                                     const tgl_tensor *out, const tgl_tensor *count)
{
    if (tgl__hooked(b))
        return TGL__HOOK(MASKED_SELECT);
    tgl_status st = tgl__enter(b);
    return st ? st : tgl__leave(b, masked_select(b, in, mask, out, count));
}

TGL_API tgl_status tgl_nonzero(tgl_backend *b, const tgl_tensor *in, const tgl_tensor *out, const tgl_tensor *count)
{
    if (tgl__hooked(b))
        return TGL__HOOK(NONZERO);
    tgl_status st = tgl__enter(b);
    return st ? st : tgl__leave(b, nonzero(b, in, out, count));
}

/* The element-wise descriptor ops: tgl_copy, tgl_compare, tgl_where (tensorgl.h). One checking
 * path turns their descriptors into a tgl__tew for vtable->tensor_ewise. */
#include "trace.h"
#include "validate.h"

#include <stdio.h>

static const char *const compare_names[TGL_COMPARE_COUNT] = {"eq", "ne", "lt", "le", "gt", "ge"};

TGL_API const char *tgl_compare_name(tgl_compare_op op)
{
    return (unsigned)op < TGL_COMPARE_COUNT ? compare_names[op] : NULL;
}

/* out and in[k] are the same elements: one byte range, dtype and stride along every dim that
 * has more than one index (the input's strides already in out's index space). */
static int same_elements(const tgl__tew *e, size_t k)
{
    const tgl__tensor_view *o = &e->out, *x = &e->in[k];
    if (o->view.offset != x->view.offset || o->dtype != x->dtype || o->base != x->base)
        return 0;
    for (size_t d = 0; d < e->ndim; d++)
        if (e->shape[d] > 1 && o->strides[d] != x->strides[d])
            return 0;
    return 1;
}

/* "[2,3,4]" into buf. */
static const char *shape_text(char *buf, size_t size, const size_t *shape, size_t ndim)
{
    size_t len = (size_t)snprintf(buf, size, "[");
    for (size_t d = 0; d < ndim && len < size; d++)
        len += (size_t)snprintf(buf + len, size - len, "%s%zu", d ? "," : "", shape[d]);
    if (len < size)
        snprintf(buf + len, size - len, "]");
    return buf;
}

/* out's shape must be the NumPy broadcast of the inputs' shapes (tgl_compare, tgl_where). */
static tgl_status check_broadcast_shape(tgl_backend *b, const tgl_tensor *out, const tgl_tensor *const *in,
                                        const char *const *names, size_t nin)
{
    size_t ndim = 0, shape[TGL_MAX_DIMS];
    for (size_t k = 0; k < nin; k++)
        ndim = in[k]->ndim > ndim ? in[k]->ndim : ndim;
    for (size_t i = 0; i < ndim; i++) { /* i counts from the right */
        size_t ext = 1;
        for (size_t k = 0; k < nin; k++) {
            size_t x = i < in[k]->ndim ? in[k]->shape[in[k]->ndim - 1 - i] : 1;
            if (x != 1 && ext != 1 && x != ext)
                return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT,
                                 "%s: shapes do not broadcast: dim %zu from the right is %zu, another input's %zu",
                                 names[k], i, x, ext);
            if (x != 1)
                ext = x;
        }
        shape[ndim - 1 - i] = ext;
    }
    int same = ndim == out->ndim;
    for (size_t d = 0; same && d < ndim; d++)
        same = shape[d] == out->shape[d];
    if (!same) {
        char want[160], got[160];
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "out: shape %s is not the inputs' broadcast shape %s",
                         shape_text(got, sizeof got, out->shape, out->ndim), shape_text(want, sizeof want, shape, ndim));
    }
    return TGL_OK;
}

/* Checks out and the inputs (in order, named) of op `fn` (its registry row gives the dtypes
 * taken) into e, whose op and nin the caller set. *empty is set when out has no element (then
 * nothing else was checked past the shapes). */
static tgl_status check_tew(tgl_backend *b, tgl__fn row, const tgl_tensor *out, const char *out_name,
                            const tgl_tensor *const *in, const char *const *names, tgl__tew *e, int *empty)
{
    const char *fn = tgl__fn_name(row);
    unsigned dtypes = tgl__fn_dtypes(row);
    size_t n;
    tgl_status st = tgl__tensor_shape(b, fn, out_name, out, dtypes, &e->n);
    for (size_t k = 0; !st && k < e->nin && k < TGL__TEW_MAX_INPUTS; k++)
        st = tgl__tensor_shape(b, fn, names[k], in[k], dtypes, &n);
    if (st)
        return st;
    /* the dtypes each op takes, beyond the row's */
    if (e->op == TGL__TEW_COMPARE) {
        if (in[0]->dtype != in[1]->dtype)
            return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "a and bb: %s and %s differ (tgl_copy one to the other's dtype)",
                             tgl_dtype_name(in[0]->dtype), tgl_dtype_name(in[1]->dtype));
        if (out->dtype != TGL_DTYPE_BOOL)
            return tgl__fail(b, TGL_ERR_UNSUPPORTED, "out: tgl_compare writes bool, not %s", tgl_dtype_name(out->dtype));
    }
    if (e->op == TGL__TEW_WHERE) {
        if (in[0]->dtype != TGL_DTYPE_BOOL)
            return tgl__fail(b, TGL_ERR_UNSUPPORTED, "cond: tgl_where takes a bool condition, not %s",
                             tgl_dtype_name(in[0]->dtype));
        if (in[1]->dtype != out->dtype || in[2]->dtype != out->dtype)
            return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "a, bb and out: %s, %s and %s are not one dtype",
                             tgl_dtype_name(in[1]->dtype), tgl_dtype_name(in[2]->dtype), tgl_dtype_name(out->dtype));
    }
    if (e->op != TGL__TEW_COPY && (st = check_broadcast_shape(b, out, in, names, e->nin)))
        return st;
    e->ndim = out->ndim;
    for (size_t d = 0; d < e->ndim; d++)
        e->shape[d] = out->shape[d];
    int64_t strides[TGL__TEW_MAX_INPUTS][TGL_MAX_DIMS] = {{0}};
    for (size_t k = 0; k < e->nin && k < TGL__TEW_MAX_INPUTS; k++)
        if ((st = tgl__broadcast_to(b, names[k], in[k], e->ndim, e->shape, strides[k])))
            return st;
    *empty = e->n == 0;
    if (*empty)
        return TGL_OK;
    if ((st = tgl__resolve_tensor(b, out_name, out->data, out->dtype, e->ndim, e->shape, out->strides, &e->out)))
        return st;
    for (size_t k = 0; k < e->nin && k < TGL__TEW_MAX_INPUTS; k++)
        if ((st = tgl__resolve_tensor(b, names[k], in[k]->data, in[k]->dtype, e->ndim, e->shape, strides[k], &e->in[k])))
            return st;
    if ((st = tgl__check_unique(b, out_name, e->ndim, e->shape, out->strides)))
        return st;
    size_t out_bytes = e->out.span * tgl_dtype_size(e->out.dtype);
    for (size_t k = 0; k < e->nin && k < TGL__TEW_MAX_INPUTS; k++) {
        size_t in_bytes = e->in[k].span * tgl_dtype_size(e->in[k].dtype);
        if (!tgl__overlaps(e->out.view, out_bytes, e->in[k].view, in_bytes))
            continue;
        if (!same_elements(e, k))
            return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT,
                             "%s overlaps %s (bytes %zu..%zu and %zu..%zu of one allocation) without being the "
                             "same elements",
                             out_name, names[k], e->out.view.offset, e->out.view.offset + out_bytes - 1,
                             e->in[k].view.offset, e->in[k].view.offset + in_bytes - 1);
        if (e->op == TGL__TEW_COPY)
            e->in_place = 1;
    }
    return TGL_OK;
}

static tgl_status run(tgl_backend *b, const tgl__tew *e, const char *fn)
{
    if (!b->vt->tensor_ewise)
        return tgl__unsupported(b, fn);
    return tgl__leave(b, b->vt->tensor_ewise(b, e));
}

TGL_API tgl_status tgl_copy(tgl_backend *b, const tgl_tensor *dst, const tgl_tensor *src)
{
    if (tgl__hooked(b))
        return TGL__HOOK(COPY);
    tgl_status st = tgl__enter(b);
    tgl__tew e = {.op = TGL__TEW_COPY, .nin = 1};
    const tgl_tensor *in[TGL__TEW_MAX_INPUTS] = {src};
    static const char *const names[TGL__TEW_MAX_INPUTS] = {"src"};
    int empty = 0;
    if (st || (st = check_tew(b, TGL__FN_COPY, dst, "dst", in, names, &e, &empty)) || empty)
        return st;
    return run(b, &e, "tgl_copy");
}

TGL_API tgl_status tgl_compare(tgl_backend *b, tgl_compare_op op, const tgl_tensor *a, const tgl_tensor *bb,
                               const tgl_tensor *out)
{
    if (tgl__hooked(b))
        return TGL__HOOK(COMPARE);
    tgl_status st = tgl__enter(b);
    tgl__tew e = {.op = TGL__TEW_COMPARE, .compare = op, .nin = 2};
    const tgl_tensor *in[TGL__TEW_MAX_INPUTS] = {a, bb};
    static const char *const names[TGL__TEW_MAX_INPUTS] = {"a", "bb"};
    int empty = 0;
    if (st)
        return st;
    if ((unsigned)op >= TGL_COMPARE_COUNT)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "op: %d is not a tgl_compare_op", (int)op);
    if ((st = check_tew(b, TGL__FN_COMPARE, out, "out", in, names, &e, &empty)) || empty)
        return st;
    return run(b, &e, "tgl_compare");
}

TGL_API tgl_status tgl_where(tgl_backend *b, const tgl_tensor *cond, const tgl_tensor *a, const tgl_tensor *bb,
                             const tgl_tensor *out)
{
    if (tgl__hooked(b))
        return TGL__HOOK(WHERE);
    tgl_status st = tgl__enter(b);
    tgl__tew e = {.op = TGL__TEW_WHERE, .nin = 3};
    const tgl_tensor *in[3] = {cond, a, bb};
    static const char *const names[3] = {"cond", "a", "bb"};
    int empty = 0;
    if (st || (st = check_tew(b, TGL__FN_WHERE, out, "out", in, names, &e, &empty)) || empty)
        return st;
    return run(b, &e, "tgl_where");
}

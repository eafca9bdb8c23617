/* tgl_reduce, tgl_argmax, tgl_argmin: shape checks, then the backend sees [outer, len, inner]. */
#include "trace.h"
#include "validate.h"

#define F32 sizeof(float)

typedef struct reduce_shape {
    size_t outer, len, inner, total, outputs;
} reduce_shape;

static tgl_status check_shape(tgl_backend *b, const size_t *shape, size_t ndim, size_t axis,
                              reduce_shape *r)
{
    if (!shape)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "shape: NULL");
    if (ndim < 1 || ndim > TGL_MAX_DIMS)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "ndim: %zu is not in 1..%d", ndim, TGL_MAX_DIMS);
    if (axis >= ndim)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "axis: %zu is not below ndim %zu", axis, ndim);
    r->outer = 1;
    r->inner = 1;
    r->len = shape[axis];
    for (size_t d = 0; d < ndim; d++) {
        if (d == axis)
            continue;
        size_t *side = d < axis ? &r->outer : &r->inner;
        tgl_status st = tgl__mul(b, "shape", *side, shape[d], side);
        if (st)
            return st;
    }
    tgl_status st = tgl__mul(b, "shape", r->outer, r->inner, &r->outputs);
    if (st || (st = tgl__mul(b, "shape", r->outputs, r->len, &r->total)) ||
        (st = tgl__mul(b, "shape", r->total, F32, &(size_t){0})))
        return st;
    return TGL_OK;
}

/* Resolves in and out (out: `out_elem` bytes per output) and checks they do not overlap. */
static tgl_status resolve_io(tgl_backend *b, const reduce_shape *r, tgl_ptr in, tgl_ptr out,
                             size_t out_elem, tgl__view *vi, tgl__view *vo)
{
    tgl_status st = tgl__resolve_array(b, "out", out, r->outputs, out_elem, vo);
    if (st)
        return st;
    if (r->total == 0) { /* nothing is read: in is not examined */
        *vi = (tgl__view){0};
        return TGL_OK;
    }
    if ((st = tgl__resolve_array(b, "in", in, r->total, F32, vi)))
        return st;
    return tgl__check_disjoint(b, "in", *vi, r->total * F32, *vo, r->outputs * out_elem);
}

TGL_API tgl_status tgl_reduce(tgl_backend *b, tgl_reduce_op op, tgl_ptr in, tgl_ptr out,
                              const size_t *shape, size_t ndim, size_t axis)
{
    if (tgl__hooked(b))
        return TGL__HOOK(REDUCE);
    tgl_status st = tgl__enter(b);
    reduce_shape r = {0};
    tgl__view vi, vo;
    if (st)
        return st;
    if ((unsigned)op >= TGL_REDUCE_COUNT)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "op: %d is not a tgl_reduce_op", (int)op);
    if (op > TGL_REDUCE_PROD)
        return tgl__fail(b, TGL_ERR_UNSUPPORTED, "op: %s writes bool; it is tgl_reduce_t's", tgl_reduce_name(op));
    if ((st = check_shape(b, shape, ndim, axis, &r)))
        return st;
    if (r.outputs == 0)
        return TGL_OK;
    if (r.len == 0 && (op == TGL_REDUCE_MAX || op == TGL_REDUCE_MIN))
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "shape[%zu] is 0: an empty axis has no %s", axis,
                         tgl_reduce_name(op));
    if ((st = resolve_io(b, &r, in, out, F32, &vi, &vo)))
        return st;
    if (!b->vt->reduce)
        return tgl__unsupported(b, "tgl_reduce");
    return tgl__leave(b, b->vt->reduce(b, op, vi, vo, r.outer, r.len, r.inner));
}

static tgl_status arg_reduce(tgl_backend *b, int want_max, tgl_ptr in, tgl_ptr out, const size_t *shape,
                             size_t ndim, size_t axis)
{
    const char *fn = want_max ? "tgl_argmax" : "tgl_argmin";
    tgl_status st = tgl__enter(b);
    reduce_shape r = {0};
    tgl__view vi, vo;
    if (st || (st = check_shape(b, shape, ndim, axis, &r)))
        return st;
    if (r.outputs == 0)
        return TGL_OK;
    if (r.len == 0 || r.len > INT32_MAX)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "%s: shape[%zu] = %zu is not in 1..2^31-1", fn, axis,
                         r.len);
    if ((st = resolve_io(b, &r, in, out, sizeof(int32_t), &vi, &vo)))
        return st;
    if (!b->vt->arg_reduce)
        return tgl__unsupported(b, fn);
    return tgl__leave(b, b->vt->arg_reduce(b, want_max, vi, vo, r.outer, r.len, r.inner));
}

TGL_API tgl_status tgl_argmax(tgl_backend *b, tgl_ptr in, tgl_ptr out, const size_t *shape, size_t ndim,
                              size_t axis)
{
    if (tgl__hooked(b))
        return TGL__HOOK(ARGMAX);
    return arg_reduce(b, 1, in, out, shape, ndim, axis);
}

TGL_API tgl_status tgl_argmin(tgl_backend *b, tgl_ptr in, tgl_ptr out, const size_t *shape, size_t ndim,
                              size_t axis)
{
    if (tgl__hooked(b))
        return TGL__HOOK(ARGMIN);
    return arg_reduce(b, 0, in, out, shape, ndim, axis);
}

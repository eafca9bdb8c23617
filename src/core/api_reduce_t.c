/* tgl_reduce_t, tgl_argmax_t and tgl_argmin_t: one dim of a descriptor reduced into another
 * (tensorgl.h). The checks turn the two descriptors into a tgl__rdt for vtable->reduce_t. */
#include "trace.h"
#include "validate.h"

/* The dtypes op takes for in (a TGL__DT mask): ANY and ALL every one, MEAN the floats, the
 * others the floats and i32. */
static unsigned op_dtypes(tgl_reduce_op op)
{
    unsigned floats = TGL__DT(F32) | TGL__DT(F16) | TGL__DT(BF16);
    return op == TGL_REDUCE_ANY || op == TGL_REDUCE_ALL ? floats | TGL__DT(I32) | TGL__DT(BOOL)
           : op == TGL_REDUCE_MEAN                      ? floats
                                                        : floats | TGL__DT(I32);
}

/* out's shape: in's without dim axis, or with it as 1. Gives out's strides over in's other dims. */
static tgl_status check_out_shape(tgl_backend *b, const tgl_tensor *in, size_t axis, const tgl_tensor *out,
                                  int64_t *out_strides)
{
    int keep = out->ndim == in->ndim;
    if (!keep && out->ndim + 1 != in->ndim)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "out: %zu dims where in's %zu without the axis (or with it as 1) "
                                                      "are wanted",
                         out->ndim, in->ndim);
    for (size_t d = 0, o = 0; d < in->ndim; d++) {
        if (d == axis && !keep)
            continue;
        size_t want = d == axis ? 1 : in->shape[d];
        if (out->shape[o] != want)
            return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "out: dim %zu is %zu where %zu is wanted (in's dim %zu%s)", o,
                             out->shape[o], want, d, d == axis ? ", the reduced one, kept as 1" : "");
        o++;
    }
    for (size_t d = 0, k = 0; d < out->ndim; d++)
        if (!(keep && d == axis))
            out_strides[k++] = out->strides[d];
    return TGL_OK;
}

/* The checks all three ops share, in order, then the vtable call. op is a tgl__rdt op; fname
 * names the public function in messages. */
static tgl_status reduce_common(tgl_backend *b, const char *fname, unsigned op, const tgl_tensor *in, size_t axis,
                                const tgl_tensor *out, tgl__fn fn)
{
    int arg = op == TGL__RDT_ARGMAX || op == TGL__RDT_ARGMIN;
    unsigned dtypes = tgl__fn_dtypes(fn);
    size_t n_in, n_out;
    tgl_status st;
    if ((st = tgl__tensor_shape(b, fname, "in", in, dtypes, &n_in)) ||
        (st = tgl__tensor_shape(b, fname, "out", out, dtypes, &n_out)))
        return st;
    if (in->ndim == 0)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "in: a 0-d tensor has no axis to reduce");
    if (axis >= in->ndim)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "axis: %zu is not below in's ndim %zu", axis, in->ndim);
    const char *name = arg ? (op == TGL__RDT_ARGMAX ? "argmax" : "argmin") : tgl_reduce_name((tgl_reduce_op)op);
    if (!arg && !(op_dtypes((tgl_reduce_op)op) & (1u << in->dtype)))
        return tgl__fail(b, TGL_ERR_UNSUPPORTED, "in: tgl_reduce_t's %s does not take %s", name,
                         tgl_dtype_name(in->dtype));
    tgl_dtype want = arg                                               ? TGL_DTYPE_I32
                     : op == TGL_REDUCE_ANY || op == TGL_REDUCE_ALL ? TGL_DTYPE_BOOL
                                                                      : in->dtype;
    if (out->dtype != want)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "out: %s of %s writes %s, not %s", name, tgl_dtype_name(in->dtype),
                         tgl_dtype_name(want), tgl_dtype_name(out->dtype));
    tgl__rdt r = {.op = op, .ndim = in->ndim - 1, .n_out = n_out, .len = in->shape[axis],
                  .in_step = in->strides[axis]};
    int64_t in_strides[TGL_MAX_DIMS] = {0}, out_strides[TGL_MAX_DIMS] = {0};
    if ((st = check_out_shape(b, in, axis, out, out_strides)))
        return st;
    for (size_t d = 0, k = 0; d < in->ndim; d++)
        if (d != axis) {
            r.shape[k] = in->shape[d];
            in_strides[k++] = in->strides[d];
        }
    if (n_out == 0)
        return TGL_OK;
    if (r.len == 0 && (arg || op == TGL_REDUCE_MAX || op == TGL_REDUCE_MIN))
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "in: dim %zu (the axis) is empty: an empty axis has no %s", axis,
                         name);
    if (arg && r.len > (size_t)INT32_MAX)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "in: dim %zu (the axis) holds %zu elements; an i32 index reaches "
                                                      "2^31 - 1",
                         axis, r.len);
    if ((st = tgl__resolve_tensor(b, "out", out->data, out->dtype, r.ndim, r.shape, out_strides, &r.out)) ||
        (st = tgl__check_unique(b, "out", r.ndim, r.shape, out_strides)))
        return st;
    if (r.len) {
        if ((st = tgl__resolve_tensor(b, "in", in->data, in->dtype, in->ndim, in->shape, in->strides, &r.in)))
            return st;
        size_t in_bytes = r.in.span * tgl_dtype_size(in->dtype), out_bytes = r.out.span * tgl_dtype_size(out->dtype);
        if (tgl__overlaps(r.in.view, in_bytes, r.out.view, out_bytes))
            return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "out overlaps in (bytes %zu..%zu and %zu..%zu of one allocation)",
                             r.out.view.offset, r.out.view.offset + out_bytes - 1, r.in.view.offset,
                             r.in.view.offset + in_bytes - 1);
        for (size_t d = 0; d < r.ndim; d++)
            r.in.strides[d] = in_strides[d];
        for (size_t d = r.ndim; d < TGL_MAX_DIMS; d++)
            r.in.strides[d] = 0;
    }
    if (!b->vt->reduce_t)
        return tgl__unsupported(b, fname);
    return b->vt->reduce_t(b, &r);
}

TGL_API tgl_status tgl_reduce_t(tgl_backend *b, tgl_reduce_op op, const tgl_tensor *in, size_t axis,
                                const tgl_tensor *out)
{
    if (tgl__hooked(b))
        return TGL__HOOK(REDUCE_T);
    tgl_status st = tgl__enter(b);
    if (st)
        return st;
    if ((unsigned)op >= TGL_REDUCE_COUNT)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "op: %d is not a tgl_reduce_op", (int)op);
    return tgl__leave(b, reduce_common(b, "tgl_reduce_t", (unsigned)op, in, axis, out, TGL__FN_REDUCE_T));
}

TGL_API tgl_status tgl_argmax_t(tgl_backend *b, const tgl_tensor *in, size_t axis, const tgl_tensor *out)
{
    if (tgl__hooked(b))
        return TGL__HOOK(ARGMAX_T);
    tgl_status st = tgl__enter(b);
    if (st)
        return st;
    return tgl__leave(b, reduce_common(b, "tgl_argmax_t", TGL__RDT_ARGMAX, in, axis, out, TGL__FN_ARGMAX_T));
}

TGL_API tgl_status tgl_argmin_t(tgl_backend *b, const tgl_tensor *in, size_t axis, const tgl_tensor *out)
{
    if (tgl__hooked(b))
        return TGL__HOOK(ARGMIN_T);
    tgl_status st = tgl__enter(b);
    if (st)
        return st;
    return tgl__leave(b, reduce_common(b, "tgl_argmin_t", TGL__RDT_ARGMIN, in, axis, out, TGL__FN_ARGMIN_T));
}

/* tgl_cumsum, tgl_cumprod, tgl_cummax, tgl_cummin: scans along one dim of a descriptor
 * (tensorgl.h). The checks turn the descriptors into a tgl__rdt of a scan for vtable->reduce_t,
 * whose drivers run the row-wise ops; cummax and cummin add the optional indices as r.idx. */
#include "trace.h"
#include "validate.h"

#define FLOATS (TGL__DT(F32) | TGL__DT(F16) | TGL__DT(BF16))

/* t has in's shape (arg names it in messages). */
static tgl_status same_shape(tgl_backend *b, const char *arg, const tgl_tensor *in, const tgl_tensor *t)
{
    if (t->ndim != in->ndim)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "%s: %zu dims where in has %zu", arg, t->ndim, in->ndim);
    for (size_t d = 0; d < in->ndim; d++)
        if (t->shape[d] != in->shape[d])
            return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "%s: dim %zu is %zu where in's is %zu", arg, d, t->shape[d],
                             in->shape[d]);
    return TGL_OK;
}

/* out's dtype for in's: the sums and products count bool and i32 in i32 and write floats into
 * any float dtype; cummax and cummin keep in's. */
static tgl_status check_out_dtype(tgl_backend *b, unsigned op, tgl_dtype in, tgl_dtype out)
{
    int arith = op == TGL__RDT_CUMSUM || op == TGL__RDT_CUMPROD;
    int in_float = ((1u << in) & FLOATS) != 0, out_float = ((1u << out) & FLOATS) != 0;
    if (arith && in_float && !out_float)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "out: %s; a float dtype (f32, f16, bf16) is wanted for %s in",
                         tgl_dtype_name(out), tgl_dtype_name(in));
    if (arith && !in_float && out != TGL_DTYPE_I32)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "out: %s; i32 is wanted for %s in", tgl_dtype_name(out),
                         tgl_dtype_name(in));
    if (!arith && out != in)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "out: %s; in's dtype (%s) is wanted", tgl_dtype_name(out),
                         tgl_dtype_name(in));
    return TGL_OK;
}

/* The checks the four share, in order, then the vtable call. */
static tgl_status scan_common(tgl_backend *b, tgl__fn fn, const char *fname, unsigned op, const tgl_tensor *in,
                              size_t axis, const tgl_tensor *out, const tgl_tensor *indices)
{
    unsigned dtypes = tgl__fn_dtypes(fn);
    size_t n_in, n_out, n_idx;
    tgl_status st;
    if ((st = tgl__tensor_shape(b, fname, "in", in, dtypes, &n_in)) ||
        (st = tgl__tensor_shape(b, fname, "out", out, TGL__DT_DATA, &n_out)) ||
        (indices && (st = tgl__tensor_shape(b, fname, "indices", indices, TGL__DT_DATA, &n_idx))))
        return st;
    if (in->ndim == 0)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "in: a 0-d tensor has no axis to scan");
    if (axis >= in->ndim)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "axis: %zu is not below in's ndim %zu", axis, in->ndim);
    if ((st = same_shape(b, "out", in, out)) || (indices && (st = same_shape(b, "indices", in, indices))) ||
        (st = check_out_dtype(b, op, in->dtype, out->dtype)))
        return st;
    if (indices && indices->dtype != TGL_DTYPE_I32)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "indices: %s; i32 is wanted", tgl_dtype_name(indices->dtype));
    if (in->shape[axis] > (size_t)INT32_MAX)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "in: an axis of %zu elements (an i32 index reaches 2^31 - 1)",
                         in->shape[axis]);
    if (n_in == 0)
        return TGL_OK;
    tgl__rdt r = {.op = op, .ndim = in->ndim - 1, .n_out = 1, .len = in->shape[axis], .in_step = in->strides[axis],
                  .out_step = out->strides[axis], .idx_step = indices ? indices->strides[axis] : 0,
                  .has_idx = indices != NULL};
    int64_t in_strides[TGL_MAX_DIMS] = {0}, out_strides[TGL_MAX_DIMS] = {0}, idx_strides[TGL_MAX_DIMS] = {0};
    for (size_t d = 0, k = 0; d < in->ndim; d++)
        if (d != axis) {
            r.shape[k] = in->shape[d];
            r.n_out *= in->shape[d];
            in_strides[k] = in->strides[d];
            idx_strides[k] = indices ? indices->strides[d] : 0;
            out_strides[k++] = out->strides[d];
        }
    if ((st = tgl__resolve_tensor(b, "in", in->data, in->dtype, in->ndim, in->shape, in->strides, &r.in)) ||
        (st = tgl__resolve_tensor(b, "out", out->data, out->dtype, out->ndim, out->shape, out->strides, &r.out)) ||
        (st = tgl__check_unique(b, "out", out->ndim, out->shape, out->strides)))
        return st;
    if (indices &&
        ((st = tgl__resolve_tensor(b, "indices", indices->data, indices->dtype, indices->ndim, indices->shape,
                                   indices->strides, &r.idx)) ||
         (st = tgl__check_unique(b, "indices", indices->ndim, indices->shape, indices->strides))))
        return st;
    size_t in_bytes = r.in.span * tgl_dtype_size(in->dtype), out_bytes = r.out.span * tgl_dtype_size(out->dtype);
    if (!tgl__same_tensor(in, out) && tgl__overlaps(r.in.view, in_bytes, r.out.view, out_bytes))
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "out overlaps in without being in itself");
    if (indices) {
        size_t idx_bytes = r.idx.span * 4;
        int on_in = tgl__overlaps(r.idx.view, idx_bytes, r.in.view, in_bytes);
        if (on_in || tgl__overlaps(r.idx.view, idx_bytes, r.out.view, out_bytes))
            return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "indices overlaps %s", on_in ? "in" : "out");
    }
    for (size_t d = 0; d < TGL_MAX_DIMS; d++) {
        r.in.strides[d] = d < r.ndim ? in_strides[d] : 0;
        r.out.strides[d] = d < r.ndim ? out_strides[d] : 0;
        r.idx.strides[d] = d < r.ndim ? idx_strides[d] : 0;
    }
    if (!b->vt->reduce_t)
        return tgl__unsupported(b, fname);
    return b->vt->reduce_t(b, &r);
}

TGL_API tgl_status tgl_cumsum(tgl_backend *b, const tgl_tensor *in, size_t axis, const tgl_tensor *out)
{
    if (tgl__hooked(b))
        return TGL__HOOK(CUMSUM);
    tgl_status st = tgl__enter(b);
    return st ? st
              : tgl__leave(b, scan_common(b, TGL__FN_CUMSUM, "tgl_cumsum", TGL__RDT_CUMSUM, in, axis, out, NULL));
}

TGL_API tgl_status tgl_cumprod(tgl_backend *b, const tgl_tensor *in, size_t axis, const tgl_tensor *out)
{
    if (tgl__hooked(b))
        return TGL__HOOK(CUMPROD);
    tgl_status st = tgl__enter(b);
    return st ? st
              : tgl__leave(b, scan_common(b, TGL__FN_CUMPROD, "tgl_cumprod", TGL__RDT_CUMPROD, in, axis, out, NULL));
}

TGL_API tgl_status tgl_cummax(tgl_backend *b, const tgl_tensor *in, size_t axis, const tgl_tensor *out,
                              const tgl_tensor *indices)
{
    if (tgl__hooked(b))
        return TGL__HOOK(CUMMAX);
    tgl_status st = tgl__enter(b);
    return st ? st
              : tgl__leave(b, scan_common(b, TGL__FN_CUMMAX, "tgl_cummax", TGL__RDT_CUMMAX, in, axis, out, indices));
}

TGL_API tgl_status tgl_cummin(tgl_backend *b, const tgl_tensor *in, size_t axis, const tgl_tensor *out,
                              const tgl_tensor *indices)
{
    if (tgl__hooked(b))
        return TGL__HOOK(CUMMIN);
    tgl_status st = tgl__enter(b);
    return st ? st
              : tgl__leave(b, scan_common(b, TGL__FN_CUMMIN, "tgl_cummin", TGL__RDT_CUMMIN, in, axis, out, indices));
}

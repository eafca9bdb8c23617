/* tgl_softmax_t, tgl_log_softmax_t, tgl_rmsnorm_t, tgl_layernorm_t: the row-wise ops over
 * descriptors (tensorgl.h). The checks turn the descriptors into a tgl__rdt of a row-wise op for
 * vtable->reduce_t, whose drivers run every line op. */
#include "trace.h"
#include "validate.h"

#include <math.h>

/* An optional 1-D operand of len elements (any float dtype, any stride) into v, sharing no byte
 * with out's view (out_bytes from it). */
static tgl_status resolve_param(tgl_backend *b, const char *fname, const char *arg, const tgl_tensor *t, size_t len,
                                const tgl__rdt *r, int *has, tgl__tensor_view *v)
{
    *has = 0;
    if (!t)
        return TGL_OK;
    size_t n;
    tgl_status st = tgl__tensor_shape(b, fname, arg, t, TGL__DT_FLOATS, &n);
    if (st)
        return st;
    if (t->ndim != 1 || t->shape[0] != len)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "%s: a 1-D tensor of %zu elements (the normalized dim) is wanted, "
                                                      "not %zu dims of %zu elements",
                         arg, len, t->ndim, n);
    if ((st = tgl__resolve_tensor(b, arg, t->data, t->dtype, 1, t->shape, t->strides, v)))
        return st;
    size_t bytes = v->span * tgl_dtype_size(t->dtype), out_bytes = r->out.span * tgl_dtype_size(r->out.dtype);
    if (tgl__overlaps(v->view, bytes, r->out.view, out_bytes))
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "out overlaps %s", arg);
    *has = 1;
    return TGL_OK;
}

/* The checks the four share, then the vtable call. The norms run along the last dim. */
static tgl_status rows_common(tgl_backend *b, const char *fname, unsigned op, const tgl_tensor *in, size_t axis,
                              const tgl_tensor *w, const tgl_tensor *bias, const tgl_tensor *out, float eps)
{
    size_t n_in, n_out;
    tgl_status st;
    if ((st = tgl__tensor_shape(b, fname, "in", in, TGL__DT_FLOATS, &n_in)) ||
        (st = tgl__tensor_shape(b, fname, "out", out, TGL__DT_FLOATS, &n_out)))
        return st;
    if (in->ndim == 0)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "in: a 0-d tensor has no dim to normalize");
    int norm = op == TGL__RDT_RMSNORM || op == TGL__RDT_LAYERNORM;
    if (norm)
        axis = in->ndim - 1;
    if (axis >= in->ndim)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "axis: %zu is not below in's ndim %zu", axis, in->ndim);
    if (out->ndim != in->ndim)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "out: %zu dims where in has %zu", out->ndim, in->ndim);
    for (size_t d = 0; d < in->ndim; d++)
        if (out->shape[d] != in->shape[d])
            return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "out: dim %zu is %zu where in's is %zu", d, out->shape[d],
                             in->shape[d]);
    if (norm && !(isfinite(eps) && eps >= 0.0f))
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "eps: %g is not finite and >= 0", (double)eps);
    if (w && bias && w->dtype != bias->dtype)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "gamma and beta: %s and %s; one dtype is wanted",
                         tgl_dtype_name(w->dtype), tgl_dtype_name(bias->dtype));
    tgl__rdt r = {.op = op, .ndim = in->ndim - 1, .n_out = 1, .len = in->shape[axis], .in_step = in->strides[axis],
                  .out_step = out->strides[axis], .eps = eps};
    int64_t in_strides[TGL_MAX_DIMS] = {0}, out_strides[TGL_MAX_DIMS] = {0};
    for (size_t d = 0, k = 0; d < in->ndim; d++)
        if (d != axis) {
            r.shape[k] = in->shape[d];
            r.n_out *= in->shape[d];
            in_strides[k] = in->strides[d];
            out_strides[k++] = out->strides[d];
        }
    if (n_in == 0)
        return TGL_OK;
    if ((st = tgl__resolve_tensor(b, "in", in->data, in->dtype, in->ndim, in->shape, in->strides, &r.in)) ||
        (st = tgl__resolve_tensor(b, "out", out->data, out->dtype, out->ndim, out->shape, out->strides, &r.out)) ||
        (st = tgl__check_unique(b, "out", out->ndim, out->shape, out->strides)))
        return st;
    size_t in_bytes = r.in.span * tgl_dtype_size(in->dtype), out_bytes = r.out.span * tgl_dtype_size(out->dtype);
    if (!tgl__same_tensor(in, out) && tgl__overlaps(r.in.view, in_bytes, r.out.view, out_bytes))
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "out overlaps in (bytes %zu..%zu and %zu..%zu of one allocation) "
                                                      "without being in itself",
                         r.out.view.offset, r.out.view.offset + out_bytes - 1, r.in.view.offset,
                         r.in.view.offset + in_bytes - 1);
    if ((st = resolve_param(b, fname, op == TGL__RDT_LAYERNORM ? "gamma" : "weight", w, r.len, &r, &r.has_w, &r.w)) ||
        (st = resolve_param(b, fname, "beta", bias, r.len, &r, &r.has_bias, &r.bias)))
        return st;
    for (size_t d = 0; d < TGL_MAX_DIMS; d++) {
        r.in.strides[d] = d < r.ndim ? in_strides[d] : 0;
        r.out.strides[d] = d < r.ndim ? out_strides[d] : 0;
    }
    if (!b->vt->reduce_t)
        return tgl__unsupported(b, fname);
    return b->vt->reduce_t(b, &r);
}

TGL_API tgl_status tgl_softmax_t(tgl_backend *b, const tgl_tensor *in, size_t axis, const tgl_tensor *out)
{
    if (tgl__hooked(b))
        return TGL__HOOK(SOFTMAX_T);
    tgl_status st = tgl__enter(b);
    return st ? st : tgl__leave(b, rows_common(b, "tgl_softmax_t", TGL__RDT_SOFTMAX, in, axis, NULL, NULL, out, 0.0f));
}

TGL_API tgl_status tgl_log_softmax_t(tgl_backend *b, const tgl_tensor *in, size_t axis, const tgl_tensor *out)
{
    if (tgl__hooked(b))
        return TGL__HOOK(LOG_SOFTMAX_T);
    tgl_status st = tgl__enter(b);
    return st ? st
              : tgl__leave(b, rows_common(b, "tgl_log_softmax_t", TGL__RDT_LOG_SOFTMAX, in, axis, NULL, NULL, out, 0.0f));
}

TGL_API tgl_status tgl_rmsnorm_t(tgl_backend *b, const tgl_tensor *in, const tgl_tensor *weight,
                                 const tgl_tensor *out, float eps)
{
    if (tgl__hooked(b))
        return TGL__HOOK(RMSNORM_T);
    tgl_status st = tgl__enter(b);
    return st ? st : tgl__leave(b, rows_common(b, "tgl_rmsnorm_t", TGL__RDT_RMSNORM, in, 0, weight, NULL, out, eps));
}

TGL_API tgl_status tgl_layernorm_t(tgl_backend *b, const tgl_tensor *in, const tgl_tensor *gamma,
                                   const tgl_tensor *beta, const tgl_tensor *out, float eps)
{
    if (tgl__hooked(b))
        return TGL__HOOK(LAYERNORM_T);
    tgl_status st = tgl__enter(b);
    return st ? st : tgl__leave(b, rows_common(b, "tgl_layernorm_t", TGL__RDT_LAYERNORM, in, 0, gamma, beta, out, eps));
}

/* tgl_sort and tgl_topk (tensorgl.h): the shapes checked, the outputs apart from in and from
 * each other, then the lines described as a tgl__sort over a temporary buffer (the bytes the
 * backend's sort_temp_bytes asks for) and vtable->sort. topk is a sort that writes the first k
 * of each line. */
#include "trace.h"
#include "validate.h"

#define ANY_DTYPE ((1u << TGL_DTYPE_COUNT) - 1u)

static size_t view_bytes(const tgl__tensor_view *v)
{
    return v->span * tgl_dtype_size(v->dtype);
}

/* out (values or indices) of in's shape with k along the axis, reaching each element once,
 * apart from in; resolved into *v. */
static tgl_status check_out(tgl_backend *b, const char *fn, const char *arg, const tgl_tensor *out, tgl_dtype want,
                            const tgl_tensor *in, size_t axis, size_t k, const tgl__tensor_view *in_view,
                            tgl__tensor_view *v)
{
    size_t n;
    tgl_status st = tgl__tensor_shape(b, fn, arg, out, ANY_DTYPE, &n);
    if (st)
        return st;
    if (out->dtype != want)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "%s: %s; %s is wanted", arg, tgl_dtype_name(out->dtype),
                         tgl_dtype_name(want));
    if (out->ndim != in->ndim)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "%s: %zu dims, in's %zu", arg, out->ndim, in->ndim);
    for (size_t d = 0; d < in->ndim; d++) {
        size_t e = d == axis ? k : in->shape[d];
        if (out->shape[d] != e)
            return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "%s: extent %zu along dim %zu, not %zu", arg, out->shape[d], d,
                             e);
    }
    if (n == 0)
        return TGL_OK;
    tgl_tensor o = tgl__one_dim(out);
    if ((st = tgl__resolve_tensor(b, arg, o.data, o.dtype, o.ndim, o.shape, o.strides, v)) ||
        (st = tgl__check_unique(b, arg, o.ndim, o.shape, o.strides)))
        return st;
    return in_view->view.buf ? tgl__check_disjoint(b, "in", in_view->view, view_bytes(in_view), v->view, view_bytes(v))
                             : TGL_OK;
}

static tgl_status sort_lines(tgl_backend *b, const char *fn, const tgl_tensor *in, size_t axis, size_t k,
                             int descending, const tgl_tensor *values, const tgl_tensor *indices)
{
    size_t n;
    tgl_status st;
    if (!in)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "in: NULL");
    if (!values && !indices)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "values and indices: both NULL (nothing to write)");
    if ((st = tgl__tensor_shape(b, fn, "in", in, TGL__DT_DATA, &n)))
        return st;
    if (axis >= (in->ndim ? in->ndim : 1))
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "axis: %zu of a %zu-d in", axis, in->ndim);
    tgl_tensor x = tgl__one_dim(in);
    size_t len = x.shape[axis];
    if (k > len)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "k: %zu, past the line's %zu elements", k, len);
    if (!b->vt->sort)
        return tgl__unsupported(b, fn);
    tgl__sort s = {.ndim = x.ndim, .axis = axis, .len = len, .k = k, .descending = descending != 0,
                   .has_values = values != NULL, .has_indices = indices != NULL, .n_lines = 1};
    if (n && (st = tgl__resolve_tensor(b, "in", x.data, x.dtype, x.ndim, x.shape, x.strides, &s.in)))
        return st;
    if ((values && (st = check_out(b, fn, "values", values, in->dtype, in, axis, k, &s.in, &s.values))) ||
        (indices && (st = check_out(b, fn, "indices", indices, TGL_DTYPE_I32, in, axis, k, &s.in, &s.indices))))
        return st;
    if (n == 0 || k == 0)
        return TGL_OK;
    if (values && indices &&
        (st = tgl__check_disjoint(b, "values", s.values.view, view_bytes(&s.values), s.indices.view,
                                  view_bytes(&s.indices))))
        return st;
    if (len > (size_t)INT32_MAX)
        return tgl__fail(b, TGL_ERR_UNSUPPORTED, "%s: a line of %zu elements (positions are i32)", fn, len);
    for (size_t d = 0; d < s.ndim; d++) {
        s.shape[d] = d == axis ? 1 : x.shape[d];
        s.n_lines *= s.shape[d];
    }
    s.in_step = x.strides[axis];
    s.v_step = values ? s.values.strides[axis] : 0;
    s.i_step = indices ? s.indices.strides[axis] : 0;
    uint64_t want = b->vt->sort_temp_bytes(b, &s);
    if (want > SIZE_MAX)
        return tgl__fail(b, TGL_ERR_OUT_OF_MEMORY, "%s: the temporary buffer: past this machine's sizes", fn);
    size_t bytes = (size_t)want;
    void *buf = NULL;
    if (bytes && (st = tgl__temp_create(b, fn, bytes, &buf)))
        return st;
    s.temp = (tgl__view){buf, 0};
    st = b->vt->sort(b, &s);
    if (buf)
        tgl__temp_destroy(b, buf, bytes);
    return tgl__leave(b, st);
}

TGL_API tgl_status tgl_sort(tgl_backend *b, const tgl_tensor *in, size_t axis, int descending, const tgl_tensor *values,
                            const tgl_tensor *indices)
{
    if (tgl__hooked(b))
        return TGL__HOOK(SORT);
    tgl_status st = tgl__enter(b);
    if (st)
        return st;
    size_t len = in && in->ndim <= TGL_MAX_DIMS && axis < in->ndim ? in->shape[axis] : 1;
    return sort_lines(b, "tgl_sort", in, axis, len, descending, values, indices);
}

TGL_API tgl_status tgl_topk(tgl_backend *b, const tgl_tensor *in, size_t axis, size_t k, int largest,
                            const tgl_tensor *values, const tgl_tensor *indices)
{
    if (tgl__hooked(b))
        return TGL__HOOK(TOPK);
    tgl_status st = tgl__enter(b);
    return st ? st : sort_lines(b, "tgl_topk", in, axis, k, largest, values, indices);
}

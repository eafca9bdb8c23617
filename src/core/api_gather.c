/* tgl_gather and tgl_index_select (tensorgl.h): the shapes checked, then in, index and out whole
 * (tgl__check_apart), then vtable->gather: the indices checked on the device, then, only when
 * all are in range, one pass of the descriptor element-wise path: out's index space walks the
 * index and in, whose stride along the axis is 0 there; each element moves along the axis by
 * its index (TGL__TEW_GATHER). index_select is a gather whose index is the
 * 1-D index seen with stride 0 along every other dim. */
#include "trace.h"
#include "validate.h"

#include <stdio.h>

/* "[2,0,5]" of the row-major position pos in shape. */
static const char *position_text(char *buf, size_t size, uint64_t pos, const size_t *shape, size_t ndim)
{
    size_t idx[TGL_MAX_DIMS] = {0};
    for (size_t d = ndim; d-- > 0;) {
        idx[d] = shape[d] ? (size_t)(pos % shape[d]) : 0;
        pos = shape[d] ? pos / shape[d] : 0;
    }
    size_t len = (size_t)snprintf(buf, size, "[");
    for (size_t d = 0; d < ndim && len < size; d++)
        len += (size_t)snprintf(buf + len, size - len, "%s%zu", d ? "," : "", idx[d]);
    if (len < size)
        snprintf(buf + len, size - len, "]");
    return buf;
}

tgl_status tgl__index_check(tgl_backend *b, const tgl_tensor *index, size_t extent, size_t axis, const char *whose,
                            tgl__tew *check)
{
    /* [0, extent) as the kernels compare them, unsigned, below 2^31 */
    *check = (tgl__tew){.op = TGL__TEW_CHECK_INDEX, .nin = 1, .ndim = index->ndim, .n = 1,
                        .value = extent <= (size_t)INT32_MAX ? (uint32_t)extent : (uint32_t)INT32_MAX + 1u};
    for (size_t d = 0; d < check->ndim; d++)
        check->n *= check->shape[d] = index->shape[d];
    tgl_status st = tgl__resolve_tensor(b, "index", index->data, TGL_DTYPE_I32, check->ndim, check->shape,
                                        index->strides, &check->in[0]);
    char at[160];
    if (!st && extent == 0) /* every index is outside [0, 0) */
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "index%s: outside [0, 0), %s's extent along axis %zu",
                         position_text(at, sizeof at, 0, check->shape, check->ndim), whose, axis);
    return st;
}

tgl_status tgl__index_fail(tgl_backend *b, const tgl__tew *check, uint64_t bad_pos, int32_t bad_value, size_t axis,
                           const char *whose)
{
    char at[160];
    size_t extent = check->value > (uint32_t)INT32_MAX ? SIZE_MAX : check->value;
    if (extent == SIZE_MAX)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "index%s: %d is negative",
                         position_text(at, sizeof at, bad_pos, check->shape, check->ndim), (int)bad_value);
    return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "index%s: %d is outside [0, %zu), %s's extent along axis %zu",
                     position_text(at, sizeof at, bad_pos, check->shape, check->ndim), (int)bad_value, extent, whose,
                     axis);
}

/* The checks every gather shares: in and out of one dtype, index i32, axis inside in's dims. */
static tgl_status check_operands(tgl_backend *b, tgl__fn row, const tgl_tensor *in, size_t axis,
                                 const tgl_tensor *index, const tgl_tensor *out)
{
    const char *fn = tgl__fn_name(row);
    size_t n;
    if (!in || !index || !out)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "%s: NULL", !in ? "in" : !index ? "index" : "out");
    tgl_status st = tgl__tensor_shape(b, fn, "in", in, tgl__fn_dtypes(row), &n);
    if (st || (st = tgl__tensor_shape(b, fn, "index", index, TGL__DT(I32) | TGL__DT_DATA, &n)) ||
        (st = tgl__tensor_shape(b, fn, "out", out, tgl__fn_dtypes(row), &n)))
        return st;
    if (index->dtype != TGL_DTYPE_I32)
        return tgl__fail(b, TGL_ERR_UNSUPPORTED, "index: %s takes i32 indices, not %s", fn,
                         tgl_dtype_name(index->dtype));
    if (out->dtype != in->dtype)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "in and out: %s and %s differ (tgl_copy converts first)",
                         tgl_dtype_name(in->dtype), tgl_dtype_name(out->dtype));
    if (axis >= (in->ndim ? in->ndim : 1))
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "axis: %zu of a %zu-d in", axis, in->ndim);
    if (!b->vt->gather)
        return tgl__unsupported(b, fn);
    return TGL_OK;
}

/* Runs out = in gathered along axis by idx (out's shape, an i32 view: index, or index_select's
 * broadcast), after the indices of `check` (a view of the same indices, each once where it can)
 * are in range. in, index and out are checked apart and inside their allocations. */
static tgl_status run_gather(tgl_backend *b, tgl__fn row, const tgl_tensor *in, size_t axis, const tgl_tensor *idx,
                             const tgl_tensor *check_index, const tgl_tensor *out)
{
    tgl_tensor src = *in; /* in over out's index space, still along the axis */
    for (size_t d = 0; d < out->ndim; d++)
        src.shape[d] = out->shape[d];
    src.strides[axis] = 0;
    tgl__tew e = {.op = TGL__TEW_GATHER, .nin = 2, .axis_stride = in->strides[axis], .axis_len = in->shape[axis]};
    const tgl_tensor *ins[TGL__TEW_MAX_INPUTS] = {idx, &src};
    static const char *const names[TGL__TEW_MAX_INPUTS] = {"index", "in"};
    int empty = 0;
    tgl_status st = tgl__check_tew(b, row, out, "out", ins, names, &e, &empty);
    if (st || empty)
        return st;
    size_t extent = in->shape[axis];
    tgl__tew check;
    if ((st = tgl__index_check(b, check_index, extent, axis, "in", &check)))
        return st;
    /* in[1] reaches along the whole axis, which holds every index that passes the check */
    src.shape[axis] = extent;
    src.strides[axis] = in->strides[axis];
    if ((st = tgl__resolve_tensor(b, "in", src.data, src.dtype, e.ndim, src.shape, src.strides, &e.in[1])))
        return st;
    e.in[1].strides[axis] = 0;
    uint64_t bad_pos = UINT64_MAX;
    int32_t bad_value = 0;
    if ((st = tgl__leave(b, b->vt->gather(b, &check, &e, &bad_pos, &bad_value))) || bad_pos == UINT64_MAX)
        return st;
    return tgl__index_fail(b, &check, bad_pos, bad_value, axis, "in");
}

TGL_API tgl_status tgl_gather(tgl_backend *b, const tgl_tensor *in, size_t axis, const tgl_tensor *index,
                              const tgl_tensor *out)
{
    if (tgl__hooked(b))
        return TGL__HOOK(GATHER);
    tgl_status st = tgl__enter(b);
    if (st || (st = check_operands(b, TGL__FN_GATHER, in, axis, index, out)))
        return st;
    if (index->ndim != in->ndim || out->ndim != in->ndim)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "%s: %zu dims, in's %zu (one ndim for all three)",
                         index->ndim != in->ndim ? "index" : "out", index->ndim != in->ndim ? index->ndim : out->ndim,
                         in->ndim);
    for (size_t d = 0; d < in->ndim; d++) {
        if (out->shape[d] != index->shape[d])
            return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "out: extent %zu along dim %zu, index's %zu", out->shape[d],
                             d, index->shape[d]);
        if (d != axis && index->shape[d] > in->shape[d])
            return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "index: extent %zu along dim %zu, past in's %zu",
                             index->shape[d], d, in->shape[d]);
    }
    if (tgl_tensor_numel(out) == 0)
        return TGL_OK;
    const tgl_tensor pair[2] = {*in, *index};
    if ((st = tgl__check_apart(b, "tgl_gather", pair, 2, "in and index", 0, out)))
        return st;
    tgl_tensor x = tgl__one_dim(in), i = tgl__one_dim(index), o = tgl__one_dim(out);
    return run_gather(b, TGL__FN_GATHER, &x, axis, &i, &i, &o);
}

TGL_API tgl_status tgl_index_select(tgl_backend *b, const tgl_tensor *in, size_t axis, const tgl_tensor *index,
                                    const tgl_tensor *out)
{
    if (tgl__hooked(b))
        return TGL__HOOK(INDEX_SELECT);
    tgl_status st = tgl__enter(b);
    if (st || (st = check_operands(b, TGL__FN_INDEX_SELECT, in, axis, index, out)))
        return st;
    if (index->ndim != 1)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "index: %zu dims, not 1", index->ndim);
    if (in->ndim == 0)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "in: 0 dims (index_select picks along a dim)");
    if (out->ndim != in->ndim)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "out: %zu dims, in's %zu", out->ndim, in->ndim);
    for (size_t d = 0; d < in->ndim; d++) {
        size_t want = d == axis ? index->shape[0] : in->shape[d];
        if (out->shape[d] != want)
            return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "out: extent %zu along dim %zu, not %zu (%s)", out->shape[d],
                             d, want, d == axis ? "index's length" : "in's");
    }
    if (tgl_tensor_numel(out) == 0) /* (its indices unread, as tgl_gather's when index is empty) */
        return TGL_OK;
    const tgl_tensor pair[2] = {*in, *index};
    if ((st = tgl__check_apart(b, "tgl_index_select", pair, 2, "in and index", 0, out)))
        return st;
    tgl_tensor idx = *out; /* index along the axis, repeating along every other dim */
    idx.data = index->data;
    idx.dtype = TGL_DTYPE_I32;
    for (size_t d = 0; d < out->ndim; d++)
        idx.strides[d] = d == axis ? index->strides[0] : 0;
    return run_gather(b, TGL__FN_INDEX_SELECT, in, axis, &idx, index, out);
}

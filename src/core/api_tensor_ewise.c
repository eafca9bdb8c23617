/* The element-wise descriptor ops: tgl_copy, tgl_compare, tgl_where, tgl_unary_t, tgl_binary_t,
 * tgl_clamp, tgl_fill_t, tgl_arange, tgl_masked_fill, and tgl_cat as copies into slices of its out (tensorgl.h). One checking path turns their descriptors into a tgl__tew for
 * vtable->tensor_ewise; tgl__flat_tew hands it the flat ops' later unary and binary ops. */
#include "trace.h"
#include "validate.h"
#include "../cpu/cpu_convert.h" /* the element conversions, shared with the CPU backend */

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

/* The row's dtypes are the ones every operand may have; the checks per op narrow them. */
tgl_status tgl__check_tew(tgl_backend *b, tgl__fn row, const tgl_tensor *out, const char *out_name,
                            const tgl_tensor *const *in, const char *const *names, tgl__tew *e, int *empty)
{
    /* op and nin read once: the calls below take pointers into *e */
    const tgl__tew_op op = e->op;
    const size_t nin = e->nin < TGL__TEW_MAX_INPUTS ? e->nin : TGL__TEW_MAX_INPUTS;
    const char *fn = tgl__fn_name(row);
    unsigned dtypes = tgl__fn_dtypes(row);
    size_t n;
    tgl_status st = tgl__tensor_shape(b, fn, out_name, out, dtypes, &e->n);
    for (size_t k = 0; !st && k < nin; k++)
        st = tgl__tensor_shape(b, fn, names[k], in[k], dtypes, &n);
    if (st)
        return st;
    /* the dtypes each op takes, beyond the row's */
    if (op == TGL__TEW_COMPARE) {
        if (in[0]->dtype != in[1]->dtype)
            return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "a and bb: %s and %s differ (tgl_copy one to the other's dtype)",
                             tgl_dtype_name(in[0]->dtype), tgl_dtype_name(in[1]->dtype));
        if (out->dtype != TGL_DTYPE_BOOL)
            return tgl__fail(b, TGL_ERR_UNSUPPORTED, "out: tgl_compare writes bool, not %s", tgl_dtype_name(out->dtype));
    }
    if (op == TGL__TEW_WHERE) {
        if (in[0]->dtype != TGL_DTYPE_BOOL)
            return tgl__fail(b, TGL_ERR_UNSUPPORTED, "cond: tgl_where takes a bool condition, not %s",
                             tgl_dtype_name(in[0]->dtype));
        if (in[1]->dtype != out->dtype || in[2]->dtype != out->dtype)
            return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "a, bb and out: %s, %s and %s are not one dtype",
                             tgl_dtype_name(in[1]->dtype), tgl_dtype_name(in[2]->dtype), tgl_dtype_name(out->dtype));
    }
    if (op == TGL__TEW_UNARY || op == TGL__TEW_BINARY || op == TGL__TEW_CLAMP) {
        int unary = op == TGL__TEW_UNARY, tests = unary && tgl__unary_bool_out((tgl_unary_op)e->sub);
        const char *op_name = unary ? tgl_unary_name((tgl_unary_op)e->sub)
                              : op == TGL__TEW_BINARY ? tgl_binary_name((tgl_binary_op)e->sub) : "clamp";
        if (tests && out->dtype != TGL_DTYPE_BOOL)
            return tgl__fail(b, TGL_ERR_UNSUPPORTED, "%s: %s writes bool, not %s", out_name, op_name,
                             tgl_dtype_name(out->dtype));
        for (size_t k = 0; k < nin && !tests; k++)
            if (in[k]->dtype != out->dtype)
                return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "%s and %s: %s and %s differ (tgl_copy converts first)",
                                 names[k], out_name, tgl_dtype_name(in[k]->dtype), tgl_dtype_name(out->dtype));
        unsigned takes = unary ? tgl__unary_dtypes((tgl_unary_op)e->sub)
                         : op == TGL__TEW_BINARY ? tgl__binary_dtypes((tgl_binary_op)e->sub) : dtypes;
        if (!(takes & (1u << in[0]->dtype)))
            return tgl__fail(b, TGL_ERR_UNSUPPORTED, "%s: %s does not take %s", names[0], op_name,
                             tgl_dtype_name(in[0]->dtype));
    }
    if (op == TGL__TEW_MASKED_FILL) {
        if (in[0]->dtype != TGL_DTYPE_BOOL)
            return tgl__fail(b, TGL_ERR_UNSUPPORTED, "mask: tgl_masked_fill takes a bool mask, not %s",
                             tgl_dtype_name(in[0]->dtype));
        if (in[1]->dtype != out->dtype)
            return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "in and out: %s and %s differ (tgl_copy converts first)",
                             tgl_dtype_name(in[1]->dtype), tgl_dtype_name(out->dtype));
    }
    if (op == TGL__TEW_ONE_HOT && in[0]->dtype != TGL_DTYPE_I32)
        return tgl__fail(b, TGL_ERR_UNSUPPORTED, "%s: tgl_one_hot takes i32 indices, not %s", names[0],
                         tgl_dtype_name(in[0]->dtype));
    if ((op == TGL__TEW_DROPOUT || op == TGL__TEW_TRIANGLE) && in[0]->dtype != out->dtype)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "%s and %s: %s and %s differ (tgl_copy converts first)", names[0],
                         out_name, tgl_dtype_name(in[0]->dtype), tgl_dtype_name(out->dtype));
    /* copy and map broadcast each input to out's shape; the others' out is the broadcast shape */
    if (op != TGL__TEW_COPY && op != TGL__TEW_MAP && (st = check_broadcast_shape(b, out, in, names, nin)))
        return st;
    e->ndim = out->ndim;
    for (size_t d = 0; d < e->ndim; d++)
        e->shape[d] = out->shape[d];
    int64_t strides[TGL__TEW_MAX_INPUTS][TGL_MAX_DIMS] = {{0}};
    for (size_t k = 0; k < nin; k++)
        if ((st = tgl__broadcast_to(b, names[k], in[k], e->ndim, e->shape, strides[k])))
            return st;
    *empty = e->n == 0;
    if (*empty)
        return TGL_OK;
    if ((st = tgl__resolve_tensor(b, out_name, out->data, out->dtype, e->ndim, e->shape, out->strides, &e->out)))
        return st;
    for (size_t k = 0; k < nin; k++)
        if ((st = tgl__resolve_tensor(b, names[k], in[k]->data, in[k]->dtype, e->ndim, e->shape, strides[k], &e->in[k])))
            return st;
    if ((st = tgl__check_unique(b, out_name, e->ndim, e->shape, out->strides)))
        return st;
    size_t out_bytes = e->out.span * tgl_dtype_size(e->out.dtype);
    for (size_t k = 0; k < nin; k++) {
        size_t in_bytes = e->in[k].span * tgl_dtype_size(e->in[k].dtype);
        if (!tgl__overlaps(e->out.view, out_bytes, e->in[k].view, in_bytes))
            continue;
        if (!same_elements(e, k))
            return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT,
                             "%s overlaps %s (bytes %zu..%zu and %zu..%zu of one allocation) without being the "
                             "same elements",
                             out_name, names[k], e->out.view.offset, e->out.view.offset + out_bytes - 1,
                             e->in[k].view.offset, e->in[k].view.offset + in_bytes - 1);
        if (op == TGL__TEW_COPY)
            e->in_place = 1;
    }
    return TGL_OK;
}

tgl_status tgl__run_tew(tgl_backend *b, const tgl__tew *e, const char *fn)
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
    if (st || (st = tgl__check_tew(b, TGL__FN_COPY, dst, "dst", in, names, &e, &empty)) || empty)
        return st;
    return tgl__run_tew(b, &e, "tgl_copy");
}

TGL_API tgl_status tgl_compare(tgl_backend *b, tgl_compare_op op, const tgl_tensor *a, const tgl_tensor *bb,
                               const tgl_tensor *out)
{
    if (tgl__hooked(b))
        return TGL__HOOK(COMPARE);
    tgl_status st = tgl__enter(b);
    tgl__tew e = {.op = TGL__TEW_COMPARE, .sub = (int)op, .nin = 2};
    const tgl_tensor *in[TGL__TEW_MAX_INPUTS] = {a, bb};
    static const char *const names[TGL__TEW_MAX_INPUTS] = {"a", "bb"};
    int empty = 0;
    if (st)
        return st;
    if ((unsigned)op >= TGL_COMPARE_COUNT)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "op: %d is not a tgl_compare_op", (int)op);
    if ((st = tgl__check_tew(b, TGL__FN_COMPARE, out, "out", in, names, &e, &empty)) || empty)
        return st;
    return tgl__run_tew(b, &e, "tgl_compare");
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
    if (st || (st = tgl__check_tew(b, TGL__FN_WHERE, out, "out", in, names, &e, &empty)) || empty)
        return st;
    return tgl__run_tew(b, &e, "tgl_where");
}

TGL_API tgl_status tgl_masked_fill(tgl_backend *b, const tgl_tensor *in, const tgl_tensor *mask, double value,
                                   const tgl_tensor *out)
{
    if (tgl__hooked(b))
        return TGL__HOOK(MASKED_FILL);
    tgl_status st = tgl__enter(b);
    tgl__tew e = {.op = TGL__TEW_MASKED_FILL, .nin = 2};
    const tgl_tensor *ins[TGL__TEW_MAX_INPUTS] = {mask, in};
    static const char *const names[TGL__TEW_MAX_INPUTS] = {"mask", "in"};
    int empty = 0;
    if (st || (st = tgl__check_tew(b, TGL__FN_MASKED_FILL, out, "out", ins, names, &e, &empty)) || empty)
        return st;
    e.value = tgl__fill_bits(out->dtype, value);
    return tgl__run_tew(b, &e, "tgl_masked_fill");
}

TGL_API tgl_status tgl_unary_t(tgl_backend *b, tgl_unary_op op, const tgl_tensor *in, const tgl_tensor *out)
{
    if (tgl__hooked(b))
        return TGL__HOOK(UNARY_T);
    tgl_status st = tgl__enter(b);
    tgl__tew e = {.op = TGL__TEW_UNARY, .sub = (int)op, .nin = 1};
    const tgl_tensor *ins[TGL__TEW_MAX_INPUTS] = {in};
    static const char *const names[TGL__TEW_MAX_INPUTS] = {"in"};
    int empty = 0;
    if (st)
        return st;
    if ((unsigned)op >= TGL_UNARY_COUNT)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "op: %d is not a tgl_unary_op", (int)op);
    if ((st = tgl__check_tew(b, TGL__FN_UNARY_T, out, "out", ins, names, &e, &empty)) || empty)
        return st;
    return tgl__run_tew(b, &e, "tgl_unary_t");
}

TGL_API tgl_status tgl_binary_t(tgl_backend *b, tgl_binary_op op, const tgl_tensor *a, const tgl_tensor *bb,
                                const tgl_tensor *out)
{
    if (tgl__hooked(b))
        return TGL__HOOK(BINARY_T);
    tgl_status st = tgl__enter(b);
    tgl__tew e = {.op = TGL__TEW_BINARY, .sub = (int)op, .nin = 2};
    const tgl_tensor *ins[TGL__TEW_MAX_INPUTS] = {a, bb};
    static const char *const names[TGL__TEW_MAX_INPUTS] = {"a", "bb"};
    int empty = 0;
    if (st)
        return st;
    if ((unsigned)op >= TGL_BINARY_COUNT)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "op: %d is not a tgl_binary_op", (int)op);
    if ((st = tgl__check_tew(b, TGL__FN_BINARY_T, out, "out", ins, names, &e, &empty)) || empty)
        return st;
    return tgl__run_tew(b, &e, "tgl_binary_t");
}

TGL_API tgl_status tgl_clamp(tgl_backend *b, const tgl_tensor *x, const tgl_tensor *lo, const tgl_tensor *hi,
                             const tgl_tensor *out)
{
    if (tgl__hooked(b))
        return TGL__HOOK(CLAMP);
    tgl_status st = tgl__enter(b);
    tgl__tew e = {.op = TGL__TEW_CLAMP, .nin = 3};
    const tgl_tensor *ins[TGL__TEW_MAX_INPUTS] = {x, lo, hi};
    static const char *const names[TGL__TEW_MAX_INPUTS] = {"x", "lo", "hi"};
    int empty = 0;
    if (st || (st = tgl__check_tew(b, TGL__FN_CLAMP, out, "out", ins, names, &e, &empty)) || empty)
        return st;
    return tgl__run_tew(b, &e, "tgl_clamp");
}

uint32_t tgl__fill_bits(tgl_dtype dt, double value)
{
    uint32_t bits = 0;
    if (dt == TGL_DTYPE_I32) {
        int32_t v = isnan(value) ? 0 : value >= 2147483647.0 ? INT32_MAX : value <= -2147483648.0 ? INT32_MIN
                                                                                                    : (int32_t)value;
        memcpy(&bits, &v, 4);
    } else if (dt == TGL_DTYPE_BOOL) {
        bits = value != 0.0;
    } else {
        uint8_t out[4] = {0};
        tgl_cpu_store_f32(dt, (float)value, out);
        memcpy(&bits, out, tgl_dtype_size(dt));
    }
    return bits;
}

TGL_API tgl_status tgl_fill_t(tgl_backend *b, const tgl_tensor *out, double value)
{
    if (tgl__hooked(b))
        return TGL__HOOK(FILL_T);
    tgl_status st = tgl__enter(b);
    tgl__tew e = {.op = TGL__TEW_FILL, .nin = 1};
    const tgl_tensor *ins[TGL__TEW_MAX_INPUTS] = {out}; /* out itself: resolved alike, never read */
    static const char *const names[TGL__TEW_MAX_INPUTS] = {"out"};
    int empty = 0;
    if (st || (st = tgl__check_tew(b, TGL__FN_FILL_T, out, "out", ins, names, &e, &empty)) || empty)
        return st;
    e.value = tgl__fill_bits(out->dtype, value);
    return tgl__run_tew(b, &e, "tgl_fill_t");
}

/* start or step of tgl_arange as the kernel's bits: f32 for the float dtypes, an i32 for i32
 * (an integer in range, or the call fails naming it). */
static tgl_status arange_bits(tgl_backend *b, const char *name, tgl_dtype dt, double v, uint32_t *bits)
{
    if (dt != TGL_DTYPE_I32) {
        float f = (float)v;
        memcpy(bits, &f, 4);
        return TGL_OK;
    }
    int32_t i;
    tgl_status st = tgl__i32_arg(b, name, v, &i);
    *bits = (uint32_t)i;
    return st;
}

TGL_API tgl_status tgl_arange(tgl_backend *b, const tgl_tensor *out, double start, double step)
{
    if (tgl__hooked(b))
        return TGL__HOOK(ARANGE);
    tgl_status st = tgl__enter(b);
    tgl__tew e = {.op = TGL__TEW_ARANGE, .nin = 1};
    const tgl_tensor *ins[TGL__TEW_MAX_INPUTS] = {out};
    static const char *const names[TGL__TEW_MAX_INPUTS] = {"out"};
    int empty = 0;
    if (st || (st = tgl__check_tew(b, TGL__FN_ARANGE, out, "out", ins, names, &e, &empty)))
        return st;
    if (e.ndim != 1)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "out: tgl_arange writes a 1-D tensor, not %zu dims", e.ndim);
    if (empty)
        return TGL_OK;
    if ((st = arange_bits(b, "start", out->dtype, start, &e.value)) || (st = arange_bits(b, "step", out->dtype, step, &e.step)))
        return st;
    return tgl__run_tew(b, &e, "tgl_arange");
}

/* tgl_cat's shapes: out has at least one dim and axis is one of them; every input has out's
 * ndim and extents but along axis, where theirs add up to out's. */
static tgl_status check_cat_shapes(tgl_backend *b, const tgl_tensor *inputs, size_t n_inputs, size_t axis,
                                   const tgl_tensor *out)
{
    unsigned dtypes = tgl__fn_dtypes(TGL__FN_CAT);
    size_t n;
    tgl_status st = tgl__tensor_shape(b, "tgl_cat", "out", out, dtypes, &n);
    if (st)
        return st;
    if (out->ndim == 0)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "out: a 0-d tensor has no axis to concatenate along");
    if (axis >= out->ndim)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "axis: %zu is not below out's ndim %zu", axis, out->ndim);
    if (!inputs)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "inputs: NULL");
    if (n_inputs == 0)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "n_inputs: 0 (tgl_cat takes at least one input)");
    size_t sum = 0;
    for (size_t k = 0; k < n_inputs; k++) {
        const tgl_tensor *x = &inputs[k];
        char name[40];
        snprintf(name, sizeof name, "inputs[%zu]", k);
        if ((st = tgl__tensor_shape(b, "tgl_cat", name, x, dtypes, &n)))
            return st;
        if (x->ndim != out->ndim)
            return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "%s: %zu dims where out has %zu", name, x->ndim, out->ndim);
        for (size_t d = 0; d < out->ndim; d++)
            if (d != axis && x->shape[d] != out->shape[d])
                return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "%s: dim %zu is %zu where out's is %zu", name, d,
                                 x->shape[d], out->shape[d]);
        if (x->shape[axis] > out->shape[axis] - sum)
            return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT,
                             "%s: the extents along axis %zu up to this input exceed out's %zu", name, axis,
                             out->shape[axis]);
        sum += x->shape[axis];
    }
    if (sum != out->shape[axis])
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "out: its extent along axis %zu is %zu, the inputs' add up to %zu",
                         axis, out->shape[axis], sum);
    return TGL_OK;
}

tgl_status tgl__check_apart(tgl_backend *b, const char *fn, const tgl_tensor *inputs, size_t n_inputs,
                            const char *in_name, int listed, const tgl_tensor *out)
{
    tgl__tensor_view ov, iv;
    tgl_status st = tgl__resolve_tensor(b, "out", out->data, out->dtype, out->ndim, out->shape, out->strides, &ov);
    if (st || (st = tgl__check_unique(b, "out", out->ndim, out->shape, out->strides)))
        return st;
    size_t out_bytes = ov.span * tgl_dtype_size(out->dtype);
    for (size_t k = 0; k < n_inputs; k++) {
        const tgl_tensor *x = &inputs[k];
        char name[40];
        if (listed)
            snprintf(name, sizeof name, "%s[%zu]", in_name, k);
        else
            snprintf(name, sizeof name, "%s", in_name);
        if (tgl_tensor_numel(x) == 0)
            continue;
        if ((st = tgl__resolve_tensor(b, name, x->data, x->dtype, x->ndim, x->shape, x->strides, &iv)))
            return st;
        size_t in_bytes = iv.span * tgl_dtype_size(x->dtype);
        if (tgl__overlaps(ov.view, out_bytes, iv.view, in_bytes))
            return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT,
                             "%s overlaps out (bytes %zu..%zu and %zu..%zu of one allocation); %s writes "
                             "no input's memory",
                             name, iv.view.offset, iv.view.offset + in_bytes - 1, ov.view.offset,
                             ov.view.offset + out_bytes - 1, fn);
    }
    return TGL_OK;
}

TGL_API tgl_status tgl_cat(tgl_backend *b, const tgl_tensor *inputs, size_t n_inputs, size_t axis,
                           const tgl_tensor *out)
{
    if (tgl__hooked(b))
        return TGL__HOOK(CAT);
    tgl_status st = tgl__enter(b);
    if (st || (st = check_cat_shapes(b, inputs, n_inputs, axis, out)) || tgl_tensor_numel(out) == 0)
        return st;
    if ((st = tgl__check_apart(b, "tgl_cat", inputs, n_inputs, "inputs", 1, out)))
        return st;
    if (!b->vt->tensor_ewise)
        return tgl__unsupported(b, "tgl_cat");
    /* One copy per non-empty input into its slice of out. The slice's first element is an
     * element of out (start is below out's extent), so its address stays inside out's range. */
    const int64_t step = out->strides[axis] * (int64_t)tgl_dtype_size(out->dtype);
    size_t start = 0;
    for (size_t k = 0; k < n_inputs; k++) {
        const tgl_tensor *x = &inputs[k];
        size_t extent = x->shape[axis];
        if (extent == 0)
            continue;
        tgl_tensor slice = *out;
        slice.shape[axis] = extent;
        slice.data = out->data + (tgl_ptr)((int64_t)start * step);
        start += extent;
        tgl__tew e = {.op = TGL__TEW_COPY, .nin = 1};
        const tgl_tensor *in[TGL__TEW_MAX_INPUTS] = {x};
        char name[40];
        snprintf(name, sizeof name, "inputs[%zu]", k);
        const char *names[TGL__TEW_MAX_INPUTS] = {name};
        int empty = 0;
        if ((st = tgl__check_tew(b, TGL__FN_CAT, &slice, "out", in, names, &e, &empty)))
            return st;
        if (!empty && (st = tgl__leave(b, b->vt->tensor_ewise(b, &e))))
            return st;
    }
    return TGL_OK;
}

tgl_status tgl__flat_tew(tgl_backend *b, tgl__tew_op op, int sub, const tgl__view *in, size_t nin, tgl__view out,
                         size_t n, const char *fn)
{
    tgl__tew e = {.op = op, .sub = sub, .ndim = 1, .n = n, .nin = nin, .shape = {n}};
    const tgl__tensor_view flat = {.dtype = TGL_DTYPE_F32, .span = n, .strides = {1}};
    e.out = flat;
    e.out.view = out;
    for (size_t k = 0; k < nin && k < TGL__TEW_MAX_INPUTS; k++) {
        e.in[k] = flat;
        e.in[k].view = in[k];
    }
    return tgl__run_tew(b, &e, fn);
}

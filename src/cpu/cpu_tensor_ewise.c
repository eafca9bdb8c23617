/* CPU element-wise descriptor ops (tgl_copy, tgl_compare, tgl_where, tgl_unary_t, tgl_binary_t,
 * tgl_clamp, tgl_fill_t, tgl_arange, tgl_random, tgl_dropout, tgl_triu, tgl_tril): walks out's index space in row-major order (an odometer
 * over the coordinates), each operand's element offset kept as it goes; conversions are
 * cpu_convert.h's, formulas cpu_math.h's. */
#include "cpu_convert.h"
#include "cpu_math.h"
#include "cpu_ops.h"

/* min(max(x, lo), hi) in dtype dt: floats through f32 (NaN anywhere gives NaN), i32 exact. */
static void clamp(tgl_dtype dt, const uint8_t *x, const uint8_t *lo, const uint8_t *hi, uint8_t *o)
{
    if (dt == TGL_DTYPE_I32) {
        int32_t v, l, h;
        memcpy(&v, x, 4);
        memcpy(&l, lo, 4);
        memcpy(&h, hi, 4);
        v = v < l ? l : v;
        v = v > h ? h : v;
        memcpy(o, &v, 4);
        return;
    }
    float v = tgl_cpu_load_f32(dt, x), l = tgl_cpu_load_f32(dt, lo), h = tgl_cpu_load_f32(dt, hi);
    if (isnan(v) || isnan(l) || isnan(h))
        v = NAN;
    else {
        v = v < l ? l : v;
        v = v > h ? h : v;
    }
    tgl_cpu_store_f32(dt, v, o);
}

/* isnan, isinf, isfinite of x (dtype dt, a float) as 0 or 1. */
static uint8_t classify(tgl_unary_op op, tgl_dtype dt, const uint8_t *x)
{
    float v = tgl_cpu_load_f32(dt, x);
    return (uint8_t)(op == TGL_UNARY_ISNAN ? isnan(v) != 0 : op == TGL_UNARY_ISINF ? isinf(v) != 0 : isfinite(v) != 0);
}

/* out = op(x) (unary) or x op y (binary) in dtype dt: floats through f32, i32 exact, bool logical. */
static void arith(const tgl__tew *e, tgl_dtype dt, const uint8_t *x, const uint8_t *y, uint8_t *o)
{
    int unary = e->op == TGL__TEW_UNARY;
    if (dt == TGL_DTYPE_BOOL) {
        int p = x[0] != 0, q = unary ? 0 : y[0] != 0;
        o[0] = (uint8_t)(unary ? !p : e->sub == TGL_BINARY_AND ? p && q : e->sub == TGL_BINARY_OR ? p || q : p != q);
    } else if (dt == TGL_DTYPE_I32) {
        int32_t p, q = 0, r;
        memcpy(&p, x, 4);
        if (!unary)
            memcpy(&q, y, 4);
        r = unary ? tgl_cpu_unary_i32((tgl_unary_op)e->sub, p) : tgl_cpu_binary_i32((tgl_binary_op)e->sub, p, q);
        memcpy(o, &r, 4);
    } else {
        float p = tgl_cpu_load_f32(dt, x);
        float r = unary ? tgl_cpu_unary((tgl_unary_op)e->sub, p)
                        : tgl_cpu_binary((tgl_binary_op)e->sub, p, tgl_cpu_load_f32(dt, y));
        tgl_cpu_store_f32(dt, r, o);
    }
}

/* a op b on elements of dtype dt: floats as IEEE numbers (C's comparisons: NaN unordered, -0 ==
 * +0), i32 as integers, bool as 0 and 1. */
static uint8_t compare(tgl_compare_op op, tgl_dtype dt, const uint8_t *a, const uint8_t *b)
{
    double x, y;
    if (dt == TGL_DTYPE_I32) {
        int32_t i, j;
        memcpy(&i, a, 4);
        memcpy(&j, b, 4);
        x = i; /* exact in double */
        y = j;
    } else if (dt == TGL_DTYPE_BOOL) {
        x = a[0] != 0;
        y = b[0] != 0;
    } else {
        x = tgl_cpu_load_f32(dt, a);
        y = tgl_cpu_load_f32(dt, b);
    }
    return (uint8_t)tgl_cpu_compare(op, x, y);
}

tgl_status tgl_cpu_tensor_ewise(tgl_backend *b, const tgl__tew *e)
{
    if (e->op == TGL__TEW_COPY && e->in_place && e->out.dtype != TGL_DTYPE_BOOL)
        return TGL_OK; /* a copy onto itself: every element is already what it would be written as */
    const size_t os = tgl_dtype_size(e->out.dtype);
    uint8_t *out = (uint8_t *)tgl_cpu_at(e->out.view);
    const uint8_t *in[TGL__TEW_MAX_INPUTS] = {NULL};
    size_t is[TGL__TEW_MAX_INPUTS] = {0};
    int64_t at[TGL__TEW_MAX_INPUTS + 1]; /* element offsets from the views: the inputs, then out */
    for (size_t k = 0; k < TGL__TEW_MAX_INPUTS; k++) { /* inputs past nin repeat input 0 (or out), never read */
        const tgl__tensor_view *v = k < e->nin ? &e->in[k] : e->nin ? &e->in[0] : &e->out;
        in[k] = (const uint8_t *)tgl_cpu_at(v->view);
        is[k] = tgl_dtype_size(v->dtype);
        at[k] = (int64_t)v->base;
    }
    at[e->nin] = (int64_t)e->out.base;
    for (size_t k = 0; k < TGL__TEW_MAX_INPUTS; k++)
        if (!in[k])
            return tgl__fail(b, TGL_ERR_INTERNAL, "tensor op: input %zu has no buffer", k);
    if (!out)
        return tgl__fail(b, TGL_ERR_INTERNAL, "tensor op: out has no buffer");
    tgl_cpu_random_state random = {0};
    size_t idx[TGL_MAX_DIMS] = {0};
    for (size_t i = 0; i < e->n; i++) {
        uint8_t *o = out + at[e->nin] * (int64_t)os;
        const uint8_t *x = in[0] + at[0] * (int64_t)is[0];
        switch (e->op) {
        case TGL__TEW_COPY: tgl_cpu_convert(e->out.dtype, e->in[0].dtype, x, o); break;
        case TGL__TEW_COMPARE:
            o[0] = compare((tgl_compare_op)e->sub, e->in[0].dtype, x, in[1] + at[1] * (int64_t)is[1]);
            break;
        case TGL__TEW_UNARY:
            if (tgl__unary_bool_out((tgl_unary_op)e->sub))
                o[0] = classify((tgl_unary_op)e->sub, e->in[0].dtype, x);
            else
                arith(e, e->out.dtype, x, NULL, o);
            break;
        case TGL__TEW_FILL: memcpy(o, &e->value, os); break; /* little-endian: the low bytes */
        case TGL__TEW_ARANGE:
            if (e->out.dtype == TGL_DTYPE_I32) {
                uint32_t v = e->value + (uint32_t)i * e->step; /* wraps */
                memcpy(o, &v, 4);
            } else {
                float start, step;
                memcpy(&start, &e->value, 4);
                memcpy(&step, &e->step, 4);
                float offset = (float)i * step; /* two statements: never one fused multiply-add */
                tgl_cpu_store_f32(e->out.dtype, start + offset, o);
            }
            break;
        case TGL__TEW_RANDOM:
        case TGL__TEW_DROPOUT: tgl_cpu_random_element(&random, e, i, x, o); break;
        case TGL__TEW_MASKED_FILL:
            if (x[0])
                memcpy(o, &e->value, os); /* little-endian: the low bytes */
            else
                tgl_cpu_convert(e->out.dtype, e->out.dtype, in[1] + at[1] * (int64_t)is[1], o); /* bool as 0 or 1 */
            break;
        case TGL__TEW_GATHER: { /* the index was checked: in[1]'s element along the axis */
            int32_t k;
            memcpy(&k, x, 4);
            const uint8_t *from = in[1] + (at[1] + (int64_t)k * e->axis_stride) * (int64_t)is[1];
            tgl_cpu_convert(e->out.dtype, e->in[1].dtype, from, o); /* bool as 0 or 1 */
            break;
        }
        case TGL__TEW_ONE_HOT: {
            int32_t v, one;
            memcpy(&v, x, 4);
            one = (int64_t)v == (int64_t)idx[e->ndim - 1];
            tgl_cpu_convert(e->out.dtype, TGL_DTYPE_I32, (const uint8_t *)&one, o);
            break;
        }
        case TGL__TEW_TRIANGLE: { /* row and col: the last two coordinates (out has at least 2 dims) */
            int64_t diff = (int64_t)idx[e->ndim - 1] - (int64_t)idx[e->ndim - 2], diag = (int32_t)e->value;
            if (e->sub ? diff >= diag : diff <= diag)
                tgl_cpu_convert(e->out.dtype, e->out.dtype, x, o); /* bool as 0 or 1 */
            else
                memset(o, 0, os);
            break;
        }
        case TGL__TEW_CLAMP:
            clamp(e->out.dtype, x, in[1] + at[1] * (int64_t)is[1], in[2] + at[2] * (int64_t)is[2], o);
            break;
        case TGL__TEW_BINARY: arith(e, e->out.dtype, x, in[1] + at[1] * (int64_t)is[1], o); break;
        case TGL__TEW_MAP: {
            const uint8_t *xs[TGL__TEW_MAX_INPUTS];
            for (size_t k = 0; k < e->nin; k++)
                xs[k] = in[k] + at[k] * (int64_t)is[k];
            tgl_cpu_map_element(e, xs, o);
            break;
        }
        default: { /* where: a and bb have out's dtype */
            int k = x[0] ? 1 : 2;
            tgl_cpu_convert(e->out.dtype, e->out.dtype, in[k] + at[k] * (int64_t)is[k], o);
            break;
        }
        }
        for (size_t d = e->ndim; d-- > 0;) { /* next index: carry through the dims */
            if (++idx[d] < e->shape[d]) {
                for (size_t k = 0; k < e->nin; k++)
                    at[k] += e->in[k].strides[d];
                at[e->nin] += e->out.strides[d];
                break;
            }
            for (size_t k = 0; k < e->nin; k++)
                at[k] -= e->in[k].strides[d] * (int64_t)(e->shape[d] - 1);
            at[e->nin] -= e->out.strides[d] * (int64_t)(e->shape[d] - 1);
            idx[d] = 0;
        }
    }
    return TGL_OK;
}

tgl_status tgl_cpu_index_check(tgl_backend *b, const tgl__tew *check, uint64_t *bad_pos, int32_t *bad_value)
{
    const tgl__tensor_view *v = &check->in[0];
    const uint8_t *base = (const uint8_t *)tgl_cpu_at(v->view);
    if (!base)
        return tgl__fail(b, TGL_ERR_INTERNAL, "index check: the indices have no buffer");
    size_t idx[TGL_MAX_DIMS] = {0};
    int64_t at = (int64_t)v->base;
    *bad_pos = UINT64_MAX;
    for (size_t i = 0; i < check->n; i++) {
        int32_t k;
        memcpy(&k, base + at * 4, 4);
        if ((uint32_t)k >= check->value) { /* a negative index as a large unsigned one */
            *bad_pos = i;
            *bad_value = k;
            return TGL_OK;
        }
        for (size_t d = check->ndim; d-- > 0;) { /* next index: carry through the dims */
            if (++idx[d] < check->shape[d]) {
                at += v->strides[d];
                break;
            }
            at -= v->strides[d] * (int64_t)(check->shape[d] - 1);
            idx[d] = 0;
        }
    }
    return TGL_OK;
}

tgl_status tgl_cpu_gather(tgl_backend *b, const tgl__tew *check, const tgl__tew *e, uint64_t *bad_pos,
                          int32_t *bad_value)
{
    tgl_status st = tgl_cpu_index_check(b, check, bad_pos, bad_value);
    return st || *bad_pos != UINT64_MAX ? st : tgl_cpu_tensor_ewise(b, e);
}

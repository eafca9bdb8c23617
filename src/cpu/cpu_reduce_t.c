/* CPU line ops (tgl_reduce_t, tgl_argmax_t, tgl_argmin_t, the row-wise _t ops): out's index
 * space walked in row-major order (an odometer, as the element-wise descriptor ops), each index
 * taking its line of in along the axis. Floats sum and multiply in double and are rounded once
 * to out's dtype (through f32); MAX and MIN compare as numbers with NaN winning; i32 wraps; ANY
 * and ALL test x != 0 on every dtype; the index ops keep the first best element; the row-wise
 * ops compute each line in double, the scans as scan_line says. */
#include "cpu_convert.h"
#include "cpu_ops.h"

#include <math.h>

/* An element of dtype dt as a double (i32 exactly, bool as 0/1). */
static double load(tgl_dtype dt, const uint8_t *p)
{
    if (dt == TGL_DTYPE_I32) {
        int32_t v;
        memcpy(&v, p, 4);
        return v;
    }
    if (dt == TGL_DTYPE_BOOL)
        return p[0] != 0;
    return tgl_cpu_load_f32(dt, p);
}

/* The index (i32) of the largest (argmax) or smallest element of n >= 1 of dtype dt from p, a
 * stride of step elements apart: the first on ties, the first NaN where there is one. */
static void arg_line(int is_max, tgl_dtype dt, const uint8_t *p, int64_t step, size_t n, uint8_t *o)
{
    const int64_t es = (int64_t)tgl_dtype_size(dt);
    int32_t at = 0;
    double best = 0.0;
    for (size_t k = 0; k < n && !isnan(best); k++) {
        double v = load(dt, p + (int64_t)k * step * es);
        if (k == 0 || isnan(v) || (is_max ? v > best : v < best)) {
            best = v;
            at = (int32_t)k;
        }
    }
    memcpy(o, &at, 4);
}

/* The reduction of n elements of dtype dt from p, a stride of step elements apart, into o. */
static void reduce_line(unsigned op, tgl_dtype dt, tgl_dtype out_dt, const uint8_t *p, int64_t step, size_t n,
                        uint8_t *o)
{
    const int64_t es = (int64_t)tgl_dtype_size(dt);
    if (op == TGL__RDT_ARGMAX || op == TGL__RDT_ARGMIN) {
        arg_line(op == TGL__RDT_ARGMAX, dt, p, step, n, o);
        return;
    }
    if (op == TGL_REDUCE_ANY || op == TGL_REDUCE_ALL) {
        int any = 0, all = 1;
        for (size_t k = 0; k < n; k++) {
            int t = load(dt, p + (int64_t)k * step * es) != 0.0; /* NaN != 0: true; -0 == 0 */
            any |= t;
            all &= t;
        }
        o[0] = (uint8_t)(op == TGL_REDUCE_ANY ? any : all);
        return;
    }
    if (dt == TGL_DTYPE_I32) {
        uint32_t acc = op == TGL_REDUCE_PROD ? 1u : 0u; /* unsigned: wraps as two's complement */
        int32_t best = 0;
        for (size_t k = 0; k < n; k++) {
            int32_t v;
            memcpy(&v, p + (int64_t)k * step * es, 4);
            if (op == TGL_REDUCE_SUM)
                acc += (uint32_t)v;
            else if (op == TGL_REDUCE_PROD)
                acc *= (uint32_t)v;
            else if (k == 0 || (op == TGL_REDUCE_MAX ? v > best : v < best))
                best = v;
        }
        if (op == TGL_REDUCE_MAX || op == TGL_REDUCE_MIN)
            acc = (uint32_t)best;
        memcpy(o, &acc, 4);
        return;
    }
    double acc = op == TGL_REDUCE_PROD ? 1.0 : 0.0;
    for (size_t k = 0; k < n; k++) {
        double v = load(dt, p + (int64_t)k * step * es);
        if (op == TGL_REDUCE_SUM || op == TGL_REDUCE_MEAN)
            acc += v;
        else if (op == TGL_REDUCE_PROD)
            acc *= v;
        else if (k == 0 || isnan(v) || (!isnan(acc) && (op == TGL_REDUCE_MAX ? v > acc : v < acc)))
            acc = v;
    }
    if (op == TGL_REDUCE_MEAN)
        acc = n ? acc / (double)n : NAN;
    tgl_cpu_store_f32(out_dt, (float)acc, o);
}

/* Element k of a 1-D operand as a double. */
static double param(const tgl__tensor_view *v, const uint8_t *base, size_t k)
{
    int64_t at = (int64_t)v->base + (int64_t)k * v->strides[0];
    return tgl_cpu_load_f32(v->dtype, base + at * (int64_t)tgl_dtype_size(v->dtype));
}

/* One line of a row-wise op, in double: p's n elements step apart into o's, o_step apart (o may
 * be p: every value is read before the last loop writes). */
static void rows_line(const tgl__rdt *r, const uint8_t *w, const uint8_t *bias, const uint8_t *p, uint8_t *o)
{
    const int64_t es = (int64_t)tgl_dtype_size(r->in.dtype), os = (int64_t)tgl_dtype_size(r->out.dtype);
    const size_t n = r->len;
    double a = 0.0, c = 0.0; /* softmax: max and sum of exp; norms: the scale and the mean */
    if (r->op == TGL__RDT_SOFTMAX || r->op == TGL__RDT_LOG_SOFTMAX) {
        a = -INFINITY;
        for (size_t k = 0; k < n; k++) {
            double v = load(r->in.dtype, p + (int64_t)k * r->in_step * es);
            a = isnan(v) || isnan(a) ? NAN : v > a ? v : a;
        }
        for (size_t k = 0; k < n; k++)
            c += exp(load(r->in.dtype, p + (int64_t)k * r->in_step * es) - a);
    } else {
        double sum = 0.0, sq = 0.0;
        if (r->op == TGL__RDT_LAYERNORM) {
            for (size_t k = 0; k < n; k++)
                sum += load(r->in.dtype, p + (int64_t)k * r->in_step * es);
            c = sum / (double)n;
        }
        for (size_t k = 0; k < n; k++) {
            double v = load(r->in.dtype, p + (int64_t)k * r->in_step * es) - c;
            sq += v * v;
        }
        a = 1.0 / sqrt(sq / (double)n + (double)r->eps);
    }
    for (size_t k = 0; k < n; k++) {
        double v = load(r->in.dtype, p + (int64_t)k * r->in_step * es), y;
        if (r->op == TGL__RDT_SOFTMAX)
            y = exp(v - a) / c;
        else if (r->op == TGL__RDT_LOG_SOFTMAX)
            y = v - a - log(c);
        else {
            y = (v - c) * a;
            if (r->has_w)
                y *= param(&r->w, w, k);
            if (r->has_bias)
                y += param(&r->bias, bias, k);
        }
        tgl_cpu_store_f32(r->out.dtype, (float)y, o + (int64_t)k * r->out_step * os);
    }
}

/* One line of a scan: p's len elements in_step apart into o's (out_step apart; o may be p:
 * element k is read before it is written) and, where ix, the best element's index into ix's
 * (idx_step apart). Floats accumulate in double, rounded to out's dtype per element; i32 and
 * bool count in uint32_t (two's complement wrap); cummax and cummin compare in double (exact for
 * every in dtype) and move to a later element on ties and to every NaN, as PyTorch. */
static void scan_line(const tgl__rdt *r, const uint8_t *p, uint8_t *o, uint8_t *ix)
{
    const tgl_dtype dt = r->in.dtype;
    const int64_t es = (int64_t)tgl_dtype_size(dt), os = (int64_t)tgl_dtype_size(r->out.dtype);
    const int prod = r->op == TGL__RDT_CUMPROD, is_max = r->op == TGL__RDT_CUMMAX;
    double acc = prod ? 1.0 : 0.0;
    uint32_t iacc = prod ? 1u : 0u;
    int32_t at = 0;
    for (size_t k = 0; k < r->len; k++) {
        const uint8_t *e = p + (int64_t)k * r->in_step * es;
        uint8_t *d = o + (int64_t)k * r->out_step * os;
        if (r->op == TGL__RDT_CUMSUM || r->op == TGL__RDT_CUMPROD) {
            if (dt == TGL_DTYPE_I32 || dt == TGL_DTYPE_BOOL) {
                uint32_t v = (uint32_t)(int32_t)load(dt, e);
                iacc = prod ? iacc * v : iacc + v;
                memcpy(d, &iacc, 4);
            } else {
                double v = load(dt, e);
                acc = prod ? acc * v : acc + v;
                tgl_cpu_store_f32(r->out.dtype, (float)acc, d);
            }
            continue;
        }
        double v = load(dt, e);
        if (k == 0 || isnan(v) || (!isnan(acc) && (is_max ? v >= acc : v <= acc))) {
            acc = v;
            at = (int32_t)k;
            memcpy(d, e, (size_t)es); /* the element itself: in's dtype is out's */
        } else
            memcpy(d, o + (int64_t)(k - 1) * r->out_step * os, (size_t)os);
        if (ix)
            memcpy(ix + (int64_t)k * r->idx_step * 4, &at, 4);
    }
}

tgl_status tgl_cpu_reduce_t(tgl_backend *b, const tgl__rdt *r)
{
    uint8_t *out = (uint8_t *)tgl_cpu_at(r->out.view);
    const uint8_t *in = r->len ? (const uint8_t *)tgl_cpu_at(r->in.view) : NULL;
    if (!out || (r->len && !in))
        return tgl__fail(b, TGL_ERR_INTERNAL, "tgl_reduce_t: an operand has no buffer");
    const int64_t os = (int64_t)tgl_dtype_size(r->out.dtype), is = (int64_t)tgl_dtype_size(r->in.dtype);
    int64_t at_in = (int64_t)r->in.base, at_out = (int64_t)r->out.base;
    size_t idx[TGL_MAX_DIMS] = {0};
    const int rows = tgl__rdt_is_rows(r->op);
    const uint8_t *w = r->has_w ? (const uint8_t *)tgl_cpu_at(r->w.view) : NULL;
    const uint8_t *bias = r->has_bias ? (const uint8_t *)tgl_cpu_at(r->bias.view) : NULL;
    uint8_t *ix = r->has_idx ? (uint8_t *)tgl_cpu_at(r->idx.view) : NULL;
    int64_t at_idx = (int64_t)r->idx.base;
    if ((r->has_w && !w) || (r->has_bias && !bias) || (r->has_idx && !ix))
        return tgl__fail(b, TGL_ERR_INTERNAL, "a row-wise op: an operand has no buffer");
    for (size_t i = 0; i < r->n_out; i++) {
        if (tgl__rdt_is_scan(r->op))
            scan_line(r, in + at_in * is, out + at_out * os, ix ? ix + at_idx * 4 : NULL);
        else if (rows)
            rows_line(r, w, bias, in + at_in * is, out + at_out * os);
        else
            reduce_line(r->op, r->len ? r->in.dtype : r->out.dtype, r->out.dtype, in ? in + at_in * is : NULL,
                        r->in_step, r->len, out + at_out * os);
        for (size_t d = r->ndim; d-- > 0;) { /* next index: carry through the dims */
            if (++idx[d] < r->shape[d]) {
                at_in += r->in.strides[d];
                at_out += r->out.strides[d];
                at_idx += r->idx.strides[d];
                break;
            }
            at_in -= r->in.strides[d] * (int64_t)(r->shape[d] - 1);
            at_out -= r->out.strides[d] * (int64_t)(r->shape[d] - 1);
            at_idx -= r->idx.strides[d] * (int64_t)(r->shape[d] - 1);
            idx[d] = 0;
        }
    }
    return TGL_OK;
}

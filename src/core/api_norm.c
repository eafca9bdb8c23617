/* tgl_softmax, tgl_log_softmax, tgl_rmsnorm, tgl_layernorm: checks, then vtable->rows. */
#include "trace.h"
#include "validate.h"

#include <math.h>

#define F32 sizeof(float)

static const char *const fn_names[TGL__ROWS_COUNT] = {"tgl_softmax", "tgl_log_softmax", "tgl_rmsnorm",
                                                      "tgl_layernorm"};

/* An optional per-column operand (weight, gamma, beta): 0 means absent. */
static tgl_status resolve_param(tgl_backend *b, const char *arg, tgl_ptr p, size_t cols, tgl__view out,
                                size_t out_bytes, tgl__view *v)
{
    *v = (tgl__view){0};
    if (!p)
        return TGL_OK;
    tgl_status st = tgl__resolve_array(b, arg, p, cols, F32, v);
    return st ? st : tgl__check_disjoint(b, arg, *v, cols * F32, out, out_bytes);
}

static tgl_status rows_op(tgl_backend *b, int kind, tgl_ptr in, tgl_ptr w, tgl_ptr bias, tgl_ptr out,
                          size_t rows, size_t cols, float eps)
{
    tgl_status st = tgl__enter(b);
    size_t n = 0;
    tgl__view vi, vo, vw, vb;
    if (st || (st = tgl__mul(b, "rows x cols", rows, cols, &n)) || (st = tgl__mul(b, "rows x cols", n, F32, &(size_t){0})))
        return st;
    if (kind >= TGL__ROWS_RMSNORM && !(isfinite(eps) && eps >= 0.0f))
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "eps: %g is not finite and >= 0", (double)eps);
    if (n == 0)
        return TGL_OK;
    if ((st = tgl__resolve_array(b, "in", in, n, F32, &vi)) || (st = tgl__resolve_array(b, "out", out, n, F32, &vo)) ||
        (st = tgl__check_alias(b, "in", vi, n * F32, vo, n * F32)) ||
        (st = resolve_param(b, kind == TGL__ROWS_LAYERNORM ? "gamma" : "weight", w, cols, vo, n * F32, &vw)) ||
        (st = resolve_param(b, "beta", bias, cols, vo, n * F32, &vb)))
        return st;
    if (!b->vt->rows)
        return tgl__unsupported(b, fn_names[kind]);
    return tgl__leave(b, b->vt->rows(b, kind, vi, vw, vb, vo, rows, cols, eps));
}

TGL_API tgl_status tgl_softmax(tgl_backend *b, tgl_ptr in, tgl_ptr out, size_t rows, size_t cols)
{
    if (tgl__hooked(b))
        return TGL__HOOK(SOFTMAX);
    return rows_op(b, TGL__ROWS_SOFTMAX, in, 0, 0, out, rows, cols, 0.0f);
}

TGL_API tgl_status tgl_log_softmax(tgl_backend *b, tgl_ptr in, tgl_ptr out, size_t rows, size_t cols)
{
    if (tgl__hooked(b))
        return TGL__HOOK(LOG_SOFTMAX);
    return rows_op(b, TGL__ROWS_LOG_SOFTMAX, in, 0, 0, out, rows, cols, 0.0f);
}

TGL_API tgl_status tgl_rmsnorm(tgl_backend *b, tgl_ptr in, tgl_ptr weight, tgl_ptr out, size_t rows,
                               size_t cols, float eps)
{
    if (tgl__hooked(b))
        return TGL__HOOK(RMSNORM);
    return rows_op(b, TGL__ROWS_RMSNORM, in, weight, 0, out, rows, cols, eps);
}

TGL_API tgl_status tgl_layernorm(tgl_backend *b, tgl_ptr in, tgl_ptr gamma, tgl_ptr beta, tgl_ptr out,
                                 size_t rows, size_t cols, float eps)
{
    if (tgl__hooked(b))
        return TGL__HOOK(LAYERNORM);
    return rows_op(b, TGL__ROWS_LAYERNORM, in, gamma, beta, out, rows, cols, eps);
}

/* tgl_gemm, tgl_gemm_batched, tgl_gemm_f16, tgl_gemm_fused and tgl_matvec: checks, then the
 * backend. */
#include "trace.h"
#include "validate.h"

/* Elements from the first to one past the last element of a rows x cols matrix with row
 * stride ld (0 for an empty matrix). */
static tgl_status matrix_span(tgl_backend *b, const char *arg, size_t rows, size_t cols, size_t ld, size_t *out)
{
    *out = 0;
    if (rows == 0 || cols == 0)
        return TGL_OK;
    size_t body;
    tgl_status st = tgl__mul(b, arg, rows - 1, ld, &body);
    if (st)
        return st;
    if (body + cols < body)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "%s: size overflows", arg);
    *out = body + cols;
    return TGL_OK;
}

/* The span of `batch` matrices `stride` elements apart. */
static tgl_status batch_span(tgl_backend *b, const char *arg, size_t span, size_t stride, size_t batch, size_t *out)
{
    size_t lead;
    tgl_status st = tgl__mul(b, arg, batch - 1, stride, &lead);
    if (st)
        return st;
    if (span && lead + span < lead)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "%s: size overflows", arg);
    *out = span ? lead + span : 0;
    return TGL_OK;
}

static tgl_status check_ld(tgl_backend *b, const char *arg, size_t ld, size_t cols)
{
    size_t need = cols ? cols : 1;
    if (ld < need)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "%s: %zu is less than the stored row length %zu", arg, ld,
                         need);
    return TGL_OK;
}

/* The products' C matrices must not share an element (see tgl_gemm_batched). */
static tgl_status check_c_batches(tgl_backend *b, const tgl__gemm *g)
{
    if (g->batch < 2)
        return TGL_OK;
    int stacked = g->stride_c >= (g->m - 1) * g->ldc + g->n;
    int side_by_side = g->stride_c >= g->n && (g->batch - 1) * g->stride_c + g->n <= g->ldc;
    if (stacked || side_by_side)
        return TGL_OK;
    return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "stride_c: %zu makes the %zu products' C matrices (%zu x %zu, "
                     "ldc %zu) share elements", g->stride_c, g->batch, g->m, g->n, g->ldc);
}

/* Checks every argument, then runs g on the backend; bias is tgl_gemm_fused's (0 elsewhere). */
static tgl_status gemm_common(tgl_backend *b, tgl__gemm *g, tgl_ptr a, tgl_ptr bm, tgl_ptr c, tgl_ptr bias)
{
    tgl_status st = tgl__enter(b);
    if (st || (st = tgl__check_gemm_epilogue(b, g, "C")))
        return st;
    if ((unsigned)g->trans_a > TGL_TRANS || (unsigned)g->trans_b > TGL_TRANS)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "%s: %d is not a tgl_transpose",
                         (unsigned)g->trans_a > TGL_TRANS ? "ta" : "tb",
                         (unsigned)g->trans_a > TGL_TRANS ? g->trans_a : g->trans_b);
    size_t a_rows = g->trans_a ? g->k : g->m, a_cols = g->trans_a ? g->m : g->k;
    size_t b_rows = g->trans_b ? g->n : g->k, b_cols = g->trans_b ? g->k : g->n;
    size_t span_a, span_b, span_c, es = g->f16 ? 2 : sizeof(float);
    if ((st = check_ld(b, "lda", g->lda, a_cols)) || (st = check_ld(b, "ldb", g->ldb, b_cols)) ||
        (st = check_ld(b, "ldc", g->ldc, g->n)))
        return st;
    if (g->m == 0 || g->n == 0 || g->batch == 0)
        return TGL_OK;
    if (g->batch > 1 && g->stride_c == 0)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "stride_c: 0 with batch %zu writes one C %zu times",
                         g->batch, g->batch);
    if ((st = matrix_span(b, "A", a_rows, a_cols, g->lda, &span_a)) ||
        (st = matrix_span(b, "B", b_rows, b_cols, g->ldb, &span_b)) ||
        (st = matrix_span(b, "C", g->m, g->n, g->ldc, &span_c)) ||
        (st = batch_span(b, "A batches", span_a, g->stride_a, g->batch, &span_a)) ||
        (st = batch_span(b, "B batches", span_b, g->stride_b, g->batch, &span_b)) ||
        (st = batch_span(b, "C batches", span_c, g->stride_c, g->batch, &span_c)) ||
        (st = tgl__mul(b, "bytes", span_a > span_b ? (span_a > span_c ? span_a : span_c) : span_b, es,
                       &(size_t){0})) ||
        (st = check_c_batches(b, g)) || (st = tgl__resolve_array(b, "c", c, span_c, es, &g->c)))
        return st;
    if (g->k) {
        if ((st = tgl__resolve_array(b, "a", a, span_a, es, &g->a)) ||
            (st = tgl__resolve_array(b, "bm", bm, span_b, es, &g->b)) ||
            (st = tgl__check_disjoint(b, "a", g->a, span_a * es, g->c, span_c * es)) ||
            (st = tgl__check_disjoint(b, "bm", g->b, span_b * es, g->c, span_c * es)))
            return st;
    }
    if (bias && ((st = tgl__resolve_array(b, "bias", bias, g->n, es, &g->bias)) ||
                 (st = tgl__check_disjoint(b, "bias", g->bias, g->n * es, g->c, span_c * es))))
        return st;
    if (!b->vt->gemm)
        return tgl__unsupported(b, g->f16 ? "tgl_gemm_f16" : "tgl_gemm");
    return tgl__leave(b, b->vt->gemm(b, g));
}

TGL_API tgl_status tgl_gemm(tgl_backend *b, tgl_transpose ta, tgl_transpose tb, size_t m, size_t n, size_t k,
                            float alpha, tgl_ptr a, size_t lda, tgl_ptr bm, size_t ldb, float beta, tgl_ptr c,
                            size_t ldc)
{
    if (tgl__hooked(b))
        return TGL__HOOK(GEMM);
    tgl__gemm g = {.trans_a = (int)ta, .trans_b = (int)tb, .m = m, .n = n, .k = k, .batch = 1, .alpha = alpha,
                   .beta = beta, .lda = lda, .ldb = ldb, .ldc = ldc};
    return gemm_common(b, &g, a, bm, c, 0);
}

TGL_API tgl_status tgl_gemm_fused(tgl_backend *b, tgl_transpose ta, tgl_transpose tb, size_t m, size_t n, size_t k,
                                  float alpha, tgl_ptr a, size_t lda, tgl_ptr bm, size_t ldb, float beta, tgl_ptr c,
                                  size_t ldc, tgl_ptr bias, tgl_activation activation, float slope, int gate)
{
    if (tgl__hooked(b))
        return TGL__HOOK(GEMM_FUSED);
    tgl__gemm g = {.trans_a = (int)ta, .trans_b = (int)tb, .m = m, .n = n, .k = k, .batch = 1, .alpha = alpha,
                   .beta = beta, .lda = lda, .ldb = ldb, .ldc = ldc, .act = activation, .gate = gate,
                   .slope = slope};
    return gemm_common(b, &g, a, bm, c, bias);
}

TGL_API tgl_status tgl_gemm_f16(tgl_backend *b, tgl_transpose ta, tgl_transpose tb, size_t m, size_t n, size_t k,
                                float alpha, tgl_ptr a, size_t lda, tgl_ptr bm, size_t ldb, float beta, tgl_ptr c,
                                size_t ldc)
{
    if (tgl__hooked(b))
        return TGL__HOOK(GEMM_F16);
    tgl__gemm g = {.trans_a = (int)ta, .trans_b = (int)tb, .f16 = 1, .m = m, .n = n, .k = k, .batch = 1,
                   .alpha = alpha, .beta = beta, .lda = lda, .ldb = ldb, .ldc = ldc};
    return gemm_common(b, &g, a, bm, c, 0);
}

TGL_API tgl_status tgl_gemm_batched(tgl_backend *b, tgl_transpose ta, tgl_transpose tb, size_t m, size_t n,
                                    size_t k, float alpha, tgl_ptr a, size_t lda, size_t stride_a, tgl_ptr bm,
                                    size_t ldb, size_t stride_b, float beta, tgl_ptr c, size_t ldc,
                                    size_t stride_c, size_t batch)
{
    if (tgl__hooked(b))
        return TGL__HOOK(GEMM_BATCHED);
    /* One product needs no strides: zero them so backends see one canonical form. */
    int one = batch == 1;
    tgl__gemm g = {.trans_a = (int)ta, .trans_b = (int)tb, .m = m, .n = n, .k = k, .batch = batch, .alpha = alpha,
                   .beta = beta, .lda = lda, .ldb = ldb, .ldc = ldc, .stride_a = one ? 0 : stride_a,
                   .stride_b = one ? 0 : stride_b, .stride_c = one ? 0 : stride_c};
    return gemm_common(b, &g, a, bm, c, 0);
}

TGL_API tgl_status tgl_matvec(tgl_backend *b, size_t rows, size_t cols, tgl_ptr w, tgl_ptr x, tgl_ptr y)
{
    if (tgl__hooked(b))
        return TGL__HOOK(MATVEC);
    tgl_status st = tgl__enter(b);
    size_t wn;
    tgl__view vw = {0}, vx = {0}, vy;
    if (st)
        return st;
    if ((st = tgl__mul(b, "rows x cols", rows, cols, &wn)) || (st = tgl__mul(b, "bytes", wn, sizeof(float),
                                                                             &(size_t){0})))
        return st;
    if (rows == 0)
        return TGL_OK;
    if ((st = tgl__resolve_array(b, "y", y, rows, sizeof(float), &vy)))
        return st;
    if (cols) {
        if ((st = tgl__resolve_array(b, "w", w, wn, sizeof(float), &vw)) ||
            (st = tgl__resolve_array(b, "x", x, cols, sizeof(float), &vx)) ||
            (st = tgl__check_disjoint(b, "w", vw, wn * sizeof(float), vy, rows * sizeof(float))) ||
            (st = tgl__check_disjoint(b, "x", vx, cols * sizeof(float), vy, rows * sizeof(float))))
            return st;
    }
    if (!b->vt->matvec)
        return tgl__unsupported(b, "tgl_matvec");
    return tgl__leave(b, b->vt->matvec(b, vw, vx, vy, rows, cols));
}

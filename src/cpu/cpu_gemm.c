/* CPU tgl_gemm family and tgl_matvec: the oracle. Products are summed in double, so the GL
 * kernels' f32 sums are measured against a reference without rounding error of its own. */
#include "cpu_half.h"
#include "cpu_math.h"
#include "cpu_ops.h"

#include <stdlib.h>

/* One product, f32 in and out. acc holds a row of C in double, each element summed over k in
 * order; B is read along its rows: with the k loop outside the j loop, or (B transposed: a
 * linear layer's W stored [n, k]) as one dot product per element. No term is skipped, so
 * 0 * inf gives NaN here as it does on GL. The bias joins the double sum; the activation and
 * the gate follow in f32. */
static void gemm_one(const tgl__gemm *g, const float *a, const float *bm, const float *bias, float *c, double *acc)
{
    for (size_t i = 0; i < g->m; i++) {
        if (g->trans_b) {
            for (size_t j = 0; j < g->n; j++) {
                double sum = 0.0; /* k == 0: bm is NULL and never read */
                for (size_t p = 0; p < g->k; p++)
                    sum += (double)a[g->trans_a ? p * g->lda + i : i * g->lda + p] * bm[j * g->ldb + p];
                acc[j] = sum;
            }
        } else {
            for (size_t j = 0; j < g->n; j++)
                acc[j] = 0.0;
            for (size_t p = 0; p < g->k; p++) {
                double aip = a[g->trans_a ? p * g->lda + i : i * g->lda + p];
                const float *brow = bm + p * g->ldb;
                for (size_t j = 0; j < g->n; j++)
                    acc[j] += aip * brow[j];
            }
        }
        float *crow = c + i * g->ldc;
        for (size_t j = 0; j < g->n; j++)
            crow[j] = tgl_cpu_epilogue(g, acc[j], crow[j], bias ? bias + j : NULL);
    }
}

float tgl_cpu_epilogue(const tgl__gemm *g, double sum, float old, const float *bias)
{
    double v = (double)g->alpha * sum;
    if (g->beta != 0.0f)
        v += (double)g->beta * old;
    if (bias)
        v += *bias;
    float r = tgl_cpu_activation(g->act, g->slope, (float)v);
    return g->gate ? r * old : r;
}

static void gemm_f32(const tgl__gemm *g, const float *a, const float *bm, float *c, double *acc)
{
    const float *bias = tgl_cpu_at(g->bias);
    for (size_t t = 0; t < g->batch; t++)
        gemm_one(g, g->k ? a + t * g->stride_a : NULL, g->k ? bm + t * g->stride_b : NULL, bias, c + t * g->stride_c,
                 acc);
}

static float *widen(const uint16_t *h, size_t n)
{
    float *f = malloc((n ? n : 1) * sizeof *f);
    for (size_t i = 0; f && i < n; i++) {
        uint32_t bits = tgl_f16_to_f32_bits(h[i]);
        memcpy(&f[i], &bits, sizeof bits);
    }
    return f;
}

/* binary16: widen the spans to f32, multiply, and narrow back only C's m x n elements (the
 * gaps between C's rows belong to the caller). */
static tgl_status gemm_f16(tgl_backend *b, const tgl__gemm *g, double *acc)
{
    size_t na = tgl__gemm_span_a(g, g->m, g->k, g->batch), nb = tgl__gemm_span_b(g, g->k, g->n, g->batch);
    size_t nc = tgl__matrix_span(g->m, g->n, g->ldc, g->stride_c, g->batch);
    uint16_t *ch = tgl_cpu_at(g->c);
    float *a = g->k ? widen(tgl_cpu_at(g->a), na) : NULL, *bm = g->k ? widen(tgl_cpu_at(g->b), nb) : NULL;
    float *c = widen(ch, nc);
    tgl_status st = TGL_OK;
    if (!c || (g->k && (!a || !bm))) {
        st = tgl__fail(b, TGL_ERR_OUT_OF_MEMORY, "tgl_gemm_f16: no host memory to widen the operands");
    } else {
        gemm_f32(g, a, bm, c, acc);
        for (size_t t = 0; t < g->batch; t++)
            for (size_t i = 0; i < g->m; i++)
                for (size_t j = 0; j < g->n; j++) {
                    size_t idx = t * g->stride_c + i * g->ldc + j;
                    uint32_t bits;
                    memcpy(&bits, &c[idx], sizeof bits);
                    ch[idx] = tgl_f32_to_f16_bits(bits);
                }
    }
    free(a);
    free(bm);
    free(c);
    return st;
}

tgl_status tgl_cpu_gemm(tgl_backend *b, const tgl__gemm *g)
{
    double *acc = malloc(g->n * sizeof *acc);
    if (!acc)
        return tgl__fail(b, TGL_ERR_OUT_OF_MEMORY, "tgl_gemm: no host memory for a row of %zu", g->n);
    tgl_status st = TGL_OK;
    if (g->f16)
        st = gemm_f16(b, g, acc);
    else
        gemm_f32(g, g->k ? tgl_cpu_at(g->a) : NULL, g->k ? tgl_cpu_at(g->b) : NULL, tgl_cpu_at(g->c), acc);
    free(acc);
    return st;
}

tgl_status tgl_cpu_matvec(tgl_backend *b, tgl__view w, tgl__view x, tgl__view y, size_t rows, size_t cols)
{
    (void)b;
    const float *wp = cols ? tgl_cpu_at(w) : NULL, *xp = cols ? tgl_cpu_at(x) : NULL;
    float *yp = tgl_cpu_at(y);
    for (size_t r = 0; r < rows; r++) {
        double s = 0.0;
        for (size_t c = 0; c < cols; c++)
            s += (double)wp[r * cols + c] * xp[c];
        yp[r] = (float)s;
    }
    return TGL_OK;
}

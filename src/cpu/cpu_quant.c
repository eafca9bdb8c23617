/* CPU tgl_matvec_t, tgl_quantize and tgl_dequantize: the oracle. The block formats are ggml's
 * (tensorgl.h); quantization takes the steps of ggml's reference quantizers in f32, so its bytes
 * are those of a GGUF file made from the same floats. Products are summed in double. */
#include "cpu_convert.h"
#include "cpu_ops.h"

#include <math.h>
#include <stdlib.h>

void tgl_cpu_decode_block(tgl_dtype dt, const uint8_t *blk, float out[32])
{
    float d = tgl_cpu_load_f32(TGL_DTYPE_F16, blk);
    const uint8_t *q = blk + 2;
    if (dt == TGL_DTYPE_Q8_0) {
        for (int i = 0; i < 32; i++)
            out[i] = (float)(int8_t)q[i] * d;
        return;
    }
    for (int i = 0; i < 16; i++) {
        out[i] = (float)((int)(q[i] & 15) - 8) * d;
        out[i + 16] = (float)((int)(q[i] >> 4) - 8) * d;
    }
}

/* x[0..31] into one block at blk, as quantize_row_q8_0_ref / quantize_row_q4_0_ref do (a NaN
 * product, which those leave to the float-to-int conversion, gives quant 0 here). */
static void encode_block(tgl_dtype dt, const float x[32], uint8_t *blk)
{
    float d, amax = 0.0f, max = 0.0f;
    if (dt == TGL_DTYPE_Q8_0) {
        for (int i = 0; i < 32; i++)
            amax = amax > fabsf(x[i]) ? amax : fabsf(x[i]); /* ggml's MAX(amax, |v|) */
        d = amax / 127.0f;
    } else {
        for (int i = 0; i < 32; i++) {
            if (amax < fabsf(x[i])) {
                amax = fabsf(x[i]);
                max = x[i];
            }
        }
        d = max / -8.0f;
    }
    float id = d != 0.0f ? 1.0f / d : 0.0f;
    uint32_t dbits;
    memcpy(&dbits, &d, sizeof dbits);
    uint16_t h = tgl_f32_to_f16_bits(dbits);
    blk[0] = (uint8_t)(h & 0xFFu);
    blk[1] = (uint8_t)(h >> 8);
    uint8_t *q = blk + 2;
    if (dt == TGL_DTYPE_Q8_0) {
        for (int i = 0; i < 32; i++) {
            float r = roundf(x[i] * id);
            int v = r > 127.0f ? 127 : r < -128.0f ? -128 : r == r ? (int)r : 0;
            q[i] = (uint8_t)(int8_t)v;
        }
        return;
    }
    for (int i = 0; i < 16; i++) {
        float lo = x[i] * id + 8.5f, hi = x[i + 16] * id + 8.5f;
        int a = lo >= 15.0f ? 15 : lo >= 0.0f ? (int)lo : 0, c = hi >= 15.0f ? 15 : hi >= 0.0f ? (int)hi : 0;
        q[i] = (uint8_t)(a | (c << 4));
    }
}

/* Element (r, c) of a float view (f32, f16, bf16) as a float. */
static float float_at(const tgl__tensor_view *v, size_t r, size_t c)
{
    int64_t e = (int64_t)v->base + (int64_t)r * v->strides[0] + (int64_t)c * v->strides[1];
    return tgl_cpu_load_f32(v->dtype, (const uint8_t *)tgl_cpu_at(v->view) + e * (int64_t)tgl_dtype_size(v->dtype));
}

static float *f32_at(const tgl__tensor_view *v, size_t r, size_t c)
{
    return (float *)tgl_cpu_at(v->view) + ((int64_t)v->base + (int64_t)r * v->strides[0] + (int64_t)c * v->strides[1]);
}

/* Row r of a weight view decoded into row[cols]. */
static void weight_row(const tgl__tensor_view *w, size_t r, size_t cols, float *row)
{
    if (!tgl__is_block(w->dtype)) {
        for (size_t c = 0; c < cols; c++)
            row[c] = float_at(w, r, c);
        return;
    }
    const uint8_t *blk = (const uint8_t *)tgl_cpu_at(w->view) + (size_t)w->strides[0] * r * tgl__unit_bytes(w->dtype);
    for (size_t k = 0; k < cols / 32; k++, blk += tgl__unit_bytes(w->dtype))
        tgl_cpu_decode_block(w->dtype, blk, row + 32 * k);
}

tgl_status tgl_cpu_gather_rows_t(tgl_backend *b, const tgl__tew *check, const tgl__gather_w *g, uint64_t *bad_pos,
                                 int32_t *bad_value)
{
    tgl_status st = tgl_cpu_index_check(b, check, bad_pos, bad_value);
    if (st || *bad_pos != UINT64_MAX)
        return st;
    float *row = malloc(g->cols * sizeof *row);
    if (!row)
        return tgl__fail(b, TGL_ERR_OUT_OF_MEMORY, "tgl_gather_rows_t: no host memory for a row of %zu", g->cols);
    const int32_t *ids = (const int32_t *)tgl_cpu_at(g->ids.view) + g->ids.base;
    for (size_t k = 0; k < g->n; k++) {
        weight_row(&g->w, (size_t)ids[(int64_t)k * g->ids.strides[0]], g->cols, row);
        for (size_t c = 0; c < g->cols; c++)
            *f32_at(&g->out, k, c) = row[c];
    }
    free(row);
    return TGL_OK;
}

tgl_status tgl_cpu_matvec_t(tgl_backend *b, const tgl__matvec_t *m)
{
    float *row = calloc(m->cols ? m->cols : 1, sizeof *row);
    if (!row)
        return tgl__fail(b, TGL_ERR_OUT_OF_MEMORY, "tgl_matvec_t: no host memory for a row of %zu floats", m->cols);
    const float *bias = m->epilogue ? tgl_cpu_at(m->epilogue->bias) : NULL;
    for (size_t r = 0; r < m->rows; r++) {
        if (m->cols) /* cols 0 (an epilogue of empty sums): w reaches nothing */
            weight_row(&m->w, r, m->cols, row);
        for (size_t j = 0; j < m->n; j++) {
            double s = 0.0;
            for (size_t c = 0; c < m->cols; c++)
                s += (double)row[c] * (double)*f32_at(&m->x, j, c);
            float *y = f32_at(&m->y, j, r);
            *y = m->epilogue ? tgl_cpu_epilogue(m->epilogue, s, *y, bias ? bias + r : NULL) : (float)s;
        }
    }
    free(row);
    return TGL_OK;
}

tgl_status tgl_cpu_quantize(tgl_backend *b, const tgl__quant *q)
{
    (void)b;
    size_t bb = tgl__unit_bytes(q->q.dtype);
    for (size_t r = 0; r < q->rows; r++) {
        uint8_t *blk = (uint8_t *)tgl_cpu_at(q->q.view) + (size_t)q->q.strides[0] * r * bb;
        for (size_t k = 0; k < q->cols / 32; k++, blk += bb) {
            float x[32];
            if (q->to_blocks) {
                for (size_t i = 0; i < 32; i++)
                    x[i] = *f32_at(&q->f, r, 32 * k + i);
                encode_block(q->q.dtype, x, blk);
            } else {
                tgl_cpu_decode_block(q->q.dtype, blk, x);
                for (size_t i = 0; i < 32; i++)
                    *f32_at(&q->f, r, 32 * k + i) = x[i];
            }
        }
    }
    return TGL_OK;
}

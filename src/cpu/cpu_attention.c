/* CPU attention: per query row, the scores in double (capped, biased and masked as
 * tgl_attention_t says), max-subtracted softmax, weighted sum of V in double. Obviously right rather than fast:
 * it is the oracle for the fused GL kernels. */
#include "cpu_convert.h"
#include "cpu_ops.h"

#include <math.h>
#include <stdlib.h>

/* Element e of a k or v block: f32, or binary16 widened. */
static double kv_at(const tgl__attention *a, const uint8_t *base, size_t e)
{
    return tgl_cpu_load_f32(a->kv_f16 ? TGL_DTYPE_F16 : TGL_DTYPE_F32, base + e * (a->kv_f16 ? 2 : 4));
}

tgl_status tgl_cpu_attention(tgl_backend *b, const tgl__attention *a)
{
    const size_t d = a->head_dim, es = a->kv_f16 ? 2 : 4;
    double *s = malloc((a->seq_kv ? a->seq_kv : 1) * sizeof *s), *acc = malloc(d * sizeof *acc);
    if (!s || !acc) {
        free(s);
        free(acc);
        return tgl__fail(b, TGL_ERR_OUT_OF_MEMORY, "tgl_attention: no host memory for %zu scores", a->seq_kv);
    }
    const float *q = tgl_cpu_at(a->q);
    const uint8_t *k = a->seq_kv ? tgl_cpu_at(a->k) : NULL, *v = a->seq_kv ? tgl_cpu_at(a->v) : NULL;
    const float *mask = a->mask.buf ? tgl_cpu_at(a->mask) : NULL;
    float *o = tgl_cpu_at(a->o);
    const tgl__alibi alibi = tgl__attention_alibi(a);
    for (size_t bh = 0; bh < a->batch * a->heads; bh++) {
        size_t kv = bh / (a->heads / a->heads_kv), h = bh % a->heads; /* its key/value head's block */
        const uint8_t *kb = k ? k + kv * a->kv_cap * d * es : NULL, *vb = v ? v + kv * a->kv_cap * d * es : NULL;
        double slope = !alibi.n ? 0.0 : h < alibi.n ? exp2(alibi.e0 * (double)(h + 1))
                                                    : exp2(alibi.e1 * (double)(2 * (h - alibi.n) + 1));
        for (size_t i = 0; i < a->seq_q; i++) {
            const float *mi = mask ? mask + bh / a->heads * a->mask_b + h * a->mask_h + i * a->mask_i : NULL;
            const float *qi = q + (bh * a->seq_q + i) * d;
            float *oi = o + (bh * a->seq_q + i) * d;
            size_t keys = kb && vb ? tgl__attention_keys(a, i) : 0; /* k, v absent only when seq_kv is 0 */
            size_t first = tgl__attention_first_key(a, i);
            double pos = (double)i + (double)a->seq_kv - (double)a->seq_q, mx = -INFINITY, sum = 0;
            for (size_t j = first; j < keys; j++) {
                double dot = 0;
                for (size_t c = 0; c < d; c++)
                    dot += (double)qi[c] * kv_at(a, kb, j * d + c);
                s[j] = dot * a->scale;
                if (a->softcap > 0)
                    s[j] = a->softcap * tanh(s[j] / a->softcap);
                s[j] -= slope * fabs(pos - (double)j);
                if (mi)
                    s[j] += mi[j];
                if (s[j] > mx)
                    mx = s[j];
            }
            for (size_t c = 0; c < d; c++)
                acc[c] = 0;
            for (size_t j = first; j < keys; j++) {
                double p = s[j] == -INFINITY ? 0.0 : exp(s[j] - mx); /* masked out */
                sum += p;
                for (size_t c = 0; c < d; c++)
                    acc[c] += p * kv_at(a, vb, j * d + c);
            }
            for (size_t c = 0; c < d; c++)
                oi[c] = first < keys && sum != 0 ? (float)(acc[c] / sum) : 0.0f; /* seeing no key (or only -inf): zeros */
        }
    }
    free(s);
    free(acc);
    return TGL_OK;
}

/* CPU attention: per query row, the scores in double, max-subtracted softmax, weighted sum of V
 * in double. Obviously right rather than fast: it is the oracle for the fused GL kernels. */
#include "cpu_ops.h"

#include <math.h>
#include <stdlib.h>

tgl_status tgl_cpu_attention(tgl_backend *b, const tgl__attention *a)
{
    const size_t d = a->head_dim;
    double *s = malloc((a->seq_kv ? a->seq_kv : 1) * sizeof *s), *acc = malloc(d * sizeof *acc);
    if (!s || !acc) {
        free(s);
        free(acc);
        return tgl__fail(b, TGL_ERR_OUT_OF_MEMORY, "tgl_attention: no host memory for %zu scores", a->seq_kv);
    }
    const float *q = tgl_cpu_at(a->q), *k = a->seq_kv ? tgl_cpu_at(a->k) : NULL, *v = a->seq_kv ? tgl_cpu_at(a->v) : NULL;
    float *o = tgl_cpu_at(a->o);
    for (size_t bh = 0; bh < a->batch * a->heads; bh++) {
        size_t kv = bh / (a->heads / a->heads_kv); /* its key/value head's block */
        const float *kb = k ? k + kv * a->kv_cap * d : NULL, *vb = v ? v + kv * a->kv_cap * d : NULL;
        for (size_t i = 0; i < a->seq_q; i++) {
            const float *qi = q + (bh * a->seq_q + i) * d;
            float *oi = o + (bh * a->seq_q + i) * d;
            size_t keys = kb && vb ? tgl__attention_keys(a, i) : 0; /* k, v absent only when seq_kv is 0 */
            double mx = -INFINITY, sum = 0;
            for (size_t j = 0; j < keys; j++) {
                double dot = 0;
                for (size_t c = 0; c < d; c++)
                    dot += (double)qi[c] * kb[j * d + c];
                s[j] = dot * a->scale;
                if (s[j] > mx)
                    mx = s[j];
            }
            for (size_t c = 0; c < d; c++)
                acc[c] = 0;
            for (size_t j = 0; j < keys; j++) {
                double p = exp(s[j] - mx);
                sum += p;
                for (size_t c = 0; c < d; c++)
                    acc[c] += p * vb[j * d + c];
            }
            for (size_t c = 0; c < d; c++)
                oi[c] = keys ? (float)(acc[c] / sum) : 0.0f; /* a row that sees no key is zeros */
        }
    }
    free(s);
    free(acc);
    return TGL_OK;
}

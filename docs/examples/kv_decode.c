/* A KV-cache decode loop, the core of a decoder-only transformer's generation: the prompt's keys
 * and values are written into a cache of CAP positions per head, causal attention runs over the
 * prompt, then each step appends one position's key and value (one tgl_copy each into a slice of
 * the cache: the new [heads, head_dim] block lands at position t of every head, a stride of CAP
 * rows apart) and attends its query over the positions so far with tgl_attention_kv. Checked
 * against plain C attention at every step.
 * Build against an installed tensorgl:  cc -std=c11 kv_decode.c $(pkg-config --cflags --libs tensorgl) -lm */
#include <tensorgl.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define HEADS 2
#define HD 16    /* head_dim */
#define CAP 12   /* cache positions per head */
#define PROMPT 5
#define STEPS 6  /* PROMPT + STEPS <= CAP */

#define TRY(call)                                                                                   \
    do {                                                                                            \
        tgl_status st_ = (call);                                                                    \
        if (st_) {                                                                                  \
            fprintf(stderr, "%s: %s (%s)\n", #call, tgl_status_string(st_), tgl_last_error(be));    \
            tgl_close(be);                                                                          \
            return 1;                                                                               \
        }                                                                                           \
    } while (0)

/* All keys, values and queries of the run, [position][head][dim] as a model computes them. */
static float keys[CAP][HEADS][HD], values[CAP][HEADS][HD], queries[CAP][HEADS][HD];

/* Attention of position t's query in head h over positions 0..t, in double. */
static void host_attention(int t, int h, double *out)
{
    double score[CAP], max = -INFINITY, sum = 0.0;
    for (int j = 0; j <= t; j++) {
        double s = 0.0;
        for (int d = 0; d < HD; d++)
            s += (double)queries[t][h][d] * keys[j][h][d];
        score[j] = s / sqrt(HD);
        max = score[j] > max ? score[j] : max;
    }
    for (int j = 0; j <= t; j++)
        sum += score[j] = exp(score[j] - max);
    for (int d = 0; d < HD; d++) {
        out[d] = 0.0;
        for (int j = 0; j <= t; j++)
            out[d] += score[j] / sum * values[j][h][d];
    }
}

int main(void)
{
    srand(3);
    for (int t = 0; t < CAP; t++)
        for (int h = 0; h < HEADS; h++)
            for (int d = 0; d < HD; d++) {
                keys[t][h][d] = (float)rand() / RAND_MAX * 2.0f - 1.0f;
                values[t][h][d] = (float)rand() / RAND_MAX * 2.0f - 1.0f;
                queries[t][h][d] = (float)rand() / RAND_MAX * 2.0f - 1.0f;
            }
    tgl_backend *be;
    if (tgl_open(NULL, &be)) {
        fprintf(stderr, "tgl_open: %s\n", tgl_last_error(NULL));
        return 1;
    }
    const float scale = 1.0f / sqrtf(HD);
    tgl_ptr kc, vc, dk, dv, dq, dout;
    TRY(tgl_alloc(be, sizeof(float) * HEADS * CAP * HD, &kc)); /* the caches: [1, HEADS, CAP, HD] */
    TRY(tgl_alloc(be, sizeof(float) * HEADS * CAP * HD, &vc));
    TRY(tgl_alloc(be, sizeof keys, &dk)); /* a model's new keys, values and queries: [position][head][dim] */
    TRY(tgl_alloc(be, sizeof values, &dv));
    TRY(tgl_alloc(be, sizeof queries, &dq));
    TRY(tgl_alloc(be, sizeof(float) * PROMPT * HEADS * HD, &dout));
    TRY(tgl_copy_htod(be, dk, keys, sizeof keys));
    TRY(tgl_copy_htod(be, dv, values, sizeof values));
    TRY(tgl_copy_htod(be, dq, queries, sizeof queries));

    /* Call 0 takes the prompt (positions 0..PROMPT-1), each later call one position. Their keys
     * and values ([position][head][dim]) go into the caches ([head][position][dim]): the same
     * elements, the destination seen with the cache's strides. */
    double worst = 0.0, want[HD];
    for (int call = 0; call <= STEPS; call++) {
        int first = call ? PROMPT + call - 1 : 0, count = call ? 1 : PROMPT;
        size_t shape[3] = {(size_t)count, HEADS, HD};
        tgl_tensor src = tgl_tensor_contiguous(0, TGL_DTYPE_F32, 3, shape);
        tgl_tensor dst = src;
        dst.strides[0] = HD;       /* next position */
        dst.strides[1] = CAP * HD; /* next head */
        for (int kv = 0; kv < 2; kv++) {
            src.data = (kv ? dv : dk) + (tgl_ptr)first * HEADS * HD * sizeof(float);
            dst.data = (kv ? vc : kc) + (tgl_ptr)first * HD * sizeof(float);
            TRY(tgl_copy(be, &dst, &src));
        }
        /* the queries of this call, [1, HEADS, count, HD] (q of a step is [1, HEADS, 1, HD]) */
        tgl_tensor qsrc = tgl_tensor_contiguous(dq + (tgl_ptr)first * HEADS * HD * sizeof(float), TGL_DTYPE_F32, 3, shape);
        tgl_ptr q;
        TRY(tgl_alloc(be, sizeof(float) * count * HEADS * HD, &q));
        tgl_tensor qdst = tgl_tensor_contiguous(q, TGL_DTYPE_F32, 3, shape);
        qdst.strides[0] = HD;                  /* [head][position][dim] */
        qdst.strides[1] = (int64_t)count * HD;
        TRY(tgl_copy(be, &qdst, &qsrc));
        TRY(tgl_attention_kv(be, q, kc, vc, dout, 1, HEADS, (size_t)count, (size_t)(first + count), CAP, HD, scale, 1));
        float got[PROMPT * HEADS * HD];
        TRY(tgl_copy_dtoh(be, got, dout, sizeof(float) * count * HEADS * HD));
        TRY(tgl_free(be, q));
        for (int i = 0; i < count; i++)
            for (int h = 0; h < HEADS; h++) {
                host_attention(first + i, h, want);
                for (int d = 0; d < HD; d++) {
                    double err = fabs(got[(h * count + i) * HD + d] - want[d]);
                    worst = err > worst ? err : worst;
                }
            }
    }
    printf("%d heads x %d dims: a %d-token prompt and %d decode steps over a %d-position cache on %s: largest "
           "difference from the host loops %.2g\n",
           HEADS, HD, PROMPT, STEPS, CAP, tgl_backend_name(be), worst);
    TRY(tgl_free(be, kc));
    TRY(tgl_free(be, vc));
    TRY(tgl_free(be, dk));
    TRY(tgl_free(be, dv));
    TRY(tgl_free(be, dq));
    TRY(tgl_free(be, dout));
    tgl_close(be);
    return worst < 1e-4 ? 0 : 1;
}

/* tgl_attention, tgl_attention_kv and tgl_attention_gqa: checks, then the backend. */
#include "trace.h"
#include "validate.h"

#include <math.h>

/* Elements of n (batch, head) blocks of `per` positions x head_dim of which the last uses only
 * `used` positions. */
static tgl_status blocks_span(tgl_backend *b, const char *arg, size_t n, size_t per, size_t used, size_t head_dim,
                              size_t *out)
{
    size_t lead, rows;
    tgl_status st = tgl__mul(b, arg, n - 1, per, &lead);
    if (st)
        return st;
    if (lead + used < lead)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "%s: size overflows", arg);
    rows = used ? lead + used : 0;
    if ((st = tgl__mul(b, arg, rows, head_dim, out)) || (st = tgl__mul(b, arg, *out, sizeof(float), &(size_t){0})))
        return st;
    return TGL_OK;
}

/* The checks and the backend call of every attention entry point. */
static tgl_status attend(tgl_backend *b, tgl_ptr q, tgl_ptr k, tgl_ptr v, tgl_ptr o, size_t batch, size_t heads,
                         size_t heads_kv, size_t seq_q, size_t seq_kv, size_t kv_capacity, size_t head_dim,
                         float scale, int causal)
{
    tgl_status st = tgl__enter(b);
    if (st)
        return st;
    if (!isfinite(scale))
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "scale: %g is not finite", (double)scale);
    if (kv_capacity < seq_kv)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "kv_capacity: %zu is less than seq_kv %zu", kv_capacity,
                         seq_kv);
    if (heads_kv == 0 || heads % heads_kv)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "heads_kv: %zu does not divide heads (%zu)", heads_kv, heads);
    if (batch == 0 || heads == 0 || seq_q == 0 || head_dim == 0)
        return TGL_OK;
    tgl__attention a = {.batch = batch, .heads = heads, .heads_kv = heads_kv, .seq_q = seq_q, .seq_kv = seq_kv,
                        .kv_cap = kv_capacity, .head_dim = head_dim, .scale = scale, .causal = causal != 0};
    size_t bh = 0, bh_kv = 0, nq = 0, nkv = 0;
    if ((st = tgl__mul(b, "batch x heads", batch, heads, &bh)) || (st = tgl__mul(b, "batch x heads_kv", batch, heads_kv, &bh_kv)) ||
        (st = blocks_span(b, "q", bh, seq_q, seq_q, head_dim, &nq)) ||
        (st = blocks_span(b, "k", bh_kv, kv_capacity, seq_kv, head_dim, &nkv)) ||
        (st = tgl__resolve_array(b, "q", q, nq, sizeof(float), &a.q)) ||
        (st = tgl__resolve_array(b, "o", o, nq, sizeof(float), &a.o)) ||
        (st = tgl__check_disjoint(b, "q", a.q, nq * sizeof(float), a.o, nq * sizeof(float))))
        return st;
    if (seq_kv) {
        if ((st = tgl__resolve_array(b, "k", k, nkv, sizeof(float), &a.k)) ||
            (st = tgl__resolve_array(b, "v", v, nkv, sizeof(float), &a.v)) ||
            (st = tgl__check_disjoint(b, "k", a.k, nkv * sizeof(float), a.o, nq * sizeof(float))) ||
            (st = tgl__check_disjoint(b, "v", a.v, nkv * sizeof(float), a.o, nq * sizeof(float))))
            return st;
    }
    if (!b->vt->attention)
        return tgl__unsupported(b, "tgl_attention");
    return tgl__leave(b, b->vt->attention(b, &a));
}

TGL_API tgl_status tgl_attention_gqa(tgl_backend *b, tgl_ptr q, tgl_ptr k, tgl_ptr v, tgl_ptr o, size_t batch,
                                     size_t heads, size_t heads_kv, size_t seq_q, size_t seq_kv, size_t kv_capacity,
                                     size_t head_dim, float scale, int causal)
{
    if (tgl__hooked(b))
        return TGL__HOOK(ATTENTION_GQA);
    return attend(b, q, k, v, o, batch, heads, heads_kv, seq_q, seq_kv, kv_capacity, head_dim, scale, causal);
}

TGL_API tgl_status tgl_attention_kv(tgl_backend *b, tgl_ptr q, tgl_ptr k, tgl_ptr v, tgl_ptr o, size_t batch,
                                    size_t heads, size_t seq_q, size_t seq_kv, size_t kv_capacity,
                                    size_t head_dim, float scale, int causal)
{
    if (tgl__hooked(b))
        return TGL__HOOK(ATTENTION_KV);
    return attend(b, q, k, v, o, batch, heads, heads, seq_q, seq_kv, kv_capacity, head_dim, scale, causal);
}

TGL_API tgl_status tgl_attention(tgl_backend *b, tgl_ptr q, tgl_ptr k, tgl_ptr v, tgl_ptr o, size_t batch,
                                 size_t heads, size_t seq_q, size_t seq_kv, size_t head_dim, float scale, int causal)
{
    if (tgl__hooked(b))
        return TGL__HOOK(ATTENTION);
    return tgl_attention_kv(b, q, k, v, o, batch, heads, seq_q, seq_kv, seq_kv, head_dim, scale, causal);
}

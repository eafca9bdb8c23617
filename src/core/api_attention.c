/* tgl_attention, tgl_attention_kv, tgl_attention_gqa and tgl_attention_t: checks, then the backend. */
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

/* Resolves a's operands (its shapes, scale and flags set; k and v elements of kv_size bytes) and
 * runs the backend: once, or with per-item key lengths once per run of batch items of equal
 * length (seq_lens NULL: none). */
static tgl_status resolve_and_run(tgl_backend *b, tgl__attention *a, tgl_ptr q, tgl_ptr k, tgl_ptr v, tgl_ptr o,
                                  size_t kv_size, const size_t *seq_lens, size_t mask_bytes)
{
    size_t bh = 0, bh_kv = 0, nq = 0, nkv = 0;
    tgl_status st;
    if ((st = tgl__mul(b, "batch x heads", a->batch, a->heads, &bh)) ||
        (st = tgl__mul(b, "batch x heads_kv", a->batch, a->heads_kv, &bh_kv)) ||
        (st = blocks_span(b, "q", bh, a->seq_q, a->seq_q, a->head_dim, &nq)) ||
        (st = blocks_span(b, "k", bh_kv, a->kv_cap, a->seq_kv, a->head_dim, &nkv)) ||
        (st = tgl__resolve_array(b, "q", q, nq, sizeof(float), &a->q)) ||
        (st = tgl__resolve_array(b, "o", o, nq, sizeof(float), &a->o)) ||
        (st = tgl__check_disjoint(b, "q", a->q, nq * sizeof(float), a->o, nq * sizeof(float))))
        return st;
    if (a->seq_kv) {
        if ((st = tgl__resolve_array(b, "k", k, nkv, kv_size, &a->k)) ||
            (st = tgl__resolve_array(b, "v", v, nkv, kv_size, &a->v)) ||
            (st = tgl__check_disjoint(b, "k", a->k, nkv * kv_size, a->o, nq * sizeof(float))) ||
            (st = tgl__check_disjoint(b, "v", a->v, nkv * kv_size, a->o, nq * sizeof(float))))
            return st;
    }
    if (a->mask.buf && (st = tgl__check_disjoint(b, "mask", a->mask, mask_bytes, a->o, nq * sizeof(float))))
        return st;
    if (!b->vt->attention)
        return tgl__unsupported(b, "tgl_attention");
    if (!seq_lens)
        return b->vt->attention(b, a);
    size_t q_item = a->heads * a->seq_q * a->head_dim * sizeof(float), kv_item = a->heads_kv * a->kv_cap * a->head_dim * kv_size;
    for (size_t b0 = 0, b1; b0 < a->batch; b0 = b1) {
        for (b1 = b0 + 1; b1 < a->batch && seq_lens[b1] == seq_lens[b0];)
            b1++;
        tgl__attention run = *a;
        run.batch = b1 - b0;
        run.seq_kv = seq_lens[b0];
        run.q.offset += b0 * q_item;
        run.o.offset += b0 * q_item;
        if (run.mask.buf)
            run.mask.offset += b0 * a->mask_b * sizeof(float);
        if (run.seq_kv) {
            run.k.offset += b0 * kv_item;
            run.v.offset += b0 * kv_item;
        } else {
            run.k = run.v = (tgl__view){0};
        }
        if ((st = b->vt->attention(b, &run)))
            return st;
    }
    return TGL_OK;
}

/* The checks and the backend call of the flat attention entry points. */
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
    return tgl__leave(b, resolve_and_run(b, &a, q, k, v, o, sizeof(float), NULL, 0));
}

/* tgl_attention_t's mask: f32 [batch or 1, heads or 1, seq_q, seq_kv], non-negative strides, 1
 * along the keys; resolved into a's mask fields (*bytes: the span it covers). */
static tgl_status check_mask(tgl_backend *b, const tgl_tensor *m, tgl__attention *a, size_t *bytes)
{
    const char *fn = "tgl_attention_t";
    size_t n;
    tgl_status st = tgl__tensor_shape(b, fn, "mask", m, TGL__DT(F32), &n);
    if (st)
        return st;
    const size_t want[4] = {a->batch, a->heads, a->seq_q, a->seq_kv};
    if (m->ndim != 4 || (m->shape[0] != 1 && m->shape[0] != want[0]) || (m->shape[1] != 1 && m->shape[1] != want[1]) ||
        m->shape[2] != want[2] || m->shape[3] != want[3])
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "%s: mask must be [%zu or 1, %zu or 1, %zu, %zu] (batch, heads, "
                         "seq_q, seq_kv); it has %zu dims", fn, want[0], want[1], want[2], want[3], m->ndim);
    int64_t s[4];
    for (int i = 0; i < 4; i++) {
        s[i] = m->shape[i] == 1 ? 0 : m->strides[i];
        if (s[i] < 0)
            return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "%s: mask's stride %lld along dim %d is negative", fn,
                             (long long)s[i], i);
    }
    if (m->shape[3] > 1 && s[3] != 1)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "%s: mask's stride along the keys is %lld; 1 is needed", fn,
                         (long long)s[3]);
    tgl__tensor_view tv;
    if (n && (st = tgl__resolve_tensor(b, "mask", m->data, TGL_DTYPE_F32, 4, m->shape, s, &tv)))
        return st;
    a->mask = n ? tv.view : (tgl__view){0};
    a->mask_b = (size_t)s[0];
    a->mask_h = (size_t)s[1];
    a->mask_i = (size_t)s[2];
    *bytes = n ? tv.span * sizeof(float) : 0;
    return TGL_OK;
}

/* tgl_attention_t's checks on its tensors and descriptor, filling a. */
static tgl_status check_t(tgl_backend *b, const tgl_tensor *q, const tgl_tensor *k, const tgl_tensor *v,
                          const tgl_tensor *o, const tgl_attention_desc *d, tgl__attention *a)
{
    const char *fn = "tgl_attention_t";
    if (!q || !k || !v || !o || !d)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn,
                         !q ? "q" : !k ? "k" : !v ? "v" : !o ? "o" : "d");
    size_t n;
    tgl_status st;
    const unsigned f32 = TGL__DT(F32), kv = TGL__DT(F32) | TGL__DT(F16);
    if ((st = tgl__tensor_shape(b, fn, "q", q, f32, &n)) || (st = tgl__tensor_shape(b, fn, "k", k, kv, &n)) ||
        (st = tgl__tensor_shape(b, fn, "v", v, kv, &n)) || (st = tgl__tensor_shape(b, fn, "o", o, f32, &n)))
        return st;
    const tgl_tensor *ts[4] = {q, k, v, o};
    static const char *const names[4] = {"q", "k", "v", "o"};
    for (int i = 0; i < 4; i++) {
        if (ts[i]->ndim != 4)
            return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "%s: %s has %zu dims; q and o are [batch, heads, seq_q, "
                             "head_dim], k and v [batch, heads_kv, kv_capacity, head_dim]", fn, names[i], ts[i]->ndim);
        if (!tgl__row_major(ts[i]->ndim, ts[i]->shape, ts[i]->strides))
            return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "%s: %s is not contiguous (row-major)", fn, names[i]);
    }
    for (int i = 0; i < 4; i++)
        if (o->shape[i] != q->shape[i] || v->shape[i] != k->shape[i])
            return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "%s: %s's dim %d is %zu, %s's %zu", fn,
                             o->shape[i] != q->shape[i] ? "o" : "v", i, o->shape[i] != q->shape[i] ? o->shape[i] : v->shape[i],
                             o->shape[i] != q->shape[i] ? "q" : "k", o->shape[i] != q->shape[i] ? q->shape[i] : k->shape[i]);
    if (k->dtype != v->dtype)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "%s: k is %s, v %s; both f32 or both f16", fn,
                         tgl_dtype_name(k->dtype), tgl_dtype_name(v->dtype));
    if (k->shape[0] != q->shape[0] || k->shape[3] != q->shape[3])
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "%s: k is [%zu, %zu, %zu, %zu], q [%zu, %zu, %zu, %zu]: batch and "
                         "head_dim must match", fn, k->shape[0], k->shape[1], k->shape[2], k->shape[3], q->shape[0],
                         q->shape[1], q->shape[2], q->shape[3]);
    if (k->shape[1] == 0 ? q->shape[1] != 0 : q->shape[1] % k->shape[1] != 0)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "%s: k's %zu heads do not divide q's %zu", fn, k->shape[1],
                         q->shape[1]);
    if (!isfinite(d->scale))
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "%s: scale %g is not finite", fn, (double)d->scale);
    if (!(d->softcap >= 0) || !isfinite(d->softcap) || !(d->alibi_max_bias >= 0) || !isfinite(d->alibi_max_bias))
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "%s: softcap %g and alibi_max_bias %g must be finite and >= 0", fn,
                         (double)d->softcap, (double)d->alibi_max_bias);
    size_t cap = k->shape[2], seq_kv = d->seq_kv ? d->seq_kv : cap;
    if (seq_kv > cap)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "%s: seq_kv %zu is past kv_capacity %zu", fn, seq_kv, cap);
    for (size_t i = 0; d->seq_lens && i < q->shape[0]; i++)
        if (d->seq_lens[i] > seq_kv)
            return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "%s: seq_lens[%zu] = %zu is past seq_kv %zu", fn, i,
                             d->seq_lens[i], seq_kv);
    *a = (tgl__attention){.batch = q->shape[0], .heads = q->shape[1], .heads_kv = k->shape[1], .seq_q = q->shape[2],
                          .seq_kv = seq_kv, .kv_cap = cap, .head_dim = q->shape[3], .causal = d->causal != 0,
                          .kv_f16 = k->dtype == TGL_DTYPE_F16, .window = d->window, .softcap = d->softcap,
                          .alibi_max_bias = d->alibi_max_bias};
    a->scale = d->scale != 0.0f || !a->head_dim ? d->scale : (float)(1.0 / sqrt((double)a->head_dim));
    return TGL_OK;
}

TGL_API tgl_status tgl_attention_t(tgl_backend *b, const tgl_tensor *q, const tgl_tensor *k, const tgl_tensor *v,
                                   const tgl_tensor *mask, const tgl_tensor *o, const tgl_attention_desc *d)
{
    if (tgl__hooked(b))
        return TGL__HOOK(ATTENTION_T);
    tgl_status st = tgl__enter(b);
    if (st)
        return st;
    tgl__attention a = {0};
    size_t mask_bytes = 0;
    if ((st = check_t(b, q, k, v, o, d, &a)) || (mask && (st = check_mask(b, mask, &a, &mask_bytes))))
        return tgl__leave(b, st);
    if (a.batch == 0 || a.heads == 0 || a.seq_q == 0 || a.head_dim == 0)
        return tgl__leave(b, TGL_OK);
    return tgl__leave(b, resolve_and_run(b, &a, q->data, k->data, v->data, o->data, tgl_dtype_size(k->dtype),
                                         d->seq_lens, mask_bytes));
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

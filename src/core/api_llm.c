/* tgl_rope and tgl_gather_rows: checks, then the backend. */
#include "trace.h"
#include "validate.h"

#include <math.h>

#define F32 sizeof(float)

TGL_API tgl_status tgl_rope(tgl_backend *b, tgl_ptr in, tgl_ptr out, size_t batch, size_t seq, size_t heads,
                            size_t head_dim, size_t pos_offset, float theta, tgl_rope_mode mode)
{
    if (tgl__hooked(b))
        return TGL__HOOK(ROPE);
    tgl_status st = tgl__enter(b);
    size_t n = 0;
    tgl__view vi, vo;
    if (st)
        return st;
    if ((unsigned)mode > TGL_ROPE_INTERLEAVED)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "mode: %d is not a tgl_rope_mode", (int)mode);
    if (head_dim % 2)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "head_dim: %zu is odd", head_dim);
    if (!(isfinite(theta) && theta > 1.0f))
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "theta: %g is not finite and > 1", (double)theta);
    if (pos_offset + seq < pos_offset || pos_offset + seq > ((size_t)1 << 24))
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "positions up to %zu + %zu: f32 holds them exactly only "
                         "below 2^24", pos_offset, seq);
    if ((st = tgl__mul(b, "batch x seq", batch, seq, &n)) || (st = tgl__mul(b, "x heads", n, heads, &n)) ||
        (st = tgl__mul(b, "x head_dim", n, head_dim, &n)) || (st = tgl__mul(b, "bytes", n, F32, &(size_t){0})))
        return st;
    if (n == 0)
        return TGL_OK;
    if ((st = tgl__resolve_array(b, "in", in, n, F32, &vi)) || (st = tgl__resolve_array(b, "out", out, n, F32, &vo)) ||
        (st = tgl__check_alias(b, "in", vi, n * F32, vo, n * F32)))
        return st;
    if (!b->vt->rope)
        return tgl__unsupported(b, "tgl_rope");
    return tgl__leave(b, b->vt->rope(b, vi, vo, batch * seq, seq, heads, head_dim, pos_offset, theta, mode));
}

TGL_API tgl_status tgl_gather_rows(tgl_backend *b, tgl_ptr table, tgl_ptr ids, tgl_ptr out, size_t table_rows,
                                   size_t cols, size_t n_ids)
{
    if (tgl__hooked(b))
        return TGL__HOOK(GATHER_ROWS);
    tgl_status st = tgl__enter(b);
    size_t table_n = 0, out_n = 0;
    tgl__view vt, vi, vo;
    if (st)
        return st;
    if (table_rows > (size_t)INT32_MAX + 1)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "table_rows: %zu rows cannot all be named by int32 ids",
                         table_rows);
    if ((st = tgl__mul(b, "table_rows x cols", table_rows, cols, &table_n)) ||
        (st = tgl__mul(b, "n_ids x cols", n_ids, cols, &out_n)) ||
        (st = tgl__mul(b, "bytes", table_n > out_n ? table_n : out_n, F32, &(size_t){0})))
        return st;
    if (n_ids == 0 || cols == 0)
        return TGL_OK;
    if (table_rows == 0)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "table_rows: 0, so no id is valid");
    if ((st = tgl__resolve_array(b, "table", table, table_n, F32, &vt)) ||
        (st = tgl__resolve_array(b, "ids", ids, n_ids, sizeof(int32_t), &vi)) ||
        (st = tgl__resolve_array(b, "out", out, out_n, F32, &vo)) ||
        (st = tgl__check_disjoint(b, "table", vt, table_n * F32, vo, out_n * F32)) ||
        (st = tgl__check_disjoint(b, "ids", vi, n_ids * sizeof(int32_t), vo, out_n * F32)))
        return st;
    if (!b->vt->gather_rows)
        return tgl__unsupported(b, "tgl_gather_rows");
    size_t bad_pos = 0;
    int32_t bad_id = 0;
    st = b->vt->gather_rows(b, vt, vi, vo, table_rows, cols, n_ids, &bad_pos, &bad_id);
    if (st == TGL_ERR_INVALID_ARGUMENT)
        return tgl__fail(b, st, "ids[%zu] = %d is outside [0, %zu); nothing was written", bad_pos, (int)bad_id,
                         table_rows);
    return tgl__leave(b, st);
}

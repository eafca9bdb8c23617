/* The call hook: every traced or profiled public call passes here once, with its C arguments,
 * and is made again from the captured form (so what is recorded is exactly what ran). */
#include "trace.h"


/* Records and times the captured call around the real one, which is made from the captured
 * form (so what is recorded is exactly what ran); returns the real call's status. */
static tgl_status run(tgl_backend *b, const tgl__call *c)
{
    b->hook_busy = 1;
    if (b->trace)
        tgl__trace_before(b, c);
    if (b->profile)
        tgl__profile_call_start(b);
    tgl_status st = tgl__call_invoke(b, c);
    if (b->profile)
        tgl__profile_call_end(b, c, st);
    if (b->trace)
        tgl__trace_after(b, c, st);
    b->hook_busy = 0;
    return st;
}

#define PACK_A(k, name) TGL__PUT_##k(tgl__cur, name); tgl__cur++;
#define PACK_E(t, name) tgl__cur->u = (uint64_t)(int64_t)(name); tgl__cur++;
#define PACK_N(k, p, count) tgl__cur->ptr = (p); tgl__cur->u = (uint64_t)(count); tgl__cur++;

/* tgl__hook_<ID>: the row's parameters, typed as the public prototype, captured in order. */
#define HOOK(id, cname, family, slot, dtypes, cmp, cost, warm)                                          \
    tgl_status tgl__hook_##id(tgl_backend *b TGL__ARGS_##id(TGL__PARAM_A, TGL__PARAM_E, TGL__PARAM_N)) \
    {                                                                                             \
        tgl__call tgl__rec = {.fn = TGL__FN_##id};                                                \
        tgl__arg *tgl__cur = tgl__rec.args;                                                       \
        TGL__ARGS_##id(PACK_A, PACK_E, PACK_N)                                                    \
        (void)tgl__cur;                                                                           \
        return run(b, &tgl__rec);                                                                 \
    }
TGL__OPS(HOOK)
#undef HOOK

tgl_status tgl__zero_alloc(tgl_backend *b, tgl_ptr p, size_t bytes)
{
    static const uint8_t zeros[4];
    size_t floats = bytes / 4;
    tgl_status st = floats ? tgl_fill(b, p, 0.0f, floats) : TGL_OK;
    if (!st && bytes % 4)
        st = tgl_copy_htod(b, p + floats * 4, zeros, bytes % 4);
    return st;
}

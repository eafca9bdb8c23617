/* The call hook: every traced or profiled public call passes here once, with its C arguments,
 * and is made again from the captured form (so what is recorded is exactly what ran). */
#include "trace.h"

#include <stdarg.h>

/* Reads the C arguments of fn from ap into c, as its signature says. */
static void capture(tgl__call *c, va_list ap)
{
    const char *sig = tgl__fn_signature(c->fn);
    for (size_t i = 0; i < TGL__CALL_MAX_ARGS && sig[i]; i++) {
        tgl__arg *a = &c->args[i];
        switch (sig[i]) {
        case 'e': a->u = (uint64_t)(int64_t)va_arg(ap, int); break;
        case 'z': a->u = va_arg(ap, size_t); break;
        case 'f': {
            union { float f; uint32_t u; } v = {.f = (float)va_arg(ap, double)};
            a->u = v.u;
            break;
        }
        case 'S': a->ptr = va_arg(ap, const size_t *); a->u = va_arg(ap, size_t); break;
        case 'q': a->ptr = va_arg(ap, const size_t *); break;
        case 'L': a->ptr = va_arg(ap, const tgl_ptr *); a->u = va_arg(ap, size_t); break;
        case 's': a->ptr = va_arg(ap, const char *); break;
        case 'c': a->ptr = va_arg(ap, const tgl_conv2d_desc *); break;
        case 'D': a->ptr = va_arg(ap, const void *); break;
        case 'H': a->ptr = va_arg(ap, void *); break;
        case 'A': a->ptr = va_arg(ap, tgl_ptr *); break;
        default: a->u = va_arg(ap, tgl_ptr); break; /* device pointers */
        }
    }
}

tgl_status tgl__hook_call(tgl_backend *b, tgl__fn fn, ...)
{
    tgl__call c = {.fn = fn};
    va_list ap;
    va_start(ap, fn);
    capture(&c, ap);
    va_end(ap);

    b->hook_busy = 1;
    if (b->trace)
        tgl__trace_before(b, &c);
    if (b->profile)
        tgl__profile_call_start(b);
    tgl_status st = tgl__call_invoke(b, &c);
    if (b->profile)
        tgl__profile_call_end(b, &c, st);
    if (b->trace)
        tgl__trace_after(b, &c, st);
    b->hook_busy = 0;
    return st;
}

tgl_status tgl__zero_alloc(tgl_backend *b, tgl_ptr p, size_t bytes)
{
    static const uint8_t zeros[4];
    size_t floats = bytes / 4;
    tgl_status st = floats ? tgl_fill(b, p, 0.0f, floats) : TGL_OK;
    if (!st && bytes % 4)
        st = tgl_copy_htod(b, p + floats * 4, zeros, bytes % 4);
    return st;
}

/* tgl_fill, tgl_scale_add and the f16 casts: checks, then the backend. */
#include "trace.h"
#include "validate.h"

#define F32 sizeof(float)
#define F16 2u

TGL_API tgl_status tgl_fill(tgl_backend *b, tgl_ptr out, float value, size_t n)
{
    if (tgl__hooked(b))
        return TGL__HOOK(FILL);
    tgl_status st = tgl__enter(b);
    tgl__view vo;
    if (st || n == 0 || (st = tgl__resolve_array(b, "out", out, n, F32, &vo)))
        return st;
    if (!b->vt->fill)
        return tgl__unsupported(b, "tgl_fill");
    return tgl__leave(b, b->vt->fill(b, vo, value, n));
}

TGL_API tgl_status tgl_scale_add(tgl_backend *b, float alpha, tgl_ptr x, float beta, tgl_ptr y, size_t n)
{
    if (tgl__hooked(b))
        return TGL__HOOK(SCALE_ADD);
    tgl_status st = tgl__enter(b);
    tgl__view vx, vy;
    if (st || n == 0)
        return st;
    if ((st = tgl__resolve_array(b, "x", x, n, F32, &vx)) || (st = tgl__resolve_array(b, "y", y, n, F32, &vy)) ||
        (st = tgl__check_alias(b, "x", vx, n * F32, vy, n * F32)))
        return st;
    if (!b->vt->scale_add)
        return tgl__unsupported(b, "tgl_scale_add");
    return tgl__leave(b, b->vt->scale_add(b, alpha, vx, beta, vy, n));
}

static tgl_status cast(tgl_backend *b, int to_f16, tgl_ptr in, tgl_ptr out, size_t n)
{
    const char *fn = to_f16 ? "tgl_cast_f32_f16" : "tgl_cast_f16_f32";
    size_t in_size = to_f16 ? F32 : F16, out_size = to_f16 ? F16 : F32;
    tgl_status st = tgl__enter(b);
    tgl__view vi, vo;
    if (st || n == 0)
        return st;
    if ((st = tgl__resolve_array(b, "in", in, n, in_size, &vi)) ||
        (st = tgl__resolve_array(b, "out", out, n, out_size, &vo)) ||
        (st = tgl__check_disjoint(b, "in", vi, n * in_size, vo, n * out_size)))
        return st;
    if (!b->vt->cast)
        return tgl__unsupported(b, fn);
    return tgl__leave(b, b->vt->cast(b, to_f16, vi, vo, n));
}

TGL_API tgl_status tgl_cast_f32_f16(tgl_backend *b, tgl_ptr in, tgl_ptr out, size_t n)
{
    if (tgl__hooked(b))
        return TGL__HOOK(CAST_F32_F16);
    return cast(b, 1, in, out, n);
}

TGL_API tgl_status tgl_cast_f16_f32(tgl_backend *b, tgl_ptr in, tgl_ptr out, size_t n)
{
    if (tgl__hooked(b))
        return TGL__HOOK(CAST_F16_F32);
    return cast(b, 0, in, out, n);
}

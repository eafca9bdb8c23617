/* Public memory and op entry points: each validates every argument once, then calls the
 * backend. Nothing reaches a backend that could make it change a buffer and then fail on an
 * argument. */
#include "internal.h"

#include <string.h>

/* Every call on a backend starts here: NULL and sticky device loss. */
static tgl_status enter(tgl_backend *b)
{
    if (!b)
        return tgl__fail(NULL, TGL_ERR_INVALID_ARGUMENT, "b: NULL backend");
    if (b->lost)
        return tgl__fail(b, TGL_ERR_DEVICE_LOST, "the device was lost earlier; close this backend");
    if (b->vt->activate) {
        tgl_status st = b->vt->activate(b);
        if (st == TGL_ERR_DEVICE_LOST)
            b->lost = 1;
        return st;
    }
    return TGL_OK;
}

static tgl_status resolve(tgl_backend *b, const char *arg, tgl_ptr p, size_t bytes, tgl__view *v)
{
    uint64_t offset;
    tgl__handle_result r = tgl__handles_lookup(&b->handles, p, bytes, &v->buf, &offset, NULL);
    if (r != TGL__HANDLE_OK)
        return tgl__fail(b, TGL_ERR_INVALID_POINTER, "%s (0x%llx, %zu bytes): %s", arg,
                         (unsigned long long)p, bytes, tgl__handle_result_string(r));
    v->offset = (size_t)offset;
    return TGL_OK;
}

static tgl_status f32_bytes(tgl_backend *b, size_t n, size_t *bytes)
{
    if (n > SIZE_MAX / sizeof(float))
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "n: %zu elements overflow a byte count", n);
    *bytes = n * sizeof(float);
    return TGL_OK;
}

/* An f32 operand of n elements: resolved, in range and 4-byte aligned. */
static tgl_status resolve_f32(tgl_backend *b, const char *arg, tgl_ptr p, size_t n, tgl__view *v)
{
    size_t bytes = 0;
    tgl_status st = f32_bytes(b, n, &bytes);
    if (st || (st = resolve(b, arg, p, bytes, v)))
        return st;
    if (v->offset % sizeof(float))
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "%s: offset %zu is not 4-byte aligned for f32",
                         arg, v->offset);
    return TGL_OK;
}

/* Two ranges of one allocation that share bytes. */
static int overlaps(tgl__view x, size_t xbytes, tgl__view y, size_t ybytes)
{
    return x.buf == y.buf && x.offset < y.offset + ybytes && y.offset < x.offset + xbytes;
}

/* Element-wise ops allow out == in exactly; any other overlap reads values already written. */
static tgl_status check_alias(tgl_backend *b, const char *in_arg, tgl__view in, tgl__view out,
                              size_t bytes)
{
    if (overlaps(in, bytes, out, bytes) && in.offset != out.offset)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT,
                         "out partially overlaps %s (offsets %zu and %zu): use the same pointer "
                         "or disjoint ranges", in_arg, out.offset, in.offset);
    return TGL_OK;
}

static tgl_status leave(tgl_backend *b, tgl_status st)
{
    if (st == TGL_ERR_DEVICE_LOST)
        b->lost = 1;
    return st;
}

TGL_API tgl_status tgl_alloc(tgl_backend *b, size_t bytes, tgl_ptr *out)
{
    tgl_status st = enter(b);
    if (st)
        return st;
    if (!out)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "out: NULL");
    *out = 0;
    if (bytes == 0)
        return TGL_OK;
    if ((uint64_t)bytes > TGL__MAX_ALLOC_BYTES)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "bytes: %zu exceeds the largest allocation (2^%d)",
                         bytes, TGL__OFFSET_BITS);
    if (b->handles.live >= TGL__MAX_SLOTS)
        return tgl__fail(b, TGL_ERR_OUT_OF_MEMORY, "handle table full: %u live allocations",
                         b->handles.live);
    void *buf;
    if ((st = b->vt->buffer_create(b, bytes, &buf)))
        return leave(b, st);
    if (tgl__handles_insert(&b->handles, buf, bytes, out) != TGL__HANDLE_OK) {
        b->vt->buffer_destroy(b, buf);
        return tgl__fail(b, TGL_ERR_OUT_OF_MEMORY, "no host memory to grow the handle table");
    }
    return TGL_OK;
}

TGL_API tgl_status tgl_free(tgl_backend *b, tgl_ptr p)
{
    /* Freeing after device loss is still allowed: it only releases host-side state. */
    if (!b)
        return tgl__fail(NULL, TGL_ERR_INVALID_ARGUMENT, "b: NULL backend");
    if (p == 0)
        return TGL_OK;
    void *buf;
    tgl__handle_result r = tgl__handles_remove(&b->handles, p, &buf);
    if (r != TGL__HANDLE_OK)
        return tgl__fail(b, TGL_ERR_INVALID_POINTER, "p (0x%llx): %s", (unsigned long long)p,
                         tgl__handle_result_string(r));
    b->vt->buffer_destroy(b, buf);
    return TGL_OK;
}

TGL_API tgl_status tgl_copy_htod(tgl_backend *b, tgl_ptr dst, const void *src, size_t bytes)
{
    tgl_status st = enter(b);
    tgl__view d;
    if (st || bytes == 0)
        return st;
    if (!src)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "src: NULL host pointer");
    if ((st = resolve(b, "dst", dst, bytes, &d)))
        return st;
    return leave(b, b->vt->upload(b, d, src, bytes));
}

TGL_API tgl_status tgl_copy_dtoh(tgl_backend *b, void *dst, tgl_ptr src, size_t bytes)
{
    tgl_status st = enter(b);
    tgl__view s;
    if (st || bytes == 0)
        return st;
    if (!dst)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "dst: NULL host pointer");
    if ((st = resolve(b, "src", src, bytes, &s)))
        return st;
    return leave(b, b->vt->download(b, dst, s, bytes));
}

TGL_API tgl_status tgl_copy_dtod(tgl_backend *b, tgl_ptr dst, tgl_ptr src, size_t bytes)
{
    tgl_status st = enter(b);
    tgl__view d, s;
    if (st || bytes == 0)
        return st;
    if ((st = resolve(b, "dst", dst, bytes, &d)) || (st = resolve(b, "src", src, bytes, &s)))
        return st;
    if (overlaps(d, bytes, s, bytes))
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "dst and src overlap (offsets %zu and %zu, %zu bytes)",
                         d.offset, s.offset, bytes);
    return leave(b, b->vt->copy(b, d, s, bytes));
}

TGL_API tgl_status tgl_synchronize(tgl_backend *b)
{
    tgl_status st = enter(b);
    return st ? st : leave(b, b->vt->synchronize(b));
}

TGL_API tgl_status tgl_unary(tgl_backend *b, tgl_unary_op op, tgl_ptr in, tgl_ptr out, size_t n)
{
    tgl_status st = enter(b);
    tgl__view vi, vo;
    size_t bytes = 0;
    if (st)
        return st;
    if ((unsigned)op >= TGL_UNARY_COUNT)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "op: %d is not a tgl_unary_op", (int)op);
    if (n == 0)
        return TGL_OK;
    if ((st = resolve_f32(b, "in", in, n, &vi)) || (st = resolve_f32(b, "out", out, n, &vo)) ||
        (st = f32_bytes(b, n, &bytes)) || (st = check_alias(b, "in", vi, vo, bytes)))
        return st;
    if (!b->vt->unary)
        return tgl__fail(b, TGL_ERR_UNSUPPORTED, "tgl_unary: not implemented by the %s backend", b->vt->name);
    return leave(b, b->vt->unary(b, op, vi, vo, n));
}

TGL_API tgl_status tgl_binary(tgl_backend *b, tgl_binary_op op, tgl_ptr a, tgl_ptr bb, tgl_ptr out,
                              size_t n)
{
    tgl_status st = enter(b);
    tgl__view va, vb, vo;
    size_t bytes = 0;
    if (st)
        return st;
    if ((unsigned)op >= TGL_BINARY_COUNT)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "op: %d is not a tgl_binary_op", (int)op);
    if (n == 0)
        return TGL_OK;
    if ((st = resolve_f32(b, "a", a, n, &va)) || (st = resolve_f32(b, "bb", bb, n, &vb)) ||
        (st = resolve_f32(b, "out", out, n, &vo)) || (st = f32_bytes(b, n, &bytes)) ||
        (st = check_alias(b, "a", va, vo, bytes)) || (st = check_alias(b, "bb", vb, vo, bytes)))
        return st;
    if (!b->vt->binary)
        return tgl__fail(b, TGL_ERR_UNSUPPORTED, "tgl_binary: not implemented by the %s backend", b->vt->name);
    return leave(b, b->vt->binary(b, op, va, vb, vo, n));
}

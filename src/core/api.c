/* Public memory and op entry points: each validates every argument once, then calls the
 * backend. Nothing reaches a backend that could make it change a buffer and then fail on an
 * argument. */
#include "trace.h"
#include "validate.h"

#include <string.h>

#define F32 sizeof(float)

int tgl__within_budget(const tgl_backend *b, uint64_t bytes)
{
    uint64_t max = b->config.max_memory, used = b->mem_in_use + b->mem_scratch;
    return !max || bytes <= max - (used < max ? used : max);
}

/* Whether `bytes` more fit under TGL_MAX_MEMORY, once more after the backend gave back the
 * buffers it keeps between calls (they are counted too, but an allocation comes first). */
static int make_room(tgl_backend *b, size_t bytes)
{
    if (tgl__within_budget(b, bytes))
        return 1;
    if (!b->mem_scratch || !b->vt->release_scratch)
        return 0;
    b->vt->release_scratch(b);
    return tgl__within_budget(b, bytes);
}

void tgl__temp_release(tgl_backend *b)
{
    if (b->temp_keep && !b->temp_keep_busy)
        b->vt->buffer_destroy(b, b->temp_keep);
    if (!b->temp_keep_busy) {
        b->temp_keep = NULL;
        b->temp_keep_bytes = 0;
    }
}

/* A device buffer of `bytes`; where the device has no room, once more after the kept
 * temporary buffer and the backend's kept buffers are given back. */
static tgl_status create_buffer(tgl_backend *b, size_t bytes, void **buf)
{
    tgl_status st = b->vt->buffer_create(b, bytes, buf);
    int spare = (b->temp_keep && !b->temp_keep_busy) || (b->mem_scratch && b->vt->release_scratch);
    if (st == TGL_ERR_OUT_OF_MEMORY && spare) {
        tgl__temp_release(b);
        if (b->vt->release_scratch)
            b->vt->release_scratch(b);
        st = b->vt->buffer_create(b, bytes, buf);
    }
    return st;
}

/* The largest temporary buffer kept between calls: an eighth of TGL_MAX_MEMORY where it is
 * set, else a sixteenth of the device's memory (256 MiB where the backend does not say). */
static uint64_t temp_keep_cap(tgl_backend *b)
{
    if (b->config.max_memory)
        return b->config.max_memory / 8;
    struct tgl_memory_info info;
    memset(&info, 0, sizeof info);
    b->vt->memory_info(b, &info);
    return info.device_total ? info.device_total / 16 : (uint64_t)256 << 20;
}

TGL_API tgl_status tgl_alloc(tgl_backend *b, size_t bytes, tgl_ptr *out)
{
    if (tgl__hooked(b))
        return TGL__HOOK(ALLOC);
    tgl_status st = tgl__enter_host(b); /* buffer_create activates when it creates a buffer */
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
    if (!make_room(b, bytes))
        return tgl__fail(b, TGL_ERR_OUT_OF_MEMORY,
                         "tgl_alloc: %zu bytes would take the live allocations (%llu bytes) and the backend's kept "
                         "buffers (%llu) past TGL_MAX_MEMORY (%llu)", bytes, (unsigned long long)b->mem_in_use,
                         (unsigned long long)b->mem_scratch, (unsigned long long)b->config.max_memory);
    if (b->handles.live >= TGL__MAX_SLOTS)
        return tgl__fail(b, TGL_ERR_OUT_OF_MEMORY, "handle table full: %u live allocations",
                         b->handles.live);
    void *buf;
    if ((st = create_buffer(b, bytes, &buf)))
        return tgl__leave(b, st);
    if (tgl__handles_insert(&b->handles, buf, bytes, out) != TGL__HANDLE_OK) {
        b->vt->buffer_destroy(b, buf);
        return tgl__fail(b, TGL_ERR_OUT_OF_MEMORY, "no host memory to grow the handle table");
    }
    b->mem_in_use += bytes;
    if (b->mem_in_use > b->mem_peak)
        b->mem_peak = b->mem_in_use;
    return TGL_OK;
}

TGL_API tgl_status tgl_free(tgl_backend *b, tgl_ptr p)
{
    if (tgl__hooked(b))
        return TGL__HOOK(FREE);
    /* Freeing after device loss is still allowed: it only releases host-side state. */
    if (!b)
        return tgl__fail(NULL, TGL_ERR_INVALID_ARGUMENT, "b: NULL backend");
    if (p == 0)
        return TGL_OK;
    void *buf;
    uint64_t offset = 0, bytes = 0;
    tgl__handles_lookup(&b->handles, p, 0, &buf, &offset, &bytes); /* its size, for the accounting */
    tgl__handle_result r = tgl__handles_remove(&b->handles, p, &buf);
    if (r != TGL__HANDLE_OK)
        return tgl__fail(b, TGL_ERR_INVALID_POINTER, "p (0x%llx): %s", (unsigned long long)p,
                         tgl__handle_result_string(r));
    b->vt->buffer_destroy(b, buf);
    b->mem_in_use -= bytes;
    return TGL_OK;
}

tgl_status tgl__temp_create(tgl_backend *b, const char *fn, size_t bytes, void **buf)
{
    *buf = NULL;
    if ((uint64_t)bytes > TGL__MAX_ALLOC_BYTES)
        return tgl__fail(b, TGL_ERR_OUT_OF_MEMORY, "%s: a temporary buffer of %zu bytes exceeds the largest allocation "
                         "(2^%d)", fn, bytes, TGL__OFFSET_BITS);
    if (!make_room(b, bytes))
        return tgl__fail(b, TGL_ERR_OUT_OF_MEMORY,
                         "%s: its temporary buffer of %zu bytes would take the live allocations (%llu bytes) and the "
                         "backend's kept buffers (%llu) past TGL_MAX_MEMORY (%llu)", fn, bytes,
                         (unsigned long long)b->mem_in_use, (unsigned long long)b->mem_scratch,
                         (unsigned long long)b->config.max_memory);
    if (b->temp_keep && !b->temp_keep_busy && b->temp_keep_bytes >= bytes) {
        *buf = b->temp_keep;
        b->temp_keep_busy = 1;
    } else {
        tgl_status st = create_buffer(b, bytes, buf);
        if (st)
            return st;
    }
    b->mem_in_use += bytes;
    if (b->mem_in_use > b->mem_peak)
        b->mem_peak = b->mem_in_use;
    return TGL_OK;
}

void tgl__temp_destroy(tgl_backend *b, void *buf, size_t bytes)
{
    b->mem_in_use -= bytes;
    if (buf == b->temp_keep) {
        b->temp_keep_busy = 0;
        return;
    }
    /* kept in place of a smaller one (the calls that need temporaries repeat, and grow) */
    if (!b->temp_keep_busy && bytes > b->temp_keep_bytes && bytes <= temp_keep_cap(b)) {
        tgl__temp_release(b);
        b->temp_keep = buf;
        b->temp_keep_bytes = bytes;
        return;
    }
    b->vt->buffer_destroy(b, buf);
}

TGL_API tgl_status tgl_memory_info(tgl_backend *b, struct tgl_memory_info *info)
{
    tgl_status st = tgl__enter(b);
    if (st)
        return st;
    if (!info)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "info: NULL");
    memset(info, 0, sizeof *info);
    b->vt->memory_info(b, info);
    if (b->temp_keep && !b->temp_keep_busy) { /* held for the next call's temporary buffer */
        info->reserved += b->temp_keep_bytes;
        info->pooled += b->temp_keep_bytes;
    }
    info->in_use = b->mem_in_use;
    info->peak = b->mem_peak;
    return TGL_OK;
}

TGL_API tgl_status tgl_copy_htod(tgl_backend *b, tgl_ptr dst, const void *src, size_t bytes)
{
    if (tgl__hooked(b))
        return TGL__HOOK(COPY_HTOD);
    tgl_status st = tgl__enter(b);
    tgl__view d;
    if (st || bytes == 0)
        return st;
    if (!src)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "src: NULL host pointer");
    if ((st = tgl__resolve(b, "dst", dst, bytes, &d)))
        return st;
    return tgl__leave(b, b->vt->upload(b, d, src, bytes));
}

TGL_API tgl_status tgl_copy_dtoh(tgl_backend *b, void *dst, tgl_ptr src, size_t bytes)
{
    if (tgl__hooked(b))
        return TGL__HOOK(COPY_DTOH);
    tgl_status st = tgl__enter(b);
    tgl__view s;
    if (st || bytes == 0)
        return st;
    if (!dst)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "dst: NULL host pointer");
    if ((st = tgl__resolve(b, "src", src, bytes, &s)))
        return st;
    return tgl__leave(b, b->vt->download(b, dst, s, bytes));
}

TGL_API tgl_status tgl_copy_dtod(tgl_backend *b, tgl_ptr dst, tgl_ptr src, size_t bytes)
{
    if (tgl__hooked(b))
        return TGL__HOOK(COPY_DTOD);
    tgl_status st = tgl__enter(b);
    tgl__view d, s;
    if (st || bytes == 0)
        return st;
    if ((st = tgl__resolve(b, "dst", dst, bytes, &d)) || (st = tgl__resolve(b, "src", src, bytes, &s)))
        return st;
    if (tgl__overlaps(d, bytes, s, bytes))
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "dst and src overlap (offsets %zu and %zu, %zu bytes)",
                         d.offset, s.offset, bytes);
    return tgl__leave(b, b->vt->copy(b, d, s, bytes));
}

TGL_API tgl_status tgl_synchronize(tgl_backend *b)
{
    if (tgl__hooked(b))
        return TGL__HOOK(SYNCHRONIZE);
    tgl_status st = tgl__enter(b);
    return st ? st : tgl__leave(b, b->vt->synchronize(b));
}

TGL_API tgl_status tgl_detach(tgl_backend *b)
{
    tgl_status st = tgl__enter_host(b);
    return st || !b->vt->detach ? st : tgl__leave(b, b->vt->detach(b));
}

TGL_API tgl_status tgl_unary(tgl_backend *b, tgl_unary_op op, tgl_ptr in, tgl_ptr out, size_t n)
{
    if (tgl__hooked(b))
        return TGL__HOOK(UNARY);
    tgl_status st = tgl__enter(b);
    tgl__view vi, vo;
    if (st)
        return st;
    if ((unsigned)op >= TGL_UNARY_COUNT)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "op: %d is not a tgl_unary_op", (int)op);
    if (!(tgl__unary_dtypes(op) & TGL__DT(F32)) || tgl__unary_bool_out(op))
        return tgl__fail(b, TGL_ERR_UNSUPPORTED, "op: %s takes i32 or bool or writes bool: tgl_unary_t runs it",
                         tgl_unary_name(op));
    if (n == 0)
        return TGL_OK;
    if ((st = tgl__resolve_array(b, "in", in, n, F32, &vi)) ||
        (st = tgl__resolve_array(b, "out", out, n, F32, &vo)) ||
        (st = tgl__check_alias(b, "in", vi, n * F32, vo, n * F32)))
        return st;
    if (op >= TGL__UNARY_FLAT_KERNELS)
        return tgl__leave(b, tgl__flat_tew(b, TGL__TEW_UNARY, (int)op, &vi, 1, vo, n, "tgl_unary"));
    if (!b->vt->unary)
        return tgl__unsupported(b, "tgl_unary");
    return tgl__leave(b, b->vt->unary(b, op, vi, vo, n));
}

TGL_API tgl_status tgl_binary(tgl_backend *b, tgl_binary_op op, tgl_ptr a, tgl_ptr bb, tgl_ptr out,
                              size_t n)
{
    if (tgl__hooked(b))
        return TGL__HOOK(BINARY);
    tgl_status st = tgl__enter(b);
    tgl__view va, vb, vo;
    if (st)
        return st;
    if ((unsigned)op >= TGL_BINARY_COUNT)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "op: %d is not a tgl_binary_op", (int)op);
    if (!(tgl__binary_dtypes(op) & TGL__DT(F32)))
        return tgl__fail(b, TGL_ERR_UNSUPPORTED, "op: %s takes i32 or bool: tgl_binary_t runs it", tgl_binary_name(op));
    if (n == 0)
        return TGL_OK;
    if ((st = tgl__resolve_array(b, "a", a, n, F32, &va)) ||
        (st = tgl__resolve_array(b, "bb", bb, n, F32, &vb)) ||
        (st = tgl__resolve_array(b, "out", out, n, F32, &vo)) ||
        (st = tgl__check_alias(b, "a", va, n * F32, vo, n * F32)) ||
        (st = tgl__check_alias(b, "bb", vb, n * F32, vo, n * F32)))
        return st;
    if (op >= TGL__BINARY_FLAT_KERNELS) {
        const tgl__view in[2] = {va, vb};
        return tgl__leave(b, tgl__flat_tew(b, TGL__TEW_BINARY, (int)op, in, 2, vo, n, "tgl_binary"));
    }
    if (!b->vt->binary)
        return tgl__unsupported(b, "tgl_binary");
    return tgl__leave(b, b->vt->binary(b, op, va, vb, vo, n));
}

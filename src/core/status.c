#include "internal.h"

#include <stdio.h>
#include <string.h>

TGL_API const char *tgl_status_string(tgl_status s)
{
    switch (s) {
#define TGL__STATUS_CASE(name, value, text) case name: return text;
        TGL_STATUS_MAP(TGL__STATUS_CASE)
#undef TGL__STATUS_CASE
    }
    return "unknown status";
}

/* tgl_open has no backend to keep its failure in, so the detail lives per thread. */
static _Thread_local char open_error[1024];

tgl_status tgl__fail(tgl_backend *b, tgl_status status, const char *fmt, ...)
{
    char *dst = b ? b->last_error : open_error;
    size_t size = b ? sizeof b->last_error : sizeof open_error;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(dst, size, fmt, ap);
    va_end(ap);
    if (status == TGL_ERR_DEVICE_LOST && b)
        b->lost = 1;
    return status;
}

TGL_API const char *tgl_last_error(const tgl_backend *b)
{
    return b ? b->last_error : open_error;
}

void tgl__strlcpy(char *dst, const char *src, size_t dst_size)
{
    size_t n = src ? strlen(src) : 0;
    if (n >= dst_size)
        n = dst_size - 1;
    if (src && n)
        memcpy(dst, src, n);
    dst[n] = '\0';
}

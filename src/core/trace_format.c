/* Byte-buffer encoding and the content hash shared by the trace writer and reader. */
#include "trace_format.h"

#include <stdlib.h>
#include <string.h>

void tgl__bytes_put(tgl__bytes *o, const void *src, size_t n)
{
    if (o->failed || n == 0)
        return;
    if (o->len + n < o->len) {
        o->failed = 1;
        return;
    }
    if (o->len + n > o->cap) {
        size_t cap = o->cap ? o->cap : 256;
        while (cap < o->len + n && cap <= SIZE_MAX / 2)
            cap *= 2;
        uint8_t *p = cap >= o->len + n ? realloc(o->data, cap) : NULL;
        if (!p) {
            o->failed = 1;
            return;
        }
        o->data = p;
        o->cap = cap;
    }
    memcpy(o->data + o->len, src, n);
    o->len += n;
}

void tgl__bytes_u8(tgl__bytes *o, uint8_t v)
{
    tgl__bytes_put(o, &v, 1);
}

void tgl__bytes_u32(tgl__bytes *o, uint32_t v)
{
    uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    tgl__bytes_put(o, b, 4);
}

void tgl__bytes_u64(tgl__bytes *o, uint64_t v)
{
    tgl__bytes_u32(o, (uint32_t)v);
    tgl__bytes_u32(o, (uint32_t)(v >> 32));
}

void tgl__bytes_free(tgl__bytes *o)
{
    free(o->data);
    *o = (tgl__bytes){0};
}

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

/* The 64-bit finalizer of MurmurHash3: spreads every input bit over the word. */
static uint64_t mix64(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    return h ^ (h >> 33);
}

void tgl__content_hash(const void *data, size_t n, uint64_t out[2])
{
    const uint8_t *p = data;
    uint64_t a = 0x9e3779b97f4a7c15ull ^ n, c = 0x632be59bd9b4e019ull + n;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        a = (a ^ w) * 0x100000001b3ull;
        a ^= a >> 29;
        c = (c + w) * 0xbf58476d1ce4e5b9ull;
        c ^= c >> 31;
    }
    uint64_t tail = 0;
    for (size_t k = 0; i + k < n; k++)
        tail |= (uint64_t)p[i + k] << (8 * k);
    out[0] = mix64(a ^ tail);
    out[1] = mix64(c + tail + 0x94d049bb133111ebull);
}

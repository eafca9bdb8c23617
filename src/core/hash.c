/* tgl__hash128 (hash.h). */
#include "hash.h"

#include <string.h>

/* The 64-bit finalizer of MurmurHash3: spreads every input bit over the word. */
static uint64_t mix64(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    return h ^ (h >> 33);
}

void tgl__hash128(const void *data, size_t n, const uint64_t seed[2], uint64_t out[2])
{
    const uint8_t *p = data;
    uint64_t a = (0x9e3779b97f4a7c15ull ^ n) + seed[0], c = (0x632be59bd9b4e019ull + n) ^ seed[1];
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

/* Philox4x32-10 (Salmon, Moraes, Dror and Shaw, "Parallel random numbers: as easy as 1, 2, 3",
 * SC'11), the counter-based generator behind tgl_random and tgl_dropout; glsl/common/philox.glsl
 * is its twin, word for word. Ten rounds of two 32x32 -> 64-bit products; the key is bumped by
 * the Weyl constants between rounds. */
#ifndef TGL_CPU_RANDOM_H
#define TGL_CPU_RANDOM_H

#include <stdint.h>

static inline void tgl_philox4x32_10(const uint32_t counter[4], const uint32_t key[2], uint32_t out[4])
{
    uint32_t c0 = counter[0], c1 = counter[1], c2 = counter[2], c3 = counter[3], k0 = key[0], k1 = key[1];
    for (int r = 0; r < 10; r++) {
        if (r) {
            k0 += 0x9E3779B9u;
            k1 += 0xBB67AE85u;
        }
        uint64_t p0 = (uint64_t)0xD2511F53u * c0, p1 = (uint64_t)0xCD9E8D57u * c2;
        uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0, n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
        c1 = (uint32_t)p1;
        c3 = (uint32_t)p0;
        c0 = n0;
        c2 = n2;
    }
    out[0] = c0;
    out[1] = c1;
    out[2] = c2;
    out[3] = c3;
}

/* The words of block `block` (offset + index / 4) of a call with seed: counter (block, 0, 0). */
static inline void tgl_random_block(uint64_t seed, uint64_t block, uint32_t out[4])
{
    const uint32_t counter[4] = {(uint32_t)block, (uint32_t)(block >> 32), 0, 0},
                   key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
    tgl_philox4x32_10(counter, key, out);
}

#endif

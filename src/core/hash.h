/* The library's one content hash: 128 bits (two independent 64-bit lanes) over bytes, eight at a
 * time. It names program binaries on disk (gl_disk_cache.c) and deduplicates trace snapshots
 * (trace_write.c). Not cryptographic: it guards against accidents, not adversaries. */
#ifndef TGL_CORE_HASH_H
#define TGL_CORE_HASH_H

#include <stddef.h>
#include <stdint.h>

/* Hashes n bytes, continuing from `seed` (the result of an earlier call, to hash several
 * pieces as one name; {0, 0} to start). */
void tgl__hash128(const void *data, size_t n, const uint64_t seed[2], uint64_t out[2]);

#endif

/* Host-side copies of large transfers: one thread's memcpy bounds a transfer long before the
 * memory system or the bus does (the GL backend's mapped ranges and staging buffers). */
#ifndef TGL_CORE_HOST_COPY_H
#define TGL_CORE_HOST_COPY_H

#include <stddef.h>

/* Each thread copies at least this much, so making it costs a small part of its copy (a
 * thread's start and join is tens of microseconds; 1 MiB is 60-100 at one thread's rate). */
#define TGL_HOST_COPY_PART_BYTES ((size_t)1 << 20)
#define TGL_HOST_COPY_MAX_THREADS 8u

/* memcpy(dst, src, bytes) spread over up to `threads` threads, the caller's among them (at most
 * TGL_HOST_COPY_MAX_THREADS, and one per TGL_HOST_COPY_PART_BYTES); a part whose thread cannot
 * be made is copied by the caller. Returns when every byte is copied. */
void tgl__host_copy(void *dst, const void *src, size_t bytes, unsigned threads);

#endif

/* memcpy of large transfers spread over a few threads (see host_copy.h). */
#include "host_copy.h"

#include <pthread.h>
#include <string.h>

typedef struct {
    char *dst;
    const char *src;
    size_t bytes;
} copy_part;

static void *copy_one_part(void *arg)
{
    copy_part *p = arg;
    memcpy(p->dst, p->src, p->bytes);
    return NULL;
}

void tgl__host_copy(void *dst, const void *src, size_t bytes, unsigned threads)
{
    size_t most = bytes / TGL_HOST_COPY_PART_BYTES;
    if (threads > TGL_HOST_COPY_MAX_THREADS)
        threads = TGL_HOST_COPY_MAX_THREADS;
    if (threads > most)
        threads = (unsigned)most;
    if (threads < 2) {
        memcpy(dst, src, bytes);
        return;
    }
    /* Parts of whole 4 KiB pages (the last one shorter), so where dst starts on a page, as a
     * mapped staging buffer does, no two threads write into one page. */
    size_t per = ((bytes + threads - 1) / threads + 4095u) & ~(size_t)4095u;
    copy_part parts[TGL_HOST_COPY_MAX_THREADS];
    pthread_t ids[TGL_HOST_COPY_MAX_THREADS];
    int started[TGL_HOST_COPY_MAX_THREADS] = {0};
    for (unsigned i = 1; i < threads && i * per < bytes; i++) {
        size_t at = i * per, n = bytes - at < per ? bytes - at : per;
        parts[i] = (copy_part){(char *)dst + at, (const char *)src + at, n};
        started[i] = pthread_create(&ids[i], NULL, copy_one_part, &parts[i]) == 0;
        if (!started[i])
            memcpy(parts[i].dst, parts[i].src, n);
    }
    memcpy(dst, src, per < bytes ? per : bytes);
    for (unsigned i = 1; i < threads; i++)
        if (started[i])
            pthread_join(ids[i], NULL);
}

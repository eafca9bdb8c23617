/* Device memory for tgl_alloc, as the device profile's pool trait says (gl_profile.c: llvmpipe
 * carves, GPUs reuse, TGL_POOL=off gives a buffer per allocation, deleted on free): small
 * allocations carved from shared GL buffers, and freed buffers kept for reuse, so an alloc/free
 * loop (a model's temporaries) creates no GL buffer after the first pass.
 *
 *  - Small (up to 256 KiB), when carving: power-of-two size classes from 256 bytes; each class
 *    carves chunks from 4 MiB blocks, and a freed chunk goes back to its class's free list.
 *    Chunk offsets are multiples of every binding alignment the device asks for, so windows
 *    computed relative to an allocation stay aligned in the block.
 *  - Otherwise a GL buffer of its own. A freed one is cached (up to a cap) and handed to a
 *    later request of the same size or up to 1/8 smaller; on GL_OUT_OF_MEMORY the cache is
 *    released and the creation retried once.
 * A chunk's record (with its barrier tracking) is reused with the chunk, so a queued dispatch
 * on the previous owner is still seen. Everything is deleted when the backend closes. */
#include "gl_internal.h"

#include <stdlib.h>

#define SMALL_MIN 256u
#define SMALL_MAX (256u << 10)
#define BLOCK_BYTES (4u << 20)
#define GRANULE 16u /* sizes round up to 16 bytes: kernels bind vec4 windows */

static uint64_t cache_cap(const tgl_gl *gl)
{
    if (!gl->limits.pool)
        return 0;
    uint64_t cap = (uint64_t)256 << 20, dev = gl->limits.memory_bytes;
    return dev && dev / 8 > cap ? (dev / 8 < ((uint64_t)1 << 30) ? dev / 8 : (uint64_t)1 << 30) : cap;
}

/* Creates one GL buffer object of at least `bytes`, with TGL_GL_BUFFER_TAIL bytes after them
 * that are never handed out (room for gl_dispatch.c to widen a texture window past the end of
 * the last allocation). Its size is never a power of two: llvmpipe keys each compiled kernel on
 * whether every buffer bound as a texture has a power-of-two size (gallivm's pot_width, meant
 * for sampling), so with both kinds a kernel reading buffer textures compiled up to 2^textures
 * times (attention, 3 textures: the same 16 s compile twice in test_attention); a
 * granule more costs nothing anywhere. */
static tgl_status block_new(tgl_backend *b, size_t bytes, tgl_gl_block **out)
{
    size_t gl_bytes = bytes + TGL_GL_BUFFER_TAIL;
    if (!(gl_bytes & (gl_bytes - 1)))
        gl_bytes += GRANULE;
    /* tgl_alloc does not activate the context (a pooled chunk needs no GL call): a new buffer
     * object does. */
    tgl_status st = tgl_egl_make_current(b, &tgl_gl_of(b)->egl);
    if (st)
        return st;
    tgl_gl_block *blk = calloc(1, sizeof *blk);
    if (!blk)
        return tgl__fail(b, TGL_ERR_OUT_OF_MEMORY, "tgl_alloc: no host memory for the buffer record");
    blk->bytes = bytes;
    glGenBuffers(1, &blk->name);
    glBindBuffer(GL_SHADER_STORAGE_BUFFER, blk->name);
    glBufferData(GL_SHADER_STORAGE_BUFFER, (GLsizeiptr)gl_bytes, NULL, GL_DYNAMIC_COPY);
    glBindBuffer(GL_SHADER_STORAGE_BUFFER, 0);
    st = tgl_gl_check(b, "tgl_alloc (glBufferData)");
    if (st) {
        glDeleteBuffers(1, &blk->name);
        glGetError(); /* the delete of a failed buffer must not leak into the next check */
        free(blk);
        if (st == TGL_ERR_OUT_OF_MEMORY)
            tgl__fail(b, st, "tgl_alloc: the device has no room for a %zu-byte buffer (GL_OUT_OF_MEMORY)", bytes);
        return st;
    }
    tgl_gl_of(b)->pool.reserved += bytes; /* the usable bytes: the tail room and granule are never handed out */
    *out = blk;
    return TGL_OK;
}

static void block_delete(tgl_backend *b, tgl_gl_block *blk, int current)
{
    /* GL keeps the storage alive until the dispatches already queued on it have run. */
    if (current)
        glDeleteBuffers(1, &blk->name);
    tgl_gl_of(b)->pool.reserved -= blk->bytes;
    free(blk);
}

static void release_cache(tgl_backend *b, int current)
{
    tgl_gl_pool *p = &tgl_gl_of(b)->pool;
    while (p->cached) {
        tgl_gl_buffer *r = p->cached;
        p->cached = r->next;
        p->cached_bytes -= r->bytes;
        block_delete(b, r->block, current);
        free(r);
    }
}

static int class_of(const tgl_gl_pool *p, size_t bytes)
{
    if (!p->small_ok || bytes > SMALL_MAX)
        return -1;
    int c = 0;
    while (((size_t)p->small_min << c) < bytes)
        c++;
    return c;
}

static tgl_status small_alloc(tgl_backend *b, int c, tgl_gl_buffer **out)
{
    tgl_gl_pool *p = &tgl_gl_of(b)->pool;
    size_t size = (size_t)p->small_min << c;
    if (p->free_chunks[c]) {
        tgl_gl_buffer *r = p->free_chunks[c];
        p->free_chunks[c] = r->next;
        r->next = NULL;
        *out = r;
        return TGL_OK;
    }
    tgl_gl_buffer *r = calloc(1, sizeof *r);
    if (!r)
        return tgl__fail(b, TGL_ERR_OUT_OF_MEMORY, "tgl_alloc: no host memory for the buffer record");
    if (!p->carving[c] || p->carved[c] + size > p->carving[c]->bytes) {
        if (p->n_blocks == p->cap_blocks) {
            size_t cap = p->cap_blocks ? 2 * p->cap_blocks : 16;
            tgl_gl_block **blocks = realloc(p->blocks, cap * sizeof *blocks); // NOLINT(bugprone-sizeof-expression): an array of pointers
            if (!blocks) {
                free(r);
                return tgl__fail(b, TGL_ERR_OUT_OF_MEMORY, "tgl_alloc: no host memory for the pool");
            }
            p->blocks = blocks;
            p->cap_blocks = cap;
        }
        tgl_gl_block *blk = NULL;
        tgl_status st = block_new(b, BLOCK_BYTES, &blk);
        if (st == TGL_ERR_OUT_OF_MEMORY && p->cached) {
            release_cache(b, 1);
            st = block_new(b, BLOCK_BYTES, &blk);
        }
        if (st) {
            free(r);
            return st;
        }
        p->blocks[p->n_blocks++] = blk; /* an old block's uncarved tail (< one chunk) stays unused */
        p->carving[c] = blk;
        p->carved[c] = 0;
    }
    *r = (tgl_gl_buffer){.block = p->carving[c], .base = p->carved[c], .bytes = size, .cls = c};
    p->carved[c] += size;
    *out = r;
    return TGL_OK;
}

static tgl_status large_alloc(tgl_backend *b, size_t bytes, tgl_gl_buffer **out)
{
    tgl_gl_pool *p = &tgl_gl_of(b)->pool;
    tgl_gl_buffer **best = NULL;
    for (tgl_gl_buffer **r = &p->cached; *r; r = &(*r)->next)
        if ((*r)->bytes >= bytes && (*r)->bytes - bytes <= bytes / 8 && (!best || (*r)->bytes < (*best)->bytes))
            best = r;
    if (best) {
        tgl_gl_buffer *r = *best;
        *best = r->next;
        r->next = NULL;
        p->cached_bytes -= r->bytes;
        *out = r;
        return TGL_OK;
    }
    tgl_gl_buffer *r = calloc(1, sizeof *r);
    if (!r)
        return tgl__fail(b, TGL_ERR_OUT_OF_MEMORY, "tgl_alloc: no host memory for the buffer record");
    tgl_gl_block *blk = NULL;
    tgl_status st = block_new(b, bytes, &blk);
    if (st == TGL_ERR_OUT_OF_MEMORY && p->cached) {
        release_cache(b, 1);
        st = block_new(b, bytes, &blk);
    }
    if (st) {
        free(r);
        return st;
    }
    *r = (tgl_gl_buffer){.block = blk, .base = 0, .bytes = bytes, .cls = -1}; /* bytes: the block's */
    *out = r;
    return TGL_OK;
}

tgl_status tgl_gl_buffer_create(tgl_backend *b, size_t bytes, void **out)
{
    tgl_gl *gl = tgl_gl_of(b);
    uint64_t device = gl->limits.memory_bytes;
    if (device && bytes > device)
        return tgl__fail(b, TGL_ERR_OUT_OF_MEMORY, "tgl_alloc: %zu bytes exceed the device's %llu MiB", bytes,
                         (unsigned long long)(device >> 20));
    size_t rounded = (bytes + GRANULE - 1) / GRANULE * GRANULE;
    if (rounded < bytes || (uint64_t)rounded > (uint64_t)PTRDIFF_MAX)
        return tgl__fail(b, TGL_ERR_OUT_OF_MEMORY, "tgl_alloc: %zu bytes exceed GLsizeiptr", bytes);
    int c = class_of(&gl->pool, rounded);
    tgl_gl_buffer *r = NULL;
    tgl_status st = c >= 0 ? small_alloc(b, c, &r) : large_alloc(b, rounded, &r);
    if (st)
        return st;
    if (!r)
        return tgl__fail(b, TGL_ERR_INTERNAL, "tgl_alloc: the pool returned no buffer");
    gl->pool.live += r->bytes;
    *out = r;
    return TGL_OK;
}

void tgl_gl_buffer_destroy(tgl_backend *b, void *buf)
{
    tgl_gl *gl = tgl_gl_of(b);
    tgl_gl_pool *p = &gl->pool;
    tgl_gl_buffer *r = buf;
    p->live -= r->bytes;
    if (r->cls >= 0) {
        r->next = p->free_chunks[r->cls];
        p->free_chunks[r->cls] = r;
        return;
    }
    if (!p->closing && p->cached_bytes + r->bytes <= cache_cap(gl)) {
        r->next = p->cached;
        p->cached = r;
        p->cached_bytes += r->bytes;
        return;
    }
    block_delete(b, r->block, tgl_egl_make_current(b, &gl->egl) == TGL_OK);
    free(r);
}

void tgl_gl_pool_init(tgl_backend *b)
{
    tgl_gl *gl = tgl_gl_of(b);
    tgl_gl_pool *p = &gl->pool;
    uint64_t align = gl->limits.ssbo_align > gl->limits.texture_align ? gl->limits.ssbo_align
                                                                      : gl->limits.texture_align;
    /* Chunks start at multiples of their size, so the smallest size must be a multiple of
     * every alignment (they are powers of two on every driver we know; others skip the pool). */
    p->small_min = SMALL_MIN;
    while (p->small_min < align && p->small_min < SMALL_MAX)
        p->small_min *= 2;
    p->small_ok = gl->limits.pool >= TGL_GL_POOL_CARVE && align && p->small_min % align == 0;
}

void tgl_gl_pool_fini(tgl_backend *b, int current)
{
    tgl_gl_pool *p = &tgl_gl_of(b)->pool;
    p->closing = 1;
    release_cache(b, current);
    for (int c = 0; c < TGL_GL_POOL_CLASSES; c++) {
        while (p->free_chunks[c]) {
            tgl_gl_buffer *r = p->free_chunks[c];
            p->free_chunks[c] = r->next;
            free(r);
        }
    }
    for (size_t i = 0; i < p->n_blocks; i++)
        block_delete(b, p->blocks[i], current);
    free(p->blocks);
}

void tgl_gl_pool_stats(tgl_backend *b, uint64_t *reserved, uint64_t *pooled)
{
    const tgl_gl_pool *p = &tgl_gl_of(b)->pool;
    *reserved = p->reserved;
    *pooled = p->reserved - p->live;
}

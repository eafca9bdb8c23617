/* Transfers between host and device and within the device (allocation is gl_pool.c).
 * llvmpipe maps the buffer (glMapBufferRange) for downloads and for uploads of 1 MiB or more;
 * GPUs never map a tensor's buffer (below). Offsets in views are relative to the allocation;
 * its base in the GL buffer is added here. */
#include "gl_internal.h"
#include <string.h>
#include "../core/host_copy.h"

/* Uploads from this size on copy into a mapped range (the tensor's own on llvmpipe, a staging
 * buffer on GPUs, below): on the H100, 256 MiB moved at 10.8-11.4 GB/s mapping the tensor's
 * buffer against 5.7-6.1 GB/s through glBufferSubData (which stages the data once more inside
 * the driver); on llvmpipe both are a memcpy. Smaller ones keep glBufferSubData, whose cost does
 * not include a map and unmap. */
#define UPLOAD_MAP_BYTES ((size_t)1 << 20)

/* GPUs never map a tensor's buffer (limits.transfer_staging): uploads of UPLOAD_MAP_BYTES or
 * more and all downloads go through staging buffers of the backend's own, copied to and from by
 * the GPU (glCopyBufferSubData). NVIDIA's driver (580, H100) watches how each buffer is used,
 * and one the CPU has mapped is judged CPU-produced ("Buffer usage warning: ... the CPU is the
 * primary producer of buffer object data and the GPU is the primary consumer") and moved to
 * system memory, where every kernel then reads it across the bus: after one download of a
 * kernel's output, or ten uploads into a fresh buffer, a 64 MiB GEMM operand there made 128 x
 * 4096 x 4096 run at 2.9-3.2 TFLOP/s instead of 27.5 (commit 7267290). glGetBufferSubData kept the placement but broke ordering there: an upload
 * after it and an in-place tgl_scale_add read stale data (test_fill_cast, 6 runs of 6). The
 * staging buffers are the CPU's alone (GL_STREAM_DRAW to upload, GL_STREAM_READ to download),
 * two each way, so the host's copy of one chunk overlaps the GPU's copy of the next. */
#define STAGING_BYTES ((size_t)8 << 20)

/* Staging buffer i (0 and 1: uploads, 2 and 3: downloads), made on first use. Where the context
 * has glBufferStorage, the download ones are client storage mapped persistently and coherently
 * once (staging_map): a GL_STREAM_READ buffer, mapped per chunk, read back at 12 GB/s on the H100
 * with four threads copying (64 MiB in 5.3 ms, 8.3 with one thread, 6.7-7.1 with 8 or 16, where
 * PyTorch took 3.9 ms into pageable memory). */
static tgl_status staging_buffer(tgl_backend *b, unsigned i, GLuint *out)
{
    tgl_gl *gl = tgl_gl_of(b);
    if (!gl->staging[i]) {
        int persistent = i >= 2 && gl->limits.buffer_storage;
        const GLbitfield flags = GL_MAP_READ_BIT | GL_MAP_PERSISTENT_BIT | GL_MAP_COHERENT_BIT;
        const void *map = NULL;
        glGenBuffers(1, &gl->staging[i]);
        glBindBuffer(GL_COPY_READ_BUFFER, gl->staging[i]);
        if (persistent) {
            glBufferStorage(GL_COPY_READ_BUFFER, (GLsizeiptr)STAGING_BYTES, NULL, flags | GL_CLIENT_STORAGE_BIT);
            map = glMapBufferRange(GL_COPY_READ_BUFFER, 0, (GLsizeiptr)STAGING_BYTES, flags);
        } else {
            glBufferData(GL_COPY_READ_BUFFER, (GLsizeiptr)STAGING_BYTES, NULL, i < 2 ? GL_STREAM_DRAW : GL_STREAM_READ);
        }
        glBindBuffer(GL_COPY_READ_BUFFER, 0);
        tgl_status st = tgl_gl_check(b, "staging buffer (glBufferData, glBufferStorage, glMapBufferRange)");
        if (!st && persistent && !map)
            st = tgl__fail(b, TGL_ERR_INTERNAL, "staging buffer: glMapBufferRange returned NULL");
        if (st) {
            glDeleteBuffers(1, &gl->staging[i]); /* (unmaps it) */
            glGetError(); /* the delete of a failed buffer must not leak into the next check */
            gl->staging[i] = 0;
            return st;
        }
        if (persistent)
            gl->staging_map[i - 2] = map;
    }
    *out = gl->staging[i];
    return TGL_OK;
}

/* Maps `bytes` of the buffer bound to `target` at `at` and copies between it and `host`
 * (`upload`: host into the buffer), with the checks every map needs. The copy is shared by
 * limits.transfer_threads threads: one thread's memcpy is what bounds a large transfer. */
static tgl_status map_copy(tgl_backend *b, GLenum target, GLintptr at, void *host, size_t bytes, int upload,
                           const char *who)
{
    void *mapped = glMapBufferRange(target, at, (GLsizeiptr)bytes, upload ? GL_MAP_WRITE_BIT : GL_MAP_READ_BIT);
    GLboolean kept = GL_TRUE;
    if (mapped) {
        unsigned threads = tgl_gl_of(b)->limits.transfer_threads;
        if (upload)
            tgl__host_copy(mapped, host, bytes, threads);
        else
            tgl__host_copy(host, mapped, bytes, threads);
        kept = glUnmapBuffer(target);
    }
    tgl_status st = tgl_gl_check(b, who);
    if (!st && !mapped)
        st = tgl__fail(b, TGL_ERR_INTERNAL, "%s: glMapBufferRange returned NULL", who);
    /* GL_FALSE: the driver lost the mapped store's contents (GL 4.3, 6.3.1); copy again. */
    if (!st && !kept)
        st = tgl__fail(b, TGL_ERR_INTERNAL, "%s: the driver dropped the mapped data; copy again", who);
    return st;
}

/* Bytes of staging chunk `chunk` of a transfer of `bytes` (every chunk full but the last). */
static size_t chunk_bytes(size_t bytes, size_t chunk)
{
    size_t done = chunk * STAGING_BYTES;
    return bytes - done < STAGING_BYTES ? bytes - done : STAGING_BYTES;
}

/* glCopyBufferSubData between two buffer objects (a staging buffer's chunk, a dtod copy). */
static tgl_status copy_buffers(tgl_backend *b, GLuint from, GLintptr from_at, GLuint to, GLintptr to_at,
                               size_t bytes, const char *who)
{
    glBindBuffer(GL_COPY_READ_BUFFER, from);
    glBindBuffer(GL_COPY_WRITE_BUFFER, to);
    glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, from_at, to_at, (GLsizeiptr)bytes);
    glBindBuffer(GL_COPY_READ_BUFFER, 0);
    glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
    return tgl_gl_check(b, who);
}

static tgl_status upload_staged(tgl_backend *b, tgl_gl_buffer *dst, GLintptr at, const void *src, size_t bytes)
{
    tgl_status st = TGL_OK;
    for (size_t c = 0, chunks = tgl_gl_ceil_div(bytes, STAGING_BYTES); !st && c < chunks; c++) {
        size_t done = c * STAGING_BYTES, n = chunk_bytes(bytes, c);
        GLuint staging;
        if ((st = staging_buffer(b, (unsigned)(c & 1u), &staging)))
            break;
        glBindBuffer(GL_COPY_READ_BUFFER, staging);
        st = map_copy(b, GL_COPY_READ_BUFFER, 0, (char *)src + done, n, 1, "tgl_copy_htod (staging buffer)");
        glBindBuffer(GL_COPY_READ_BUFFER, 0);
        if (!st)
            st = copy_buffers(b, staging, 0, dst->block->name, at + (GLintptr)done, n,
                              "tgl_copy_htod (glCopyBufferSubData)");
        if (!st)
            tgl_gl_note_copy(b, NULL, dst);
    }
    return st;
}

/* Two download staging buffers: the copy of the next chunk is queued before the map of this
 * one (which waits for this chunk's copy alone), so the GPU's copy overlaps the host's. */
static tgl_status stage_out(tgl_backend *b, GLuint src, GLintptr at, size_t chunk, size_t bytes)
{
    GLuint staging;
    tgl_status st = staging_buffer(b, 2 + (unsigned)(chunk & 1u), &staging);
    return st ? st
              : copy_buffers(b, src, at + (GLintptr)(chunk * STAGING_BYTES), staging, 0, chunk_bytes(bytes, chunk),
                             "tgl_copy_dtoh (glCopyBufferSubData)");
}

/* Downloads through the persistently mapped staging buffers: each chunk's copy is followed by a
 * fence, the next chunk's copy queued before the wait for this one's, so the GPU's copy of the
 * next overlaps the host's of this one; no map or unmap per chunk. */
static tgl_status download_persistent(tgl_backend *b, void *dst, GLuint src, GLintptr at, size_t bytes)
{
    tgl_gl *gl = tgl_gl_of(b);
    size_t chunks = tgl_gl_ceil_div(bytes, STAGING_BYTES);
    GLsync fence[2] = {0, 0};
    tgl_status st = TGL_OK;
    for (size_t c = 0; !st && c <= chunks; c++) {
        if (c < chunks) { /* queue chunk c */
            if ((st = stage_out(b, src, at, c, bytes)))
                break;
            fence[c & 1u] = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
            if (!fence[c & 1u] && !(st = tgl_gl_check(b, "tgl_copy_dtoh (glFenceSync)")))
                st = tgl__fail(b, TGL_ERR_INTERNAL, "tgl_copy_dtoh: glFenceSync returned 0");
        }
        if (!st && c > 0) { /* read chunk c - 1 */
            size_t k = c - 1;
            st = tgl_gl_wait_sync(b, fence[k & 1u], "tgl_copy_dtoh");
            fence[k & 1u] = 0;
            if (!st)
                tgl__host_copy((char *)dst + k * STAGING_BYTES, gl->staging_map[k & 1u], chunk_bytes(bytes, k),
                               gl->limits.transfer_threads);
        }
    }
    for (int i = 0; i < 2; i++) /* (a failure's fences) */
        if (fence[i])
            glDeleteSync(fence[i]);
    return st;
}

static tgl_status download_staged(tgl_backend *b, void *dst, GLuint src, GLintptr at, size_t bytes)
{
    if (tgl_gl_of(b)->limits.buffer_storage) /* staging_buffer maps them persistently */
        return download_persistent(b, dst, src, at, bytes);
    size_t chunks = tgl_gl_ceil_div(bytes, STAGING_BYTES);
    tgl_status st = chunks ? stage_out(b, src, at, 0, bytes) : TGL_OK;
    for (size_t c = 0; !st && c < chunks; c++) {
        if (c + 1 < chunks && (st = stage_out(b, src, at, c + 1, bytes)))
            break;
        glBindBuffer(GL_COPY_READ_BUFFER, tgl_gl_of(b)->staging[2 + (c & 1u)]);
        st = map_copy(b, GL_COPY_READ_BUFFER, 0, (char *)dst + c * STAGING_BYTES, chunk_bytes(bytes, c), 0,
                      "tgl_copy_dtoh (staging buffer)");
        glBindBuffer(GL_COPY_READ_BUFFER, 0);
    }
    return st;
}

tgl_status tgl_gl_upload(tgl_backend *b, tgl__view dst, const void *src, size_t bytes)
{
    tgl_gl_buffer *buf = dst.buf;
    tgl_status st = tgl_gl_before_transfer(b, buf, 1);
    if (st)
        return st;
    GLintptr at = (GLintptr)(buf->base + dst.offset);
    if (bytes >= UPLOAD_MAP_BYTES && tgl_gl_of(b)->limits.transfer_staging) {
        st = upload_staged(b, buf, at, src, bytes);
    } else if (bytes >= UPLOAD_MAP_BYTES) {
        glBindBuffer(GL_COPY_WRITE_BUFFER, buf->block->name);
        st = map_copy(b, GL_COPY_WRITE_BUFFER, at, (void *)src, bytes, 1, "tgl_copy_htod (glMapBufferRange)");
        glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
    } else {
        glBindBuffer(GL_COPY_WRITE_BUFFER, buf->block->name);
        glBufferSubData(GL_COPY_WRITE_BUFFER, at, (GLsizeiptr)bytes, src);
        glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
        st = tgl_gl_check(b, "tgl_copy_htod (glBufferSubData)");
        /* GPUs: the update may still be queued, and a later glBufferSubData into the buffer may
         * be written from the host before it (tgl_gl_note_copy says how NVIDIA's driver does
         * that), so the next transfer into or from the buffer waits for it. Dispatches are
         * ordered after it by the GL command stream. */
        if (!st && tgl_gl_of(b)->limits.upload_waits)
            tgl_gl_note_copy(b, NULL, buf);
    }
    return st;
}

/* Downloads of up to READBACK_BYTES (status words, a few results) where limits.readback_mapped:
 * the copy kernel writes them into a buffer of the backend's own, mapped persistently and
 * coherently once, and the host waits once (a fence) and reads it. The staged path waits twice:
 * for the dispatches writing the source (a barrier alone let a glCopyBufferSubData miss their
 * writes, tgl_gl_before_transfer), then in the map for its glCopyBufferSubData; a read of a
 * buffer's data that the driver serves waits like that map: on an H200 a glGetBufferSubData of
 * the settled source, or a plain map of a buffer the copy kernel wrote, saved little of it.
 * Shader to shader is ordered by the dispatches' barriers like every op's; the client-mapped
 * barrier then makes the kernel's writes visible to the mapping. */
#define READBACK_BYTES 4096u

static tgl_status readback_buffer(tgl_backend *b, tgl_gl_buffer **out)
{
    tgl_gl *gl = tgl_gl_of(b);
    if (!gl->readback_block.name) {
        const GLbitfield flags = GL_MAP_READ_BIT | GL_MAP_PERSISTENT_BIT | GL_MAP_COHERENT_BIT;
        GLuint name = 0;
        glGenBuffers(1, &name);
        glBindBuffer(GL_COPY_READ_BUFFER, name);
        /* the copy kernel's vec4 accesses may reach into a tail, as in every pool block */
        glBufferStorage(GL_COPY_READ_BUFFER, (GLsizeiptr)(READBACK_BYTES + TGL_GL_BUFFER_TAIL), NULL, flags);
        const void *map = glMapBufferRange(GL_COPY_READ_BUFFER, 0, (GLsizeiptr)READBACK_BYTES, flags);
        glBindBuffer(GL_COPY_READ_BUFFER, 0);
        tgl_status st = tgl_gl_check(b, "readback buffer (glBufferStorage, glMapBufferRange)");
        if (!st && !map)
            st = tgl__fail(b, TGL_ERR_INTERNAL, "readback buffer: glMapBufferRange returned NULL");
        if (st) {
            glDeleteBuffers(1, &name); /* (unmaps it) */
            glGetError(); /* the delete of a failed buffer must not leak into the next check */
            return st;
        }
        gl->readback_block = (tgl_gl_block){.name = name, .bytes = READBACK_BYTES};
        gl->readback = (tgl_gl_buffer){.block = &gl->readback_block, .bytes = READBACK_BYTES, .cls = -1};
        gl->readback_map = map;
    }
    *out = &gl->readback;
    return TGL_OK;
}

static tgl_status readback_small(tgl_backend *b, void *dst, tgl__view src, size_t bytes)
{
    tgl_gl *gl = tgl_gl_of(b);
    tgl_gl_buffer *rb;
    tgl_status st = readback_buffer(b, &rb);
    const tgl_gl_ew_run r = {.op_name = "tgl_copy_dtoh", .kernel = TGL_GL_EW_COPY, .v = {src, {rb, 0}}, .nv = 2};
    /* a download is no streaming op: the next one's direction (glsl/common/sweep.glsl) stays */
    const unsigned sweep = gl->sweep_backward;
    if (st || (st = tgl_gl_run_elementwise(b, &r, bytes / 4)))
        return st;
    gl->sweep_backward = sweep;
    if (!gl->test.skip_barriers)
        glMemoryBarrier(GL_CLIENT_MAPPED_BUFFER_BARRIER_BIT);
    /* the fence: rb's last write is the copy just queued */
    if ((st = tgl_gl_before_transfer(b, rb, 0)))
        return st;
    memcpy(dst, gl->readback_map, bytes); /* (the wait checked for a reset) */
    return TGL_OK;
}

tgl_status tgl_gl_download(tgl_backend *b, void *dst, tgl__view src, size_t bytes)
{
    tgl_gl_buffer *buf = src.buf;
    const tgl_gl_limits *l = &tgl_gl_of(b)->limits;
    if (l->readback_mapped && l->transfer_staging && bytes && bytes <= READBACK_BYTES && bytes % 4 == 0 &&
        src.offset % 4 == 0)
        return readback_small(b, dst, src, bytes);
    tgl_status st = tgl_gl_before_transfer(b, buf, 0);
    if (st)
        return st;
    GLintptr at = (GLintptr)(buf->base + src.offset);
    if (tgl_gl_of(b)->limits.transfer_staging) {
        st = download_staged(b, dst, buf->block->name, at, bytes);
    } else {
        glBindBuffer(GL_COPY_READ_BUFFER, buf->block->name);
        st = map_copy(b, GL_COPY_READ_BUFFER, at, dst, bytes, 0, "tgl_copy_dtoh (glMapBufferRange)");
        glBindBuffer(GL_COPY_READ_BUFFER, 0);
    }
    /* The read waited for the GPU: a reset during that wait shows up here. */
    return st ? st : tgl_gl_check_reset(b);
}

tgl_status tgl_gl_copy(tgl_backend *b, tgl__view dst, tgl__view src, size_t bytes)
{
    /* Word-aligned copies on GPUs: the copy kernel (see the per-renderer table in gl_limits.c).
     * Its dispatch gets the barriers any dispatch gets. */
    if (tgl_gl_of(b)->limits.copy_kernel && src.offset % 4 == 0 && dst.offset % 4 == 0 && bytes % 4 == 0) {
        const tgl_gl_ew_run r = {.op_name = "tgl_copy_dtod", .kernel = TGL_GL_EW_COPY, .v = {src, dst}, .nv = 2};
        return tgl_gl_run_elementwise(b, &r, bytes / 4);
    }
    tgl_gl_buffer *d = dst.buf, *s = src.buf;
    tgl_status st = tgl_gl_before_transfer(b, s, 0);
    if (st || (st = tgl_gl_before_transfer(b, d, 1)))
        return st;
    st = copy_buffers(b, s->block->name, (GLintptr)(s->base + src.offset), d->block->name,
                      (GLintptr)(d->base + dst.offset), bytes, "tgl_copy_dtod (glCopyBufferSubData)");
    if (!st)
        tgl_gl_note_copy(b, s, d);
    return st;
}

void tgl_gl_test_force_copy_kernel(tgl_backend *b, int on)
{
    tgl_gl_of(b)->limits.copy_kernel = on;
    tgl_gl_profile_mark(&tgl_gl_of(b)->limits, TGL_GL_TRAIT_copy_kernel, TGL_GL_FROM_TEST);
}

void tgl_gl_test_force_transfer_staging(tgl_backend *b, int on)
{
    tgl_gl_of(b)->limits.transfer_staging = on;
    tgl_gl_profile_mark(&tgl_gl_of(b)->limits, TGL_GL_TRAIT_transfer_staging, TGL_GL_FROM_TEST);
}

int tgl_gl_test_force_readback_mapped(tgl_backend *b, int on)
{
    tgl_gl_limits *l = &tgl_gl_of(b)->limits;
    if (on && !l->buffer_storage)
        return 0;
    l->readback_mapped = on;
    tgl_gl_profile_mark(l, TGL_GL_TRAIT_readback_mapped, TGL_GL_FROM_TEST);
    return 1;
}

void tgl_gl_test_set_transfer_threads(tgl_backend *b, unsigned threads)
{
    tgl_gl_of(b)->limits.transfer_threads = threads;
    tgl_gl_profile_mark(&tgl_gl_of(b)->limits, TGL_GL_TRAIT_transfer_threads, TGL_GL_FROM_TEST);
}

/* Transfers between host and device and within the device (allocation is gl_pool.c).
 * llvmpipe maps the buffer (glMapBufferRange) for downloads and for uploads of 1 MiB or more;
 * GPUs never map a tensor's buffer (below). Offsets in views are relative to the allocation; its base in the GL
 * buffer is added here. */
#include "gl_internal.h"

#include <string.h>

/* Uploads from this size on map the range and copy into it: on the H100, 256 MiB moved at
 * 10.8-11.4 GB/s that way against 5.7-6.1 GB/s through glBufferSubData (which stages the data
 * once more inside the driver); on llvmpipe both are a memcpy. Smaller ones keep glBufferSubData,
 * whose cost does not include a map and unmap. */
#define UPLOAD_MAP_BYTES ((size_t)1 << 20)

/* GPUs never map a tensor's buffer (limits.transfer_staging). Uploads of UPLOAD_MAP_BYTES or
 * more go through staging buffers of the backend's own, copied into place by the GPU
 * (glCopyBufferSubData); downloads are glGetBufferSubData on desktop GL and a copy into a
 * staging buffer on ES, which lacks it. NVIDIA's
 * driver (580, H100) watches how each buffer is used, and one the CPU has mapped is judged
 * CPU-produced ("Buffer usage warning: ... the CPU is the primary producer of buffer object
 * data and the GPU is the primary consumer") and moved to system memory, where every kernel
 * then reads it across the bus: after one download of a kernel's output, or ten uploads into a
 * fresh buffer, a 64 MiB GEMM operand there made 128 x 4096 x 4096 run at 2.9-3.2 TFLOP/s
 * instead of 27.5 (docs/performance.md, "Transfers through staging buffers"). The staging
 * buffers are the CPU's alone (GL_STREAM_DRAW to upload, GL_STREAM_READ to download), and two
 * upload buffers alternate so that filling one overlaps the copy out of the other. H100, 256 MiB
 * / 4 MiB (`tensorgl bench engine`): uploads 9.0-10.5 / 6.3-8.2 GB/s through staging, 6.8-7.4 /
 * 7.7-12.4 by glBufferSubData, 13.5-14.3 / 12.5-12.7 mapped; downloads 11.1-12.1 / 9.0-13.7 by
 * glGetBufferSubData, 7.5-8.4 / 9.8-10.8 through staging, 12.7-13.6 / 13.6-13.7 mapped. */
#define STAGING_BYTES ((size_t)8 << 20)

/* Staging buffer i (0 and 1: uploads, 2: downloads), made on first use. */
static tgl_status staging_buffer(tgl_backend *b, unsigned i, GLuint *out)
{
    tgl_gl *gl = tgl_gl_of(b);
    if (!gl->staging[i]) {
        glGenBuffers(1, &gl->staging[i]);
        glBindBuffer(GL_COPY_READ_BUFFER, gl->staging[i]);
        glBufferData(GL_COPY_READ_BUFFER, (GLsizeiptr)STAGING_BYTES, NULL, i < 2 ? GL_STREAM_DRAW : GL_STREAM_READ);
        glBindBuffer(GL_COPY_READ_BUFFER, 0);
        tgl_status st = tgl_gl_check(b, "staging buffer (glBufferData)");
        if (st) {
            glDeleteBuffers(1, &gl->staging[i]);
            glGetError(); /* the delete of a failed buffer must not leak into the next check */
            gl->staging[i] = 0;
            return st;
        }
    }
    *out = gl->staging[i];
    return TGL_OK;
}

/* Maps `bytes` of the buffer bound to `target` at `at` and copies between it and `host`
 * (`upload`: host into the buffer), with the checks every map needs. */
static tgl_status map_copy(tgl_backend *b, GLenum target, GLintptr at, void *host, size_t bytes, int upload,
                           const char *who)
{
    void *mapped = glMapBufferRange(target, at, (GLsizeiptr)bytes, upload ? GL_MAP_WRITE_BIT : GL_MAP_READ_BIT);
    GLboolean kept = GL_TRUE;
    if (mapped) {
        if (upload)
            memcpy(mapped, host, bytes);
        else
            memcpy(host, mapped, bytes);
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

static tgl_status upload_staged(tgl_backend *b, GLuint dst, GLintptr at, const void *src, size_t bytes)
{
    tgl_status st = TGL_OK;
    for (size_t done = 0; !st && done < bytes;) {
        size_t n = bytes - done < STAGING_BYTES ? bytes - done : STAGING_BYTES;
        GLuint staging;
        if ((st = staging_buffer(b, tgl_gl_of(b)->staging_next++ & 1u, &staging)))
            break;
        glBindBuffer(GL_COPY_READ_BUFFER, staging);
        st = map_copy(b, GL_COPY_READ_BUFFER, 0, (char *)src + done, n, 1, "tgl_copy_htod (staging buffer)");
        if (!st) {
            glBindBuffer(GL_COPY_WRITE_BUFFER, dst);
            glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, 0, at + (GLintptr)done, (GLsizeiptr)n);
            glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
            st = tgl_gl_check(b, "tgl_copy_htod (glCopyBufferSubData)");
        }
        glBindBuffer(GL_COPY_READ_BUFFER, 0);
        done += n;
    }
    return st;
}

/* The map of the staging buffer waits for the copy into it. */
static tgl_status download_staged(tgl_backend *b, void *dst, GLuint src, GLintptr at, size_t bytes)
{
    tgl_status st = TGL_OK;
    for (size_t done = 0; !st && done < bytes;) {
        size_t n = bytes - done < STAGING_BYTES ? bytes - done : STAGING_BYTES;
        GLuint staging;
        if ((st = staging_buffer(b, 2, &staging)))
            break;
        glBindBuffer(GL_COPY_READ_BUFFER, src);
        glBindBuffer(GL_COPY_WRITE_BUFFER, staging);
        glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, at + (GLintptr)done, 0, (GLsizeiptr)n);
        glBindBuffer(GL_COPY_READ_BUFFER, 0);
        st = tgl_gl_check(b, "tgl_copy_dtoh (glCopyBufferSubData)");
        if (!st)
            st = map_copy(b, GL_COPY_WRITE_BUFFER, 0, (char *)dst + done, n, 0, "tgl_copy_dtoh (staging buffer)");
        glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
        done += n;
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
        st = upload_staged(b, buf->block->name, at, src, bytes);
    } else if (bytes >= UPLOAD_MAP_BYTES) {
        glBindBuffer(GL_COPY_WRITE_BUFFER, buf->block->name);
        st = map_copy(b, GL_COPY_WRITE_BUFFER, at, (void *)src, bytes, 1, "tgl_copy_htod (glMapBufferRange)");
        glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
    } else {
        glBindBuffer(GL_COPY_WRITE_BUFFER, buf->block->name);
        glBufferSubData(GL_COPY_WRITE_BUFFER, at, (GLsizeiptr)bytes, src);
        glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
        st = tgl_gl_check(b, "tgl_copy_htod (glBufferSubData)");
    }
    /* GPUs: the update must land before later work touches the buffer (gl_limits.c). */
    if (!st && tgl_gl_of(b)->limits.upload_waits)
        st = tgl_gl_wait_idle(b, "tgl_copy_htod");
    return st;
}

tgl_status tgl_gl_download(tgl_backend *b, void *dst, tgl__view src, size_t bytes)
{
    tgl_gl_buffer *buf = src.buf;
    tgl_status st = tgl_gl_before_transfer(b, buf, 0);
    if (st)
        return st;
    GLintptr at = (GLintptr)(buf->base + src.offset);
    const tgl_gl *gl = tgl_gl_of(b);
    if (gl->limits.transfer_staging && gl->egl.es) {
        st = download_staged(b, dst, buf->block->name, at, bytes);
    } else if (gl->limits.transfer_staging) {
        glBindBuffer(GL_COPY_READ_BUFFER, buf->block->name);
        glGetBufferSubData(GL_COPY_READ_BUFFER, at, (GLsizeiptr)bytes, dst);
        glBindBuffer(GL_COPY_READ_BUFFER, 0);
        st = tgl_gl_check(b, "tgl_copy_dtoh (glGetBufferSubData)");
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
        const tgl__view v[2] = {src, dst};
        return tgl_gl_run_elementwise(b, "elementwise/copy", "", v, 2, bytes / 4, NULL, 0);
    }
    tgl_gl_buffer *d = dst.buf, *s = src.buf;
    tgl_status st = tgl_gl_before_transfer(b, s, 0);
    if (st || (st = tgl_gl_before_transfer(b, d, 1)))
        return st;
    glBindBuffer(GL_COPY_READ_BUFFER, s->block->name);
    glBindBuffer(GL_COPY_WRITE_BUFFER, d->block->name);
    glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, (GLintptr)(s->base + src.offset),
                        (GLintptr)(d->base + dst.offset), (GLsizeiptr)bytes);
    glBindBuffer(GL_COPY_READ_BUFFER, 0);
    glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
    return tgl_gl_check(b, "tgl_copy_dtod (glCopyBufferSubData)");
}

void tgl_gl_test_force_copy_kernel(tgl_backend *b, int on)
{
    tgl_gl_of(b)->limits.copy_kernel = on;
}

void tgl_gl_test_force_transfer_staging(tgl_backend *b, int on)
{
    tgl_gl_of(b)->limits.transfer_staging = on;
}

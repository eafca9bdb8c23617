/* Transfers between host and device and within the device (allocation is gl_pool.c).
 * Downloads, and uploads of 1 MiB or more, map the buffer (glMapBufferRange), which both
 * desktop GL and ES have. Offsets in views are relative to the allocation; its base in the GL
 * buffer is added here. */
#include "gl_internal.h"

#include <string.h>

/* Uploads from this size on map the range and copy into it: on the H100, 256 MiB moved at
 * 10.8-11.4 GB/s that way against 5.7-6.1 GB/s through glBufferSubData (which stages the data
 * once more inside the driver); on llvmpipe both are a memcpy. Smaller ones keep glBufferSubData,
 * whose cost does not include a map and unmap. */
#define UPLOAD_MAP_BYTES ((size_t)1 << 20)

tgl_status tgl_gl_upload(tgl_backend *b, tgl__view dst, const void *src, size_t bytes)
{
    tgl_gl_buffer *buf = dst.buf;
    tgl_status st = tgl_gl_before_transfer(b, buf, 1);
    if (st)
        return st;
    GLintptr at = (GLintptr)(buf->base + dst.offset);
    glBindBuffer(GL_COPY_WRITE_BUFFER, buf->block->name);
    if (bytes >= UPLOAD_MAP_BYTES) {
        void *mapped = glMapBufferRange(GL_COPY_WRITE_BUFFER, at, (GLsizeiptr)bytes, GL_MAP_WRITE_BIT);
        GLboolean kept = GL_TRUE;
        if (mapped) {
            memcpy(mapped, src, bytes);
            kept = glUnmapBuffer(GL_COPY_WRITE_BUFFER);
        }
        glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
        st = tgl_gl_check(b, "tgl_copy_htod (glMapBufferRange)");
        if (!st && !mapped)
            st = tgl__fail(b, TGL_ERR_INTERNAL, "tgl_copy_htod: glMapBufferRange returned NULL");
        /* GL_FALSE: the driver lost the mapped store's contents (GL 4.3, 6.3.1); copy again. */
        if (!st && !kept)
            st = tgl__fail(b, TGL_ERR_INTERNAL, "tgl_copy_htod: the driver dropped the mapped data; copy again");
    } else {
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
    tgl_status pre = tgl_gl_before_transfer(b, buf, 0);
    if (pre)
        return pre;
    glBindBuffer(GL_COPY_READ_BUFFER, buf->block->name);
    const void *mapped = glMapBufferRange(GL_COPY_READ_BUFFER, (GLintptr)(buf->base + src.offset),
                                          (GLsizeiptr)bytes, GL_MAP_READ_BIT);
    if (mapped) {
        memcpy(dst, mapped, bytes);
        glUnmapBuffer(GL_COPY_READ_BUFFER);
    }
    glBindBuffer(GL_COPY_READ_BUFFER, 0);
    tgl_status st = tgl_gl_check(b, "tgl_copy_dtoh (glMapBufferRange)");
    if (!st && !mapped)
        st = tgl__fail(b, TGL_ERR_INTERNAL, "tgl_copy_dtoh: glMapBufferRange returned NULL");
    /* The map waited for the GPU: a reset during that wait shows up here. */
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

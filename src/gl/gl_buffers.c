/* Device memory: one GL buffer object per allocation, and the transfers between host and
 * device. Downloads map the buffer (glMapBufferRange), which both desktop GL and ES have. */
#include "gl_internal.h"

#include <stdlib.h>
#include <string.h>

/* Rounding GL sizes up to 16 bytes lets kernels bind vec4 windows that end on the last element. */
#define GL_BUFFER_GRANULE 16

tgl_status tgl_gl_buffer_create(tgl_backend *b, size_t bytes, void **out)
{
    uint64_t device = tgl_gl_of(b)->limits.memory_bytes;
    if (device && bytes > device)
        return tgl__fail(b, TGL_ERR_OUT_OF_MEMORY, "tgl_alloc: %zu bytes exceed the device's %llu MiB",
                         bytes, (unsigned long long)(device >> 20));
    tgl_gl_buffer *buf = calloc(1, sizeof *buf);
    if (!buf)
        return tgl__fail(b, TGL_ERR_OUT_OF_MEMORY, "tgl_alloc: no host memory for the buffer record");
    buf->bytes = (bytes + GL_BUFFER_GRANULE - 1) / GL_BUFFER_GRANULE * GL_BUFFER_GRANULE;
    if ((uint64_t)buf->bytes > (uint64_t)PTRDIFF_MAX) {
        free(buf);
        return tgl__fail(b, TGL_ERR_OUT_OF_MEMORY, "tgl_alloc: %zu bytes exceed GLsizeiptr", bytes);
    }
    glGenBuffers(1, &buf->name);
    glBindBuffer(GL_SHADER_STORAGE_BUFFER, buf->name);
    glBufferData(GL_SHADER_STORAGE_BUFFER, (GLsizeiptr)buf->bytes, NULL, GL_DYNAMIC_COPY);
    glBindBuffer(GL_SHADER_STORAGE_BUFFER, 0);
    tgl_status st = tgl_gl_check(b, "tgl_alloc (glBufferData)");
    if (st) {
        glDeleteBuffers(1, &buf->name);
        glGetError(); /* the delete of a failed buffer must not leak into the next check */
        free(buf);
        if (st == TGL_ERR_OUT_OF_MEMORY)
            tgl__fail(b, st, "tgl_alloc: the device has no room for %zu bytes (GL_OUT_OF_MEMORY)", bytes);
        return st;
    }
    *out = buf;
    return TGL_OK;
}

void tgl_gl_buffer_destroy(tgl_backend *b, void *p)
{
    tgl_gl_buffer *buf = p;
    /* GL keeps the storage alive until the dispatches already queued on it have run. */
    if (tgl_egl_make_current(b, &tgl_gl_of(b)->egl) == TGL_OK)
        glDeleteBuffers(1, &buf->name);
    free(buf);
}

tgl_status tgl_gl_upload(tgl_backend *b, tgl__view dst, const void *src, size_t bytes)
{
    tgl_gl_buffer *buf = dst.buf;
    tgl_gl_before_transfer(b, buf, 1);
    glBindBuffer(GL_COPY_WRITE_BUFFER, buf->name);
    glBufferSubData(GL_COPY_WRITE_BUFFER, (GLintptr)dst.offset, (GLsizeiptr)bytes, src);
    glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
    return tgl_gl_check(b, "tgl_copy_htod (glBufferSubData)");
}

tgl_status tgl_gl_download(tgl_backend *b, void *dst, tgl__view src, size_t bytes)
{
    tgl_gl_buffer *buf = src.buf;
    tgl_gl_before_transfer(b, buf, 0);
    glBindBuffer(GL_COPY_READ_BUFFER, buf->name);
    const void *mapped = glMapBufferRange(GL_COPY_READ_BUFFER, (GLintptr)src.offset,
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
    tgl_gl_before_transfer(b, s, 0);
    tgl_gl_before_transfer(b, d, 1);
    glBindBuffer(GL_COPY_READ_BUFFER, s->name);
    glBindBuffer(GL_COPY_WRITE_BUFFER, d->name);
    glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, (GLintptr)src.offset,
                        (GLintptr)dst.offset, (GLsizeiptr)bytes);
    glBindBuffer(GL_COPY_READ_BUFFER, 0);
    glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
    return tgl_gl_check(b, "tgl_copy_dtod (glCopyBufferSubData)");
}

void tgl_gl_test_force_copy_kernel(tgl_backend *b, int on)
{
    tgl_gl_of(b)->limits.copy_kernel = on;
}

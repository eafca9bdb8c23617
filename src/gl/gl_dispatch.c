/* Dispatch, barriers and the flush policy.
 *
 * Hazards are tracked with sequence numbers: every dispatch gets the next number, every buffer
 * remembers the last dispatch that wrote it and the last that touched it, and each barrier kind
 * remembers up to which dispatch it has made writes visible. A barrier is issued only when a
 * dispatch or transfer touches a buffer that an unbarriered dispatch wrote (or, for a write,
 * read), and only with the bit for the consumer at hand. */
#include "gl_internal.h"

/* The size to give glTexBufferRange for a texture window of `bytes`. llvmpipe (Mesa 22.3)
 * keys each compiled kernel on the views bound to it through gallivm's static texture state,
 * whose level_zero_only is read from the view's last mip level, a field that for a buffer view
 * overlays bits 8-15 of its size in bytes; so a kernel compiled once for windows where those
 * bits are zero (every window under 256 bytes) and again for the others, up to 2^textures
 * times (each gemm_reg texture variant four or five times in test_gemm). Where those
 * bits are zero the window grows by 256 bytes, over data the kernel never indexes (kernels
 * clamp their indices to the window they were given) or the buffer's tail room
 * (TGL_GL_BUFFER_TAIL), unless that would pass the device's texel limit. Harmless elsewhere. */
static size_t texture_window_bytes(const tgl_gl *gl, const tgl_gl_binding *bind)
{
    size_t wide = bind->bytes + TGL_GL_BUFFER_TAIL;
    if (bind->bytes >> 8 & 255 || wide / tgl_gl_texel_bytes(bind->texture_format) > gl->limits.texture_buffer_texels)
        return bind->bytes;
    return wide;
}

static void count_task(tgl_backend *b)
{
    tgl_gl *gl = tgl_gl_of(b);
    if (++gl->since_flush >= b->config.max_tasks) {
        glFlush();
        gl->since_flush = 0;
    }
}

tgl_status tgl_gl_dispatch(tgl_backend *b, GLuint program, const tgl_gl_binding *bind, int nbind,
                           uint64_t groups)
{
    tgl_gl *gl = tgl_gl_of(b);
    uint64_t gx = groups < gl->limits.wg_count[0] ? groups : gl->limits.wg_count[0];
    uint64_t gy = gx ? (groups + gx - 1) / gx : 0;
    if (gy > gl->limits.wg_count[1])
        return tgl__fail(b, TGL_ERR_INTERNAL, "dispatch of %llu workgroups exceeds the grid limits",
                         (unsigned long long)groups);
    return tgl_gl_dispatch_grid(b, program, bind, nbind, (uint32_t)gx, (uint32_t)gy, 1);
}

tgl_status tgl_gl_dispatch_grid(tgl_backend *b, GLuint program, const tgl_gl_binding *bind, int nbind,
                                uint32_t gx, uint32_t gy, uint32_t gz)
{
    tgl_gl *gl = tgl_gl_of(b);
    if (gx > gl->limits.wg_count[0] || gy > gl->limits.wg_count[1] || gz > gl->limits.wg_count[2])
        return tgl__fail(b, TGL_ERR_INTERNAL, "dispatch of %u x %u x %u workgroups exceeds the grid limits", gx,
                         gy, gz);
    if (gx == 0 || gy == 0 || gz == 0)
        return TGL_OK;

    GLbitfield barriers = 0;
    for (int i = 0; i < nbind; i++) {
        const tgl_gl_buffer *buf = bind[i].buf;
        uint64_t hazard = bind[i].writes ? buf->last_access : buf->last_write;
        if (hazard > gl->ssbo_barrier_seq)
            barriers |= GL_SHADER_STORAGE_BARRIER_BIT;
        if (bind[i].texture_format && !bind[i].texture_image && buf->last_write > gl->texture_barrier_seq)
            barriers |= GL_TEXTURE_FETCH_BARRIER_BIT;
        if (bind[i].texture_format && bind[i].texture_image && buf->last_write > gl->image_barrier_seq)
            barriers |= GL_SHADER_IMAGE_ACCESS_BARRIER_BIT;
    }
    if (barriers) {
        if (!gl->test.skip_barriers) {
            glMemoryBarrier(barriers);
            tgl_gl_audit_barrier(b, barriers);
        }
        if (barriers & GL_SHADER_STORAGE_BARRIER_BIT)
            gl->ssbo_barrier_seq = gl->seq;
        if (barriers & GL_TEXTURE_FETCH_BARRIER_BIT)
            gl->texture_barrier_seq = gl->seq;
        if (barriers & GL_SHADER_IMAGE_ACCESS_BARRIER_BIT)
            gl->image_barrier_seq = gl->seq;
    }
    tgl_status st = tgl_gl_audit_dispatch(b, bind, nbind);
    if (st)
        return st;
    for (int i = 0; i < nbind; i++) {
        glBindBufferRange(GL_SHADER_STORAGE_BUFFER, (GLuint)i, bind[i].buf->block->name,
                          (GLintptr)(bind[i].buf->base + bind[i].offset), (GLsizeiptr)bind[i].bytes);
        if (bind[i].texture_format) {
            if (i >= TGL_GL_TEXTURE_SLOTS)
                return tgl__fail(b, TGL_ERR_INTERNAL, "buffer texture on binding %d", i);
            if (!gl->textures[i])
                glGenTextures(1, &gl->textures[i]);
            glActiveTexture(GL_TEXTURE0 + (GLenum)i);
            glBindTexture(GL_TEXTURE_BUFFER, gl->textures[i]);
            glTexBufferRange(GL_TEXTURE_BUFFER, bind[i].texture_format, bind[i].buf->block->name,
                             (GLintptr)(bind[i].buf->base + bind[i].offset),
                             (GLsizeiptr)texture_window_bytes(gl, &bind[i]));
            if (bind[i].texture_image)
                glBindImageTexture((GLuint)i, gl->textures[i], 0, GL_FALSE, 0, GL_READ_ONLY, bind[i].texture_format);
        }
    }
    glUseProgram(program);
    glDispatchCompute(gx, gy, gz);

    gl->seq++;
    for (int i = 0; i < nbind; i++) {
        bind[i].buf->last_access = gl->seq;
        if (bind[i].writes)
            bind[i].buf->last_write = gl->seq;
    }
    count_task(b);
    return tgl_gl_check(b, "glDispatchCompute");
}

tgl_gl_binding tgl_gl_window(tgl_backend *b, tgl__view v, size_t bytes, int writes, size_t *pad)
{
    return tgl_gl_window_aligned(v, bytes, writes, tgl_gl_of(b)->limits.ssbo_align, pad);
}

tgl_gl_binding tgl_gl_window_aligned(tgl__view v, size_t bytes, int writes, size_t align, size_t *pad)
{
    tgl_gl_buffer *buf = v.buf;
    size_t base = v.offset - v.offset % align;
    size_t want = (v.offset - base + bytes + 15) / 16 * 16;
    size_t room = buf->bytes - base;
    *pad = v.offset - base;
    return (tgl_gl_binding){buf, base, want < room ? want : room, writes, 0, 0};
}

size_t tgl_gl_texel_bytes(GLenum format)
{
    switch (format) {
    case GL_R16F: return 2;
    case GL_RGBA16F:
    case GL_RGBA16UI: return 8;
    case GL_RGBA32F:
    case GL_RGBA32UI: return 16;
    default: return 4; /* GL_R32F, GL_R32UI, GL_R32I */
    }
}

int tgl_gl_texture_window(const tgl_gl_limits *l, tgl__view v, size_t bytes, GLenum format, tgl_gl_binding *bind,
                          size_t *pad)
{
    size_t skip;
    tgl_gl_binding t = tgl_gl_window_aligned(v, bytes, 0, tgl_gl_window_align(l, 1), &skip);
    if (t.bytes > l->max_ssbo_block || t.bytes / tgl_gl_texel_bytes(format) > l->texture_buffer_texels)
        return 0;
    *bind = t;
    *pad = skip;
    return 1;
}

double tgl_gl_dispatch_flops(tgl_backend *b)
{
    unsigned ms = b->config.max_dispatch_ms;
    return ms ? tgl_gl_of(b)->limits.gflops_floor * 1e6 * ms : 0.0;
}

size_t tgl_gl_max_window_elems(const tgl_gl_limits *l, size_t elem_size)
{
    uint64_t slack = l->ssbo_align + 16;
    uint64_t n = l->max_ssbo_block > slack ? (l->max_ssbo_block - slack) / elem_size : 0;
    const uint64_t index_cap = (uint64_t)1 << 30; /* uint indices in kernels stay far from overflow */
    return (size_t)(n < index_cap ? n : index_cap);
}

tgl_status tgl_gl_grow(tgl_backend *b, tgl_gl_buffer **slot, size_t bytes, const char *what)
{
    if (*slot && (*slot)->bytes >= bytes)
        return TGL_OK;
    size_t had = *slot ? (*slot)->bytes : 0;
    if (!tgl__within_budget(b, tgl_gl_grow_extra(*slot, bytes)))
        return tgl__fail(b, TGL_ERR_OUT_OF_MEMORY,
                         "a working buffer of %zu bytes (%s) would take the live allocations (%llu bytes) and the "
                         "backend's kept buffers (%llu) past TGL_MAX_MEMORY (%llu)",
                         bytes, what, (unsigned long long)b->mem_in_use, (unsigned long long)b->mem_scratch,
                         (unsigned long long)b->config.max_memory);
    void *fresh;
    tgl_status st = tgl_gl_buffer_create(b, bytes, &fresh);
    if (st)
        return st;
    /* GL keeps the old storage alive for dispatches already queued on it. */
    if (*slot)
        tgl_gl_buffer_destroy(b, *slot);
    *slot = fresh;
    b->mem_scratch += (*slot)->bytes - had;
    return TGL_OK;
}

void tgl_gl_drop(tgl_backend *b, tgl_gl_buffer **slot)
{
    if (!*slot)
        return;
    b->mem_scratch -= (*slot)->bytes;
    tgl_gl_buffer_destroy(b, *slot);
    *slot = NULL;
}

tgl_status tgl_gl_grow_zeroed(tgl_backend *b, tgl_gl_buffer **slot, size_t bytes, const char *what)
{
    tgl_gl_buffer *had = *slot, *buf;
    tgl_status st = tgl_gl_grow(b, slot, bytes, what);
    if (st || (buf = *slot) == had) /* the kept one was large enough (a new one is another object) */
        return st;
    if ((st = tgl_gl_fill(b, (tgl__view){buf, 0}, 0.0f, buf->bytes / sizeof(uint32_t))))
        tgl_gl_drop(b, slot); /* not known to be zero: the next call makes (and zeroes) a new one */
    return st;
}

size_t tgl_gl_grow_extra(const tgl_gl_buffer *slot, size_t bytes)
{
    size_t had = slot ? slot->bytes : 0;
    return bytes > had ? bytes - had : 0;
}

void tgl_gl_release_scratch(tgl_backend *b)
{
    tgl_gl *gl = tgl_gl_of(b);
    /* the kept buffers that hold nothing between calls (the status words and rope tables do;
     * decode_counts and scan_lookback hold zeros and tags, which their makers write into new ones) */
    tgl_gl_buffer **idle[] = {&gl->scratch,   &gl->split_partials, &gl->conv_cols,      &gl->conv_sums,
                              &gl->conv_filter,
                              &gl->attention_kv, &gl->decode_counts, &gl->scan_lookback};
    for (size_t i = 0; i < sizeof idle / sizeof idle[0]; i++)
        tgl_gl_drop(b, idle[i]);
}

tgl_status tgl_gl_scratch(tgl_backend *b, size_t bytes, const char *what, tgl_gl_buffer **out)
{
    tgl_gl *gl = tgl_gl_of(b);
    /* at least 64 KiB, so that small calls share one buffer, unless TGL_MAX_MEMORY leaves less */
    size_t want = bytes < 65536 ? 65536 : bytes;
    if (want > bytes && !tgl__within_budget(b, tgl_gl_grow_extra(gl->scratch, want)))
        want = bytes;
    tgl_status st = tgl_gl_grow(b, &gl->scratch, want, what);
    if (!st)
        *out = gl->scratch;
    return st;
}

tgl_status tgl_gl_before_transfer(tgl_backend *b, tgl_gl_buffer *buf, int writes)
{
    tgl_gl *gl = tgl_gl_of(b);
    /* A transfer must not overtake a queued dispatch on the same buffer: an update (upload, a
     * copy's destination) after one that reads or writes it, a read (download, a copy's
     * source) after one that writes it. On the H100, GL_BUFFER_UPDATE_BARRIER_BIT alone let an
     * upload overtake pending shader reads and, intermittently, a download miss the last
     * dispatch's writes (tests/test_ordering.c), so wait for the queued work. A download waits
     * for its data anyway; models rarely upload into buffers in flight. */
    uint64_t hazard = writes ? buf->last_access : buf->last_write;
    if (hazard > gl->update_barrier_seq) { /* what the spec asks for, kept for other drivers */
        if (!gl->test.skip_barriers) {
            glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT);
            tgl_gl_audit_barrier(b, GL_BUFFER_UPDATE_BARRIER_BIT);
        }
        gl->update_barrier_seq = gl->seq;
    }
    if (hazard > gl->completed_seq && !gl->test.skip_barriers) {
        tgl_status st = tgl_gl_wait_idle(b, writes ? "a transfer into a buffer in use" : "a transfer from a buffer in use");
        if (st)
            return st;
    }
    return tgl_gl_audit_transfer(b, buf, writes);
}

void tgl_gl_note_copy(tgl_backend *b, tgl_gl_buffer *from, tgl_gl_buffer *to)
{
    tgl_gl *gl = tgl_gl_of(b);
    gl->seq++;
    if (from)
        from->last_access = gl->seq;
    if (to)
        to->last_access = to->last_write = gl->seq;
}

tgl_status tgl_gl_finish(tgl_backend *b)
{
    return tgl_gl_wait_idle(b, "tgl_synchronize");
}

tgl_status tgl_gl_wait_idle(tgl_backend *b, const char *who)
{
    tgl_gl *gl = tgl_gl_of(b);
    uint64_t issued = gl->seq;
    GLsync fence = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
    if (!fence) {
        tgl_status st = tgl_gl_check(b, "glFenceSync");
        return st ? st : tgl__fail(b, TGL_ERR_INTERNAL, "%s: glFenceSync returned 0", who);
    }
    tgl_status st = tgl_gl_wait_sync(b, fence, who);
    if (!st)
        gl->completed_seq = issued;
    return st;
}

tgl_status tgl_gl_wait_sync(tgl_backend *b, GLsync fence, const char *who)
{
    tgl_gl *gl = tgl_gl_of(b);
    GLuint64 timeout_ns = (GLuint64)b->config.sync_timeout_ms * 1000000u;
    gl->since_flush = 0; /* (the wait flushes) */
    GLenum r = glClientWaitSync(fence, GL_SYNC_FLUSH_COMMANDS_BIT, timeout_ns);
    if (gl->test.fault == TGL_GL_FAULT_TIMEOUT) {
        gl->test.fault = TGL_GL_FAULT_NONE;
        r = GL_TIMEOUT_EXPIRED;
    }
    glDeleteSync(fence);
    if (r == GL_TIMEOUT_EXPIRED) {
        tgl_status lost = tgl_gl_check_reset(b);
        return lost ? lost : tgl__fail(b, TGL_ERR_TIMEOUT,
                                       "%s: work still running after %u ms "
                                       "(TGL_SYNC_TIMEOUT_MS)", who, b->config.sync_timeout_ms);
    }
    if (r == GL_WAIT_FAILED) {
        tgl_status st = tgl_gl_check(b, "glClientWaitSync");
        return st ? st : tgl__fail(b, TGL_ERR_INTERNAL, "%s: glClientWaitSync failed", who);
    }
    return tgl_gl_check_reset(b);
}

/* TGL_DEBUG=1's barrier audit: a second ledger, kept apart from the barrier decisions in
 * gl_dispatch.c, of the glMemoryBarrier calls actually issued and the waits actually done.
 * Before each dispatch and transfer it checks that every buffer the GPU is about to touch was
 * behind a barrier of the right kind since the last dispatch that wrote it (or, for writes,
 * touched it); a hazard left
 * open (a missing barrier) is logged as an error and fails the call with TGL_ERR_INTERNAL, so
 * a broken barrier rule shows in the first test that meets it rather than as a rare wrong
 * number. Off (nothing but one branch per call) without TGL_DEBUG. */
#include "gl_internal.h"

static int audit_on(const tgl_backend *b)
{
    return (b->config.flags & TGL_FLAG_DEBUG) != 0;
}

void tgl_gl_audit_barrier(tgl_backend *b, GLbitfield bits)
{
    tgl_gl *gl = tgl_gl_of(b);
    if (bits & GL_SHADER_STORAGE_BARRIER_BIT)
        gl->audit.ssbo = gl->seq;
    if (bits & GL_TEXTURE_FETCH_BARRIER_BIT)
        gl->audit.texture = gl->seq;
    if (bits & GL_SHADER_IMAGE_ACCESS_BARRIER_BIT)
        gl->audit.image = gl->seq;
    if (bits & GL_BUFFER_UPDATE_BARRIER_BIT)
        gl->audit.update = gl->seq;
}

static tgl_status violation(tgl_backend *b, const char *what, uint64_t writer, const char *missing)
{
    tgl_gl *gl = tgl_gl_of(b);
    gl->audit.violations++;
    tgl__log(b, TGL__LOG_ERROR, "barrier audit: %s touches a buffer that dispatch %llu wrote, with no %s since",
             what, (unsigned long long)writer, missing);
    return tgl__fail(b, TGL_ERR_INTERNAL, "barrier audit (TGL_DEBUG=1): %s without %s after dispatch %llu", what,
                     missing, (unsigned long long)writer);
}

tgl_status tgl_gl_audit_dispatch(tgl_backend *b, const tgl_gl_binding *bind, int nbind)
{
    if (!audit_on(b))
        return TGL_OK;
    const tgl_gl *gl = tgl_gl_of(b);
    /* The spec asks for the barrier even when the writer is known to have finished. Which bit
     * each binding's read needs is decided here again, not taken from gl_dispatch.c, so that a
     * wrong rule there shows up as a violation rather than being shared by both ledgers. */
    uint64_t safe = gl->audit.ssbo, safe_tex = gl->audit.texture, safe_img = gl->audit.image;
    for (int i = 0; i < nbind; i++) {
        const tgl_gl_buffer *buf = bind[i].buf;
        uint64_t hazard = bind[i].writes ? buf->last_access : buf->last_write;
        if (hazard > safe)
            return violation(b, "a dispatch", hazard, "GL_SHADER_STORAGE_BARRIER_BIT");
        if (bind[i].texture_format && !bind[i].texture_image && buf->last_write > safe_tex)
            return violation(b, "a buffer-texture fetch", buf->last_write, "GL_TEXTURE_FETCH_BARRIER_BIT");
        if (bind[i].texture_format && bind[i].texture_image && buf->last_write > safe_img)
            return violation(b, "an image load", buf->last_write, "GL_SHADER_IMAGE_ACCESS_BARRIER_BIT");
    }
    return TGL_OK;
}

tgl_status tgl_gl_audit_transfer(tgl_backend *b, const tgl_gl_buffer *buf, int writes)
{
    if (!audit_on(b))
        return TGL_OK;
    const tgl_gl *gl = tgl_gl_of(b);
    uint64_t hazard = writes ? buf->last_access : buf->last_write;
    return hazard > gl->audit.update
               ? violation(b, writes ? "an upload or copy into a buffer" : "a download or copy from a buffer", hazard,
                           "GL_BUFFER_UPDATE_BARRIER_BIT")
               : TGL_OK;
}

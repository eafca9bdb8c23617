/* GL error and context-loss detection, mapped onto tgl_status. */
#include "gl_internal.h"

#ifndef GL_CONTEXT_LOST
#define GL_CONTEXT_LOST 0x0507
#endif

static const char *gl_error_name(GLenum e)
{
    switch (e) {
    case GL_INVALID_ENUM: return "GL_INVALID_ENUM";
    case GL_INVALID_VALUE: return "GL_INVALID_VALUE";
    case GL_INVALID_OPERATION: return "GL_INVALID_OPERATION";
    case GL_INVALID_FRAMEBUFFER_OPERATION: return "GL_INVALID_FRAMEBUFFER_OPERATION";
    case GL_OUT_OF_MEMORY: return "GL_OUT_OF_MEMORY";
    case GL_CONTEXT_LOST: return "GL_CONTEXT_LOST";
    default: return "GL error";
    }
}

tgl_status tgl_gl_check_reset(tgl_backend *b)
{
    tgl_gl *gl = tgl_gl_of(b);
    GLenum status = GL_NO_ERROR;
    if (gl->test.fault == TGL_GL_FAULT_RESET) {
        gl->test.fault = TGL_GL_FAULT_NONE;
        status = GL_UNKNOWN_CONTEXT_RESET;
    } else if (gl->has_reset_query) {
        status = glGetGraphicsResetStatus();
    }
    if (status == GL_NO_ERROR)
        return TGL_OK;
    const char *why = status == GL_GUILTY_CONTEXT_RESET     ? "caused by this context"
                      : status == GL_INNOCENT_CONTEXT_RESET ? "caused elsewhere"
                                                            : "cause unknown";
    return tgl__fail(b, TGL_ERR_DEVICE_LOST, "GL context reset (%s); close this backend", why);
}

tgl_status tgl_gl_check(tgl_backend *b, const char *what)
{
    tgl_gl *gl = tgl_gl_of(b);
    if (gl->test.lose_after && --gl->test.lose_after == 0) { /* test hook: the context goes now */
        gl->test.fault = TGL_GL_FAULT_GL_ERROR;
        gl->test.fault_error = GL_CONTEXT_LOST;
    }
    GLenum first = glGetError();
    if (gl->test.fault == TGL_GL_FAULT_GL_ERROR) {
        first = gl->test.fault_error;
        gl->test.fault = TGL_GL_FAULT_NONE;
    }
    if (first == GL_NO_ERROR)
        return TGL_OK;
    /* Drain the rest so the next check starts clean; a lost context can repeat its error. */
    for (int i = 0; i < 16 && glGetError() != GL_NO_ERROR; i++)
        ;
    if (first == GL_CONTEXT_LOST)
        return tgl__fail(b, TGL_ERR_DEVICE_LOST, "%s: GL_CONTEXT_LOST; close this backend", what);
    if (first == GL_OUT_OF_MEMORY)
        return tgl__fail(b, TGL_ERR_OUT_OF_MEMORY, "%s: GL_OUT_OF_MEMORY", what);
    tgl_status lost = tgl_gl_check_reset(b);
    if (lost)
        return lost;
    return tgl__fail(b, TGL_ERR_INTERNAL, "%s: unexpected %s (0x%04x)", what, gl_error_name(first), first);
}

void tgl_gl_test_lose_context_after(tgl_backend *b, unsigned checks)
{
    tgl_gl_of(b)->test.lose_after = checks;
}

void tgl_gl_test_skip_barriers(tgl_backend *b, int skip)
{
    tgl_gl *gl = tgl_gl_of(b);
    gl->test.skip_barriers = skip;
    if (!skip) { /* back to the barriers really issued, so the next hazards get theirs */
        gl->ssbo_barrier_seq = gl->audit.ssbo;
        gl->texture_barrier_seq = gl->audit.texture;
        gl->image_barrier_seq = gl->audit.image;
        gl->update_barrier_seq = gl->audit.update;
    }
}

void tgl_gl_test_inject(tgl_backend *b, int fault, GLenum error)
{
    tgl_gl *gl = tgl_gl_of(b);
    gl->test.fault = fault;
    gl->test.fault_error = error;
}

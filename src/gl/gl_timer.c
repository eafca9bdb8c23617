/* The profiler's device timer: a GL_TIME_ELAPSED query around one call's dispatches. */
#include "gl_internal.h"

tgl_status tgl_gl_timer_begin(tgl_backend *b)
{
    tgl_gl *gl = tgl_gl_of(b);
    if (!gl->limits.timer_queries)
        return TGL_ERR_UNSUPPORTED;
    if (!gl->timer_query)
        glGenQueries(1, &gl->timer_query);
    glBeginQuery(GL_TIME_ELAPSED, gl->timer_query);
    return tgl_gl_check(b, "profiler (glBeginQuery)");
}

tgl_status tgl_gl_timer_end(tgl_backend *b, double *seconds)
{
    tgl_gl *gl = tgl_gl_of(b);
    glEndQuery(GL_TIME_ELAPSED);
    GLuint64 ns = 0;
    glGetQueryObjectui64v(gl->timer_query, GL_QUERY_RESULT, &ns); /* waits for the work */
    tgl_status st = tgl_gl_check(b, "profiler (glGetQueryObjectui64v)");
    *seconds = st ? -1.0 : (double)ns * 1e-9;
    return st;
}

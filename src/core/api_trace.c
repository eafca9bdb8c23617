/* tgl_trace_start/stop and tgl_profile_start/report/stop. */
#include "trace.h"
#include "validate.h"

TGL_API tgl_status tgl_trace_start(tgl_backend *b, const char *dir)
{
    tgl_status st = tgl__enter(b);
    if (st)
        return st;
    if (!dir || !*dir)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "dir: NULL or empty");
    if (b->trace)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "already tracing: call tgl_trace_stop first");
    return tgl__trace_begin(b, dir);
}

TGL_API tgl_status tgl_trace_stop(tgl_backend *b)
{
    if (!b)
        return tgl__fail(NULL, TGL_ERR_INVALID_ARGUMENT, "b: NULL backend");
    if (!b->trace)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "not tracing");
    return tgl__trace_end(b);
}

TGL_API tgl_status tgl_profile_start(tgl_backend *b)
{
    if (!b)
        return tgl__fail(NULL, TGL_ERR_INVALID_ARGUMENT, "b: NULL backend");
    return tgl__profile_begin(b);
}

TGL_API tgl_status tgl_profile_report(tgl_backend *b, FILE *out)
{
    if (!b)
        return tgl__fail(NULL, TGL_ERR_INVALID_ARGUMENT, "b: NULL backend");
    if (!out)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "out: NULL");
    if (!b->profile)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "not profiling: call tgl_profile_start first");
    tgl__profile_print(b, out);
    return TGL_OK;
}

TGL_API tgl_status tgl_profile_stop(tgl_backend *b)
{
    if (!b)
        return tgl__fail(NULL, TGL_ERR_INVALID_ARGUMENT, "b: NULL backend");
    tgl__profile_end(b, 0);
    return TGL_OK;
}

#include "validate.h"

#include <math.h>
#include <pthread.h>
#include <unistd.h>

/* How many fork()s lie between the first tgl_open and this process: counted in the child by an
 * atfork handler, so the check on every call reads a variable instead of calling getpid (a
 * system call). The child runs its handler with one thread, before anything else. */
static unsigned long fork_generation;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void count_fork(void)
{
    fork_generation++;
}

static void register_atfork(void)
{
    pthread_atfork(NULL, NULL, count_fork);
}

unsigned long tgl__fork_generation(void)
{
    pthread_once(&atfork_once, register_atfork);
    return fork_generation;
}

int tgl__forked(const tgl_backend *b)
{
    return b->vt && b->vt->process_bound && b->fork_generation != fork_generation;
}

tgl_status tgl__enter_host(tgl_backend *b)
{
    if (!b)
        return tgl__fail(NULL, TGL_ERR_INVALID_ARGUMENT, "b: NULL backend");
    if (b->lost)
        return tgl__fail(b, TGL_ERR_DEVICE_LOST, "the device was lost earlier; close this backend");
    if (tgl__forked(b)) {
        b->lost = 1;
        return tgl__fail(b, TGL_ERR_DEVICE_LOST,
                         "this %s backend was opened by process %ld, and this process (%ld) is a fork() of it: "
                         "its context does not carry over; close it and open a backend here",
                         b->vt->name, b->pid, (long)getpid()); /* the error path only: getpid is a system call */
    }
    return TGL_OK;
}

tgl_status tgl__enter(tgl_backend *b)
{
    tgl_status st = tgl__enter_host(b);
    if (st || !b->vt->activate)
        return st;
    return tgl__leave(b, b->vt->activate(b));
}

tgl_status tgl__check_activation(tgl_backend *b, tgl_activation act, float slope)
{
    if ((unsigned)act >= TGL_ACTIVATION_COUNT)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "activation: %d is not a tgl_activation", (int)act);
    if (!isfinite(slope))
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "slope: %g is not finite", (double)slope);
    return TGL_OK;
}

tgl_status tgl__check_gemm_epilogue(tgl_backend *b, const tgl__gemm *g, const char *factor)
{
    tgl_status st = tgl__check_activation(b, g->act, g->slope);
    if (st)
        return st;
    if (g->gate != 0 && g->gate != 1)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "gate: %d, 0 or 1", g->gate);
    if (g->gate && g->beta != 0.0f)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "beta: %g with gate 1 (%s is the gate's factor, not a term: "
                         "beta must be 0)", (double)g->beta, factor);
    return TGL_OK;
}

tgl_status tgl__leave(tgl_backend *b, tgl_status st)
{
    if (st == TGL_ERR_DEVICE_LOST)
        b->lost = 1;
    return st;
}

tgl_status tgl__resolve(tgl_backend *b, const char *arg, tgl_ptr p, size_t bytes, tgl__view *v)
{
    uint64_t offset;
    tgl__handle_result r = tgl__handles_lookup(&b->handles, p, bytes, &v->buf, &offset, NULL);
    if (r != TGL__HANDLE_OK)
        return tgl__fail(b, TGL_ERR_INVALID_POINTER, "%s (0x%llx, %zu bytes): %s", arg,
                         (unsigned long long)p, bytes, tgl__handle_result_string(r));
    v->offset = (size_t)offset;
    return TGL_OK;
}

tgl_status tgl__i32_arg(tgl_backend *b, const char *name, double v, int32_t *out)
{
    if (!(v >= -2147483648.0 && v <= 2147483647.0) || v != floor(v))
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "%s: %.17g is not an i32 value", name, v);
    *out = (int32_t)v;
    return TGL_OK;
}

tgl_status tgl__mul(tgl_backend *b, const char *what, size_t n, size_t m, size_t *out)
{
    if (m && n > SIZE_MAX / m)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "%s: %zu x %zu overflows", what, n, m);
    *out = n * m;
    return TGL_OK;
}

tgl_status tgl__resolve_array(tgl_backend *b, const char *arg, tgl_ptr p, size_t n, size_t elem_size,
                              tgl__view *v)
{
    size_t bytes = 0;
    tgl_status st = tgl__mul(b, arg, n, elem_size, &bytes);
    if (st || (st = tgl__resolve(b, arg, p, bytes, v)))
        return st;
    if (v->offset % elem_size)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "%s: offset %zu is not %zu-byte aligned", arg,
                         v->offset, elem_size);
    return TGL_OK;
}

int tgl__overlaps(tgl__view x, size_t xbytes, tgl__view y, size_t ybytes)
{
    return x.buf == y.buf && x.offset < y.offset + ybytes && y.offset < x.offset + xbytes;
}

tgl_status tgl__check_alias(tgl_backend *b, const char *in_arg, tgl__view in, size_t in_bytes,
                            tgl__view out, size_t out_bytes)
{
    if (tgl__overlaps(in, in_bytes, out, out_bytes) && (in.offset != out.offset || in_bytes != out_bytes))
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT,
                         "out partially overlaps %s (offsets %zu and %zu): use the same pointer "
                         "or disjoint ranges", in_arg, out.offset, in.offset);
    return TGL_OK;
}

tgl_status tgl__check_disjoint(tgl_backend *b, const char *in_arg, tgl__view in, size_t in_bytes,
                               tgl__view out, size_t out_bytes)
{
    if (tgl__overlaps(in, in_bytes, out, out_bytes))
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "out overlaps %s (offsets %zu and %zu)", in_arg,
                         out.offset, in.offset);
    return TGL_OK;
}

tgl_status tgl__unsupported(tgl_backend *b, const char *fn)
{
    return tgl__fail(b, TGL_ERR_UNSUPPORTED, "%s: not implemented by the %s backend", fn, b->vt->name);
}

tgl_status tgl__count4(tgl_backend *b, const char *arg, size_t a, size_t c, size_t h, size_t w, size_t *out)
{
    tgl_status st;
    size_t x = 0;
    if ((st = tgl__mul(b, arg, a, c, &x)) || (st = tgl__mul(b, arg, x, h, &x)) || (st = tgl__mul(b, arg, x, w, out)) ||
        (st = tgl__mul(b, arg, *out, sizeof(float), &x)))
        return st;
    return TGL_OK;
}

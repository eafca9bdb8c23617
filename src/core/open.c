/* tgl_open / tgl_close and the calls that describe a backend. */
#include "trace.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void destroy_buffer(void *ctx, void *buf)
{
    tgl_backend *b = ctx;
    b->vt->buffer_destroy(b, buf);
}

/* The backend's host memory only: where its device state cannot be reached (a fork()ed child, a
 * context current on another thread). */
static void backend_free_host(tgl_backend *b)
{
    tgl__handles_fini(&b->handles);
    if (b->log_file && !tgl__forked(b))
        fclose(b->log_file);
    free(b);
}

/* Backends closed from a thread that could not make their context current (it is current on a
 * thread still using it): nothing of them can be released from here, so they stay referenced
 * here (not leaked) until the process ends; past the table's size only the host side goes. */
static pthread_mutex_t retired_lock = PTHREAD_MUTEX_INITIALIZER;
static tgl_backend *retired[64];

static void retire(tgl_backend *b)
{
    pthread_mutex_lock(&retired_lock);
    size_t i = 0;
    while (i < sizeof retired / sizeof retired[0] && retired[i])
        i++;
    if (i < sizeof retired / sizeof retired[0])
        retired[i] = b;
    pthread_mutex_unlock(&retired_lock);
    if (i == sizeof retired / sizeof retired[0])
        backend_free_host(b);
}

static void backend_free(tgl_backend *b)
{
    if (tgl__forked(b)) {
        /* A fork()ed child: the device objects, the trace and the profile are the parent's, and
         * touching the context would abort in the driver; only this process's copy of the host
         * memory goes (the backend's own state is left: freeing it would release GL objects). */
        backend_free_host(b);
        return;
    }
    if (b->trace)
        tgl__trace_end(b);
    if (b->profile)
        tgl__profile_end(b, b->config.profile); /* TGL_PROFILE=1: the table at tgl_close */
    if (b->vt) {
        tgl__handles_each(&b->handles, destroy_buffer, b);
        tgl__temp_release(b);
        b->vt->destroy(b);
    }
    tgl__handles_fini(&b->handles);
    if (b->log_file)
        fclose(b->log_file);
    free(b);
}

/* Opens the configured backend into b; on failure the detail is in b->last_error. */
static tgl_status open_kind(tgl_backend *b)
{
    if (b->config.kind == TGL_BACKEND_CPU)
        return tgl_cpu_open(b);
    tgl_status st = tgl_gl_open(b);
    if (!st && (b->config.flags & TGL_FLAG_SELF_TEST) && (st = tgl__self_test(b))) {
        /* refused like a failed driver check; the self-test freed what it allocated */
        tgl__temp_release(b);
        b->vt->destroy(b);
        b->vt = NULL;
        b->impl = NULL;
        b->mem_in_use = b->mem_peak = b->mem_scratch = 0;
    }
    /* A device the user named that cannot be had is an error for auto too (README: not a silent
     * fallback). */
    if (st != TGL_ERR_NO_DEVICE || b->config.kind == TGL_BACKEND_GL || tgl__device_demanded(&b->config))
        return st;
    /* Auto: no usable GL context, so the CPU backend serves, and the reason is kept. */
    tgl__strlcpy(b->fallback_reason, b->last_error, sizeof b->fallback_reason);
    st = tgl_cpu_open(b);
    if (st == TGL_OK) {
        tgl__fail(b, TGL_OK, "GL unavailable, using the CPU backend: %s", b->fallback_reason);
        tgl__log(b, TGL__LOG_INFO, "%s", b->last_error);
    }
    return st;
}

/* Starts what TGL_TRACE and TGL_PROFILE ask for; a trace that cannot start fails the open
 * (the user asked for a record and would not get one). */
static tgl_status start_hooks(tgl_backend *b, int trace)
{
    tgl_status st = TGL_OK;
    if (trace && b->config.trace_dir[0])
        st = tgl__trace_begin(b, b->config.trace_dir);
    if (!st && b->config.profile)
        st = tgl__profile_begin(b);
    return st;
}

static tgl_status open_backend(const tgl_options *opts, int trace, tgl_backend **out)
{
    if (!out)
        return tgl__fail(NULL, TGL_ERR_INVALID_ARGUMENT, "out: NULL");
    *out = NULL;
    tgl__config cfg;
    tgl_status st = tgl__config_resolve(opts, &cfg);
    if (st)
        return st;
    tgl_backend *b = calloc(1, sizeof *b);
    if (!b)
        return tgl__fail(NULL, TGL_ERR_OUT_OF_MEMORY, "tgl_open: no host memory for the backend");
    b->config = cfg;
    b->pid = (long)getpid();
    b->fork_generation = tgl__fork_generation();
    tgl__handles_init(&b->handles);
    if (cfg.log_path[0] && !(b->log_file = fopen(cfg.log_path, "a"))) {
        int err = errno;
        backend_free(b);
        return tgl__fail(NULL, TGL_ERR_IO, "TGL_LOG=%s: %s", cfg.log_path, strerror(err));
    }
    st = open_kind(b);
    if (!st)
        st = start_hooks(b, trace);
    if (st) {
        tgl__fail(NULL, st, "%s", b->last_error);
        backend_free(b);
        return st;
    }
    *out = b;
    return TGL_OK;
}

TGL_API tgl_status tgl_open(const tgl_options *opts, tgl_backend **out)
{
    return open_backend(opts, 1, out);
}

tgl_status tgl__open_untraced(const tgl_options *opts, tgl_backend **out)
{
    return open_backend(opts, 0, out);
}

TGL_API void tgl_close(tgl_backend *b)
{
    if (!b)
        return;
    if (b->vt && !b->lost && !tgl__forked(b)) {
        if (b->vt->activate && b->vt->activate(b) != TGL_OK) {
            /* The context is current on a thread still using it: nothing of the device can be
             * reached from here (and touching it would abort in libepoxy). */
            tgl__log(b, TGL__LOG_WARN, "tgl_close: %s; the backend is retired: it and its device objects stay "
                     "until the process ends", tgl_last_error(b));
            retire(b);
            return;
        }
        b->vt->synchronize(b); /* pending work ends before its buffers go */
    }
    backend_free(b);
}

TGL_API const char *tgl_backend_name(const tgl_backend *b)
{
    return b && b->vt ? b->vt->name : "";
}

TGL_API tgl_status tgl_device_info(tgl_backend *b, struct tgl_device_info *info)
{
    if (!b)
        return tgl__fail(NULL, TGL_ERR_INVALID_ARGUMENT, "b: NULL");
    if (!info)
        return tgl__fail(b, TGL_ERR_INVALID_ARGUMENT, "info: NULL");
    memset(info, 0, sizeof *info);
    tgl__strlcpy(info->backend, b->vt->name, sizeof info->backend);
    tgl__strlcpy(info->fallback_reason, b->fallback_reason, sizeof info->fallback_reason);
    b->vt->device_info(b, info);
    return TGL_OK;
}

TGL_API tgl_status tgl_list_devices(struct tgl_device_entry *out, int capacity, int *count)
{
    if (!count)
        return tgl__fail(NULL, TGL_ERR_INVALID_ARGUMENT, "tgl_list_devices: count: NULL");
    *count = 0;
    if (capacity < 0)
        return tgl__fail(NULL, TGL_ERR_INVALID_ARGUMENT, "tgl_list_devices: capacity %d is negative", capacity);
    if (!out && capacity > 0)
        return tgl__fail(NULL, TGL_ERR_INVALID_ARGUMENT, "tgl_list_devices: out: NULL with capacity %d", capacity);
    return tgl_gl_list_devices(out, capacity, count);
}

void tgl__print_device_profile(tgl_backend *b, FILE *out)
{
    if (b && b->vt->print_profile && !b->vt->activate(b))
        b->vt->print_profile(b, out);
    else
        fprintf(out, "profile:        none (the %s backend has no device traits)\n", b ? b->vt->name : "?");
}

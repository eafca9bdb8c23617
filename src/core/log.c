#include "internal.h"

#include <pthread.h>
#include <stdio.h>

/* The callback and its user pointer change together, so they share a lock. */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static tgl_log_fn log_fn;
static void *log_user;

TGL_API void tgl_set_log_callback(tgl_log_fn fn, void *user)
{
    pthread_mutex_lock(&log_lock);
    log_fn = fn;
    log_user = user;
    pthread_mutex_unlock(&log_lock);
}

static const char *level_name(int level)
{
    static const char *names[] = {"debug", "info", "warning", "error"};
    return level >= 0 && level <= 3 ? names[level] : "log";
}

void tgl__log(tgl_backend *b, int level, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);

    pthread_mutex_lock(&log_lock);
    if (log_fn) {
        log_fn(log_user, level, msg);
    } else {
        FILE *f = b && b->log_file ? b->log_file : stderr;
        /* "tensorgl: warning: ...", as compilers write theirs ("tensorgl info: ..." read like the
         * `tensorgl info` command) */
        fprintf(f, "tensorgl: %s: %s\n", level_name(level), msg);
        fflush(f);
    }
    pthread_mutex_unlock(&log_lock);
}

#include "internal.h"

#include <pthread.h>
#include <stdio.h>

/* The callback and its user pointer change together, so they share a lock. The lock is not held
 * while a callback runs (a callback that calls into tensorgl, tgl_set_log_callback included,
 * once deadlocked on it): callers count themselves in `running`, and tgl_set_log_callback waits
 * until no thread is still in a callback it replaced. */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t log_idle = PTHREAD_COND_INITIALIZER;
static tgl_log_fn log_fn;
static void *log_user;
static unsigned running;                 /* callbacks running, in every thread */
static _Thread_local unsigned in_callback; /* ... of which in this thread */

TGL_API void tgl_set_log_callback(tgl_log_fn fn, void *user)
{
    pthread_mutex_lock(&log_lock);
    log_fn = fn;
    log_user = user;
    /* Once this returns, the old callback runs in no thread (its state may be freed). Called
     * from inside a callback it returns at once: this thread's own callback cannot end first,
     * and two threads waiting on each other's would never wake. */
    while (!in_callback && running > 0)
        pthread_cond_wait(&log_idle, &log_lock);
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
    tgl_log_fn fn = log_fn;
    void *user = log_user;
    if (fn) {
        running++;
        in_callback++;
        pthread_mutex_unlock(&log_lock);
        fn(user, level, msg);
        pthread_mutex_lock(&log_lock);
        in_callback--;
        if (--running == 0)
            pthread_cond_broadcast(&log_idle);
    } else {
        FILE *f = b && b->log_file ? b->log_file : stderr;
        /* "tensorgl: warning: ...", as compilers write theirs ("tensorgl info: ..." read like the
         * `tensorgl info` command) */
        fprintf(f, "tensorgl: %s: %s\n", level_name(level), msg);
        fflush(f);
    }
    pthread_mutex_unlock(&log_lock);
}

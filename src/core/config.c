/* tgl_options plus environment variables -> tgl__config. Zero fields take the environment's
 * value, then the default; malformed values are errors rather than silently ignored. */
#include "internal.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_MAX_TASKS 64
#define DEFAULT_SYNC_TIMEOUT_MS 60000
/* Display watchdogs end a dispatch after about 2 s (Windows' TDR) to a few seconds (X with a
 * monitor on NVIDIA); splitting heavy ops at ~200 ms of estimated work stays well inside. */
#define DEFAULT_MAX_DISPATCH_MS 200

/* Digits only: strtoul alone also takes leading blanks and a sign, so " -1" read as ULONG_MAX
 * (TGL_MAX_MEMORY=" -1" meant no budget at all). */
static int parse_uint(const char *s, unsigned long max, unsigned long *out)
{
    if (!s || *s < '0' || *s > '9')
        return 0;
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || *end || s[0] == '-' || v > max)
        return 0;
    *out = v;
    return 1;
}

static tgl_status env_uint(const char *name, unsigned long min, unsigned long max,
                           unsigned long fallback, unsigned long *out)
{
    const char *s = getenv(name);
    *out = fallback;
    if (!s || !*s)
        return TGL_OK;
    if (!parse_uint(s, max, out) || *out < min)
        return tgl__fail(NULL, TGL_ERR_INVALID_ARGUMENT, "%s=\"%s\": expected an integer in [%lu, %lu]",
                         name, s, min, max);
    return TGL_OK;
}

/* Copies environment variable `name` (unset: "") into dst, or fails naming it when it does not fit. */
static tgl_status env_string(const char *name, char *dst, size_t size)
{
    const char *s = getenv(name);
    if (s && strlen(s) >= size)
        return tgl__fail(NULL, TGL_ERR_INVALID_ARGUMENT, "%s: longer than %zu bytes", name, size - 1);
    tgl__strlcpy(dst, s, size);
    return TGL_OK;
}

static tgl_status resolve_kind(const tgl_options *opts, tgl__config *cfg)
{
    if (opts && (opts->kind < TGL_BACKEND_AUTO || opts->kind > TGL_BACKEND_CPU))
        return tgl__fail(NULL, TGL_ERR_INVALID_ARGUMENT, "opts->kind: %d is not a tgl_backend_kind",
                         (int)opts->kind);
    cfg->kind = opts ? opts->kind : TGL_BACKEND_AUTO;
    const char *s = getenv("TGL_BACKEND");
    if (cfg->kind != TGL_BACKEND_AUTO || !s || !*s)
        return TGL_OK;
    if (!strcmp(s, "auto"))
        cfg->kind = TGL_BACKEND_AUTO;
    else if (!strcmp(s, "gl"))
        cfg->kind = TGL_BACKEND_GL;
    else if (!strcmp(s, "cpu"))
        cfg->kind = TGL_BACKEND_CPU;
    else
        return tgl__fail(NULL, TGL_ERR_INVALID_ARGUMENT, "TGL_BACKEND=\"%s\": expected auto, gl or cpu", s);
    return TGL_OK;
}

static tgl_status resolve_api(tgl__config *cfg)
{
    const char *s = getenv("TGL_API");
    cfg->api = TGL__API_ANY;
    if (!s || !*s || !strcmp(s, "auto"))
        return TGL_OK;
    if (!strcmp(s, "gl"))
        cfg->api = TGL__API_GL;
    else if (!strcmp(s, "gles"))
        cfg->api = TGL__API_GLES;
    else
        return tgl__fail(NULL, TGL_ERR_INVALID_ARGUMENT, "TGL_API=\"%s\": expected auto, gl or gles", s);
    return TGL_OK;
}

/* Variable `name` as the index of its value among names[1..n-1] (0, names[0] = "", when unset
 * or empty); another value fails, quoting `expect`. */
static tgl_status env_choice(const char *name, const char *const *names, size_t n, const char *expect, size_t *out)
{
    const char *s = getenv(name);
    *out = 0;
    if (!s || !*s)
        return TGL_OK;
    size_t i = 1;
    while (i < n && strcmp(s, names[i]))
        i++;
    if (i == n)
        return tgl__fail(NULL, TGL_ERR_INVALID_ARGUMENT, "%s=\"%s\": expected %s", name, s, expect);
    *out = i;
    return TGL_OK;
}

/* TGL_POOL=off|reuse|carve (unset or empty: the device's choice), TGL_LIMITS=gl43-min|es31-min,
 * TGL_DEVICE_PROFILE and TGL_PROFILE_TIMER=0|1. */
static tgl_status resolve_gl_overrides(tgl__config *cfg)
{
    static const char *const pools[] = {"", "off", "reuse", "carve"}; /* tgl__pool_choice's order */
    static const char *const limits[] = {"", "gl43-min", "es31-min"}; /* tgl__spec_limits' order */
    size_t pool = 0, spec = 0;
    tgl_status st = env_choice("TGL_POOL", pools, sizeof pools / sizeof *pools, "off, reuse or carve", &pool);
    if (st || (st = env_choice("TGL_LIMITS", limits, sizeof limits / sizeof *limits, "gl43-min or es31-min", &spec)))
        return st;
    cfg->pool = (tgl__pool_choice)pool;
    cfg->limits = (tgl__spec_limits)spec;
    st = env_string("TGL_DEVICE_PROFILE", cfg->device_profile, sizeof cfg->device_profile);
    if (st || (st = tgl_gl_profile_check(cfg->device_profile)))
        return st;
    unsigned long v = 0;
    st = env_uint("TGL_PROFILE_TIMER", 0, 1, 2, &v);
    cfg->profile_timer = v == 2 ? -1 : (int)v;
    return st;
}

/* TGL_SHADER=glsl|spirv and TGL_SPIRV_DIR (read by the GL backend only when spirv is chosen). */
static tgl_status resolve_shader(tgl__config *cfg)
{
    const char *s = getenv("TGL_SHADER");
    if (s && *s && strcmp(s, "glsl") && strcmp(s, "spirv"))
        return tgl__fail(NULL, TGL_ERR_INVALID_ARGUMENT, "TGL_SHADER=\"%s\": expected glsl or spirv", s);
    cfg->spirv = s && !strcmp(s, "spirv");
    return env_string("TGL_SPIRV_DIR", cfg->spirv_dir, sizeof cfg->spirv_dir);
}

/* TGL_CACHE_DIR, or $XDG_CACHE_HOME/tensorgl, or $HOME/.cache/tensorgl; TGL_CACHE_DIR set to ""
 * turns the disk cache off, as does a default path that does not fit. */
static tgl_status resolve_cache_dir(tgl__config *cfg)
{
    const char *dir = getenv("TGL_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    int n;
    if (dir) {
        if (strlen(dir) >= sizeof cfg->cache_dir)
            return tgl__fail(NULL, TGL_ERR_INVALID_ARGUMENT, "TGL_CACHE_DIR: path longer than %zu bytes",
                             sizeof cfg->cache_dir - 1);
        tgl__strlcpy(cfg->cache_dir, dir, sizeof cfg->cache_dir);
        return TGL_OK;
    }
    if (xdg && *xdg == '/')
        n = snprintf(cfg->cache_dir, sizeof cfg->cache_dir, "%s/tensorgl", xdg);
    else if (home && *home == '/')
        n = snprintf(cfg->cache_dir, sizeof cfg->cache_dir, "%s/.cache/tensorgl", home);
    else
        n = 0;
    if (n <= 0 || (size_t)n >= sizeof cfg->cache_dir)
        cfg->cache_dir[0] = '\0';
    return TGL_OK;
}

tgl_status tgl__config_resolve(const tgl_options *opts, tgl__config *cfg)
{
    *cfg = (tgl__config){0};
    tgl_status st = resolve_kind(opts, cfg);
    if (st)
        return st;
    const unsigned known = TGL_FLAG_DEBUG | TGL_FLAG_SELF_TEST;
    if (opts && opts->flags & ~known)
        return tgl__fail(NULL, TGL_ERR_INVALID_ARGUMENT, "opts->flags: unknown bits 0x%x", opts->flags & ~known);
    if (opts && opts->device < 0)
        return tgl__fail(NULL, TGL_ERR_INVALID_ARGUMENT, "opts->device: %d is negative", opts->device);

    unsigned long v;
    if (opts && opts->device > 0) {
        cfg->device = opts->device;
        cfg->device_explicit = 1;
    } else {
        /* A number is an index; anything else is part of a device's name, driver or DRM node. */
        const char *dev = getenv("TGL_DEVICE");
        if (dev && *dev && strspn(dev, "0123456789") != strlen(dev)) {
            if (strlen(dev) >= sizeof cfg->device_name)
                return tgl__fail(NULL, TGL_ERR_INVALID_ARGUMENT, "TGL_DEVICE: a name of at most %zu characters",
                                 sizeof cfg->device_name - 1);
            tgl__strlcpy(cfg->device_name, dev, sizeof cfg->device_name);
            cfg->device_explicit = 1;
        } else {
            if ((st = env_uint("TGL_DEVICE", 0, 1023, 0, &v)))
                return st;
            cfg->device = (int)v;
            cfg->device_explicit = dev && *dev;
        }
    }
    cfg->flags = opts ? opts->flags : 0;
    if ((st = env_uint("TGL_DEBUG", 0, 1, 0, &v)))
        return st;
    if (v)
        cfg->flags |= TGL_FLAG_DEBUG;
    if ((st = env_uint("TGL_SELF_TEST", 0, 1, 0, &v)))
        return st;
    if (v)
        cfg->flags |= TGL_FLAG_SELF_TEST;
    if ((st = resolve_api(cfg)))
        return st;
    if ((st = env_uint("TGL_MAX_TASKS", 1, 1u << 20, DEFAULT_MAX_TASKS, &v)))
        return st;
    cfg->max_tasks = (unsigned)v;
    if ((st = env_uint("TGL_SYNC_TIMEOUT_MS", 0, 86400000ul, DEFAULT_SYNC_TIMEOUT_MS, &v)))
        return st;
    cfg->sync_timeout_ms = (unsigned)v;
    if ((st = env_uint("TGL_MAX_DISPATCH_MS", 0, 86400000ul, DEFAULT_MAX_DISPATCH_MS, &v)))
        return st;
    cfg->max_dispatch_ms = (unsigned)v;
    if ((st = env_string("TGL_LOG", cfg->log_path, sizeof cfg->log_path)) ||
        (st = env_string("TGL_GEMM", cfg->gemm, sizeof cfg->gemm)) ||
        (st = env_string("TGL_TRACE", cfg->trace_dir, sizeof cfg->trace_dir)))
        return st;
    if ((st = env_uint("TGL_PROFILE", 0, 1, 0, &v)))
        return st;
    cfg->profile = (int)v;
    if ((st = env_uint("TGL_MAX_MEMORY", 0, ULONG_MAX, 0, &v)))
        return st;
    cfg->max_memory = v;
    if ((st = resolve_shader(cfg)) || (st = resolve_gl_overrides(cfg)))
        return st;
    return resolve_cache_dir(cfg);
}

#include "testing.h"
#include "gl/gl_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <limits.h>
#include <unistd.h>

/* Reaches into the GL backend only to learn whether a display exists at all. */
int tgl_egl_display_exists(void);

uint64_t tgt_seed(void)
{
    static uint64_t seed;
    if (!seed) {
        const char *s = getenv("TGL_TEST_SEED");
        seed = s && *s ? strtoull(s, NULL, 0) : ((uint64_t)time(NULL) << 20) ^ (uint64_t)getpid();
        if (!seed)
            seed = 1;
        printf("[ SEED     ] TGL_TEST_SEED=%llu\n", (unsigned long long)seed);
    }
    return seed;
}

void tgt_rng_init(tgt_rng *r, uint64_t seed)
{
    r->s = seed ? seed : 0x9E3779B97F4A7C15ull;
}

uint64_t tgt_next(tgt_rng *r)
{
    /* xorshift64* */
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return r->s * 0x2545F4914F6CDD1Dull;
}

float tgt_uniform(tgt_rng *r, float lo, float hi)
{
    double u = (double)(tgt_next(r) >> 11) / (double)(1ull << 53);
    return (float)(lo + (hi - lo) * u);
}

size_t tgt_below(tgt_rng *r, size_t n)
{
    return n ? (size_t)(tgt_next(r) % n) : 0;
}

int tgt_cpu_only(void)
{
    const char *v = getenv("TGL_TEST_CPU_ONLY");
    return v && !strcmp(v, "1");
}

static double test_scale(void)
{
    const char *v = getenv("TGL_TEST_SCALE");
    if (!v || !*v)
        return 1.0;
    char *end;
    double scale = strtod(v, &end);
    if (*end || !(scale > 0 && scale <= 1))
        fail_msg("TGL_TEST_SCALE=%s: a number in (0, 1] expected", v);
    return scale;
}

int tgt_pick(size_t i)
{
    size_t stride = (size_t)(1.0 / test_scale() + 0.5);
    return stride <= 1 || (i + tgt_seed() % stride) % stride == 0;
}

static void expected_log(void *user, int level, const char *message)
{
    (void)user;
    static const char *const names[] = {"debug", "info", "warning", "error"}; /* tgl_log_fn's levels */
    printf("[ EXPECTED ] tensorgl: %s: %s\n", level >= 0 && level <= 3 ? names[level] : "log", message);
    fflush(stdout);
}

void tgt_expected_begin(void)
{
    tgl_set_log_callback(expected_log, NULL);
}

void tgt_expected_end(void)
{
    tgl_set_log_callback(NULL, NULL);
}

void tgt_expected(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("[ EXPECTED ] ");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    fflush(stdout);
}

int tgt_count(int n)
{
    int scaled = (int)(n * test_scale());
    return scaled > 0 ? scaled : 1;
}

tgl_backend *tgt_open(tgl_backend_kind kind)
{
    if (kind == TGL_BACKEND_GL && tgt_cpu_only()) {
        printf("TGL_TEST_CPU_ONLY=1: the GL part is skipped\n");
        skip();
    }
    tgl_options o = {.kind = kind};
    tgl_backend *b = NULL;
    tgl_status st = tgl_open(&o, &b);
    if (st == TGL_OK) {
        /* TGL_FAULT=lose-context-after:N: the test build's fault injection (the library reads no
         * such variable; the hook is an internal symbol only the tests link). */
        const char *fault = getenv("TGL_FAULT");
        unsigned n;
        if (fault && kind == TGL_BACKEND_GL && sscanf(fault, "lose-context-after:%u", &n) == 1)
            tgl_gl_test_lose_context_after(b, n);
        return b;
    }
    if (kind == TGL_BACKEND_GL && st == TGL_ERR_NO_DEVICE && !tgl_egl_display_exists()) {
        printf("no EGL display on this machine: %s\n", tgl_last_error(NULL));
        skip();
    }
    fail_msg("tgl_open(%s) -> %s: %s", kind == TGL_BACKEND_GL ? "gl" : "cpu", tgl_status_string(st),
             tgl_last_error(NULL));
    return NULL;
}

int tgt_setup_gl(void **state)
{
    *state = tgt_open(TGL_BACKEND_GL);
    return 0;
}

int tgt_setup_cpu(void **state)
{
    *state = tgt_open(TGL_BACKEND_CPU);
    return 0;
}

int tgt_teardown(void **state)
{
    tgl_close(*state);
    *state = NULL;
    return 0;
}

int tgt_pair_setup(void **state, uint64_t salt)
{
    tgt_pair *p = calloc(1, sizeof *p);
    if (!p)
        return -1;
    p->gl = tgt_open(TGL_BACKEND_GL);
    p->cpu = tgt_open(TGL_BACKEND_CPU);
    /* Every streaming op turns round (glsl/common/sweep.glsl), not only those over 48 MiB, so
     * the suites' small sizes walk each kernel both ways (test_elementwise checks the rule);
     * every cast whose windows allow takes four elements per invocation, as from 1M on GPUs. */
    if (p->gl) {
        tgl_gl_of(p->gl)->limits.sweep_bytes = 1;
        tgl_gl_of(p->gl)->limits.cast_vec4_min = 0;
        p->gl_textures = tgl_gl_of(p->gl)->limits.texel_inputs;
        p->gl_images = tgl_gl_of(p->gl)->limits.image_inputs;
    }
    tgt_rng_init(&p->rng, tgt_seed() ^ salt);
    *state = p;
    return 0;
}

int tgt_pair_teardown(void **state)
{
    tgt_pair *p = *state;
    if (p) {
        tgl_close(p->gl);
        tgl_close(p->cpu);
        free(p);
    }
    *state = NULL;
    return 0;
}

double tgt_nmse(const float *got, const float *want, size_t n)
{
    return tgt_nmse_floor(got, want, n, 0.0);
}

double tgt_nmse_floor(const float *got, const float *want, size_t n, double floor)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(got[i]) && isfinite(want[i]))
            return INFINITY;
        if (!isfinite(want[i]))
            continue; /* compared for kind by the caller where it matters */
        double d = (double)got[i] - (double)want[i];
        num += d * d;
        den += (double)want[i] * (double)want[i] > floor * floor ? (double)want[i] * (double)want[i] : floor * floor;
    }
    return den > 0 ? num / den : num;
}

void tgt_poison(float *p, size_t n)
{
    uint32_t bits = TGT_POISON_BITS;
    for (size_t i = 0; i < n; i++)
        memcpy(&p[i], &bits, sizeof bits);
}

size_t tgt_first_unpoisoned(const float *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t bits;
        memcpy(&bits, &p[i], sizeof bits);
        if (bits != TGT_POISON_BITS)
            return i;
    }
    return n;
}

static struct {
    char name[64];
    char *old;
    int had;
} saved[16];
static int nsaved;

void tgt_setenv(const char *name, const char *value)
{
    if (nsaved < 16) {
        const char *old = getenv(name);
        snprintf(saved[nsaved].name, sizeof saved[nsaved].name, "%s", name);
        saved[nsaved].had = old != NULL;
        saved[nsaved].old = old ? strdup(old) : NULL;
        nsaved++;
    }
    if (value)
        setenv(name, value, 1);
    else
        unsetenv(name);
}

void tgt_env_restore(void)
{
    while (nsaved > 0) {
        nsaved--;
        if (saved[nsaved].had)
            setenv(saved[nsaved].name, saved[nsaved].old, 1);
        else
            unsetenv(saved[nsaved].name);
        free(saved[nsaved].old);
    }
}

int tgt_env_teardown(void **state)
{
    (void)state;
    tgt_env_restore();
    return 0;
}

tgl_ptr tgt_upload(tgl_backend *b, const float *x, size_t n, size_t front)
{
    tgl_ptr p;
    TGT_OK(b, tgl_alloc(b, (n + front) * sizeof(float), &p));
    TGT_OK(b, tgl_copy_htod(b, p + front * sizeof(float), x, n * sizeof(float)));
    return p;
}

void tgt_with_and_without_textures(tgl_backend *gl, void (*fn)(void *ctx), void *ctx)
{
    tgl_gl_limits *l = &tgl_gl_of(gl)->limits;
    const int device_textures = l->texel_inputs, device_images = l->image_inputs;
    for (int pass = 0; pass < (device_images ? 3 : 2); pass++) {
        l->texel_inputs = pass > 0 && l->texture_buffer_texels;
        l->image_inputs = pass == 2;
        fn(ctx);
    }
    l->texel_inputs = device_textures;
    l->image_inputs = device_images;
}

int tgt_pair_restore_reads(void **state)
{
    tgt_pair *p = *state;
    if (p && p->gl) {
        tgl_gl_of(p->gl)->limits.texel_inputs = p->gl_textures;
        tgl_gl_of(p->gl)->limits.image_inputs = p->gl_images;
    }
    return 0;
}

int tgt_built_program(const char *name, char *out, size_t size)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return -1;
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    int len = snprintf(out, size, "%s/../%s", self, name);
    if (len < 0 || (size_t)len >= size || access(out, X_OK)) {
        fprintf(stderr, "%s is not built (make all)\n", len > 0 && (size_t)len < size ? out : name);
        return -1;
    }
    return 0;
}

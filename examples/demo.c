/* tensorgl demo: what a user's program does. Opens the default backend (GL where a context can
 * be made) and the CPU reference, uploads a few million random floats, runs the same chain of
 * element-wise ops on both, checks that they agree, and prints the device and per-op times.
 * Build: cc demo.c -ltensorgl -lm */
#include <tensorgl.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N (4u << 20) /* 4M floats, 16 MiB per tensor */

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return 1e3 * (double)t.tv_sec + 1e-6 * (double)t.tv_nsec;
}

static void die(tgl_backend *b, const char *what, tgl_status st)
{
    fprintf(stderr, "demo: %s failed: %s: %s\n", what, tgl_status_string(st), tgl_last_error(b));
    exit(1);
}
#define CHECK(b, call) do { tgl_status st_ = (call); if (st_) die(b, #call, st_); } while (0)

/* One step of the chain: out = op(x[, y]). */
typedef struct step {
    int binary, op;
    int x, y, out; /* tensor slots */
} step;

enum { X, W, BIAS, T, U, V, SLOTS };
static const step chain[] = {
    {1, TGL_BINARY_MUL, X, W, T},      /* t = x * w           */
    {1, TGL_BINARY_ADD, T, BIAS, T},   /* t += bias           */
    {0, TGL_UNARY_GELU, T, 0, T},      /* t = gelu(t)         */
    {0, TGL_UNARY_TANH, T, 0, U},      /* u = tanh(t)         */
    {0, TGL_UNARY_SQUARE, U, 0, U},    /* u = u^2             */
    {1, TGL_BINARY_SUB, T, U, U},      /* u = t - u           */
    {1, TGL_BINARY_MAX, U, X, V},      /* v = max(u, x)       */
    {0, TGL_UNARY_SIGMOID, V, 0, V},   /* v = sigmoid(v)      */
    {1, TGL_BINARY_DIV, V, W, V},      /* v = v / w           */
    {0, TGL_UNARY_LOG, V, 0, V},       /* v = log(v)          */
    {0, TGL_UNARY_SILU, V, 0, V},      /* v = silu(v)         */
};
#define STEPS (sizeof chain / sizeof chain[0])

typedef struct run {
    tgl_backend *b;
    tgl_ptr t[SLOTS];
    double ms[STEPS];
    double first_ms;
} run;

static void run_chain(run *r, int timed)
{
    double start = now_ms();
    for (size_t i = 0; i < STEPS; i++) {
        const step *s = &chain[i];
        double t0 = now_ms();
        if (s->binary)
            CHECK(r->b, tgl_binary(r->b, s->op, r->t[s->x], r->t[s->y], r->t[s->out], N));
        else
            CHECK(r->b, tgl_unary(r->b, s->op, r->t[s->x], r->t[s->out], N));
        if (timed) { /* wait per op so each gets its own time */
            CHECK(r->b, tgl_synchronize(r->b));
            r->ms[i] = now_ms() - t0;
        }
    }
    CHECK(r->b, tgl_synchronize(r->b));
    if (!timed)
        r->first_ms = now_ms() - start;
}

static void setup(run *r, tgl_backend *b, float *const host[3])
{
    r->b = b;
    for (int i = 0; i < SLOTS; i++)
        CHECK(b, tgl_alloc(b, N * sizeof(float), &r->t[i]));
    for (int i = 0; i < 3; i++)
        CHECK(b, tgl_copy_htod(b, r->t[i], host[i], N * sizeof(float)));
    run_chain(r, 0); /* first pass: compiles kernels where the backend has any */
    run_chain(r, 1);
}

int main(void)
{
    tgl_backend *dev, *cpu;
    CHECK(NULL, tgl_open(NULL, &dev));
    tgl_options cpu_opts = {.kind = TGL_BACKEND_CPU};
    CHECK(NULL, tgl_open(&cpu_opts, &cpu));

    struct tgl_device_info info;
    CHECK(dev, tgl_device_info(dev, &info));
    printf("tensorgl demo: %u floats (%.0f MiB per tensor), %zu element-wise ops\n", N,
           N * 4.0 / (1 << 20), STEPS);
    printf("default backend: %s — %s %s, %s (%s)\n", info.backend, info.api, info.version,
           info.renderer, info.egl_path);
    if (info.fallback_reason[0])
        printf("  (GL unavailable: %s)\n", info.fallback_reason);

    float *host[3];
    unsigned long long s = 0x2545F4914F6CDD1Dull ^ (unsigned long long)time(NULL);
    for (int k = 0; k < 3; k++) {
        host[k] = malloc(N * sizeof(float));
        for (unsigned i = 0; i < N; i++) {
            s ^= s << 13, s ^= s >> 7, s ^= s << 17;
            float u = (float)(s >> 40) / (float)(1u << 24); /* [0, 1) */
            host[k][i] = k == W ? 0.5f + u : 8.0f * u - 4.0f; /* w > 0 keeps the division tame */
        }
    }

    run a, c;
    setup(&a, dev, host);
    setup(&c, cpu, host);

    float *ra = malloc(N * sizeof(float)), *rc = malloc(N * sizeof(float));
    CHECK(dev, tgl_copy_dtoh(dev, ra, a.t[V], N * sizeof(float)));
    CHECK(cpu, tgl_copy_dtoh(cpu, rc, c.t[V], N * sizeof(float)));
    double num = 0, den = 0;
    size_t bad = 0;
    for (unsigned i = 0; i < N; i++) {
        if (!isfinite(ra[i]) && isfinite(rc[i]))
            bad++;
        double d = (double)ra[i] - rc[i];
        num += d * d;
        den += (double)rc[i] * rc[i];
    }
    double nmse = den > 0 ? num / den : num;

    printf("\n%-4s %-9s %12s %10s %12s %10s\n", "step", "op", info.backend, "GB/s", "cpu", "GB/s");
    double total_a = 0, total_c = 0;
    for (size_t i = 0; i < STEPS; i++) {
        const step *st = &chain[i];
        double gb = (st->binary ? 3.0 : 2.0) * N * sizeof(float) / 1e9;
        printf("%-4zu %-9s %9.2f ms %10.1f %9.2f ms %10.1f\n", i + 1,
               st->binary ? tgl_binary_name(st->op) : tgl_unary_name(st->op), a.ms[i],
               gb / (a.ms[i] / 1e3), c.ms[i], gb / (c.ms[i] / 1e3));
        total_a += a.ms[i];
        total_c += c.ms[i];
    }
    printf("%-14s %9.2f ms %10s %9.2f ms   (%s is %.1fx the cpu reference)\n", "total", total_a, "",
           total_c, info.backend, total_c / total_a);
    printf("first pass, kernels compiled on first use: %s %.1f ms, cpu %.1f ms\n", info.backend,
           a.first_ms, c.first_ms);
    printf("\nresult: %s vs cpu NMSE %.3g, %zu non-finite where the cpu has a number -> %s\n",
           info.backend, nmse, bad, nmse <= 1e-9 && bad == 0 ? "AGREE" : "DISAGREE");

    for (int k = 0; k < 3; k++)
        free(host[k]);
    free(ra);
    free(rc);
    tgl_close(dev);
    tgl_close(cpu);
    return nmse <= 1e-9 && bad == 0 ? 0 : 1;
}

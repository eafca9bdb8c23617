/* `make soak [SOAK_SECONDS=1800]`: a randomized mix of every op, at random small-to-medium
 * shapes, on the GL backend and the CPU oracle side by side for a given time, with a rejected
 * call every so often. Every result is compared (NMSE per op family, exact where the op is);
 * resident memory is sampled, and must not grow after the warm-up (the first fifth, at least
 * 60 s: program caches fill, the pool settles). Prints a summary; exit 0 when nothing
 * mismatched and memory stayed within 16 MiB of its level at the end of the warm-up.
 * Products and sums take inputs of one sign: a result that cancels to near zero (a 1 x 41
 * matvec of values in [-1, 1], NMSE 6.7e-8 in the first 30-minute run) measures the f32
 * rounding of a correct sum against the oracle's double one, not the op. The op suites cover
 * mixed signs.
 * Usage: soak SECONDS [SEED] */
#include "testing.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { KINDS = 18 };
static const char *const kind_names[KINDS] = {
    "unary", "binary", "map", "scale_add+fill", "broadcast", "permute", "reduce", "argmin/argmax",
    "softmax/log_softmax", "rmsnorm/layernorm", "casts", "gemm", "gemm_batched", "gemm_f16", "matvec",
    "rope", "gather_rows", "attention/conv2d"};

typedef struct side {
    tgl_backend *b;
    tgl_ptr in[3], out;
} side;

static tgt_rng rng;
static tgl_backend *gl, *cpu;
static unsigned long calls[KINDS], mismatches, rejected, compared;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double rss_mib(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0, resident = 0;
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
            resident = 0;
        fclose(f);
    }
    return (double)resident * (double)sysconf(_SC_PAGESIZE) / (1 << 20);
}

static size_t dim(size_t lo, size_t hi)
{
    return lo + tgt_below(&rng, hi - lo + 1);
}

/* Uploads the same random inputs (3 x n floats in [lo, hi]) to both sides and makes an output
 * of out_bytes on each. */
static int prepare(side s[2], size_t n, float lo, float hi, size_t out_bytes)
{
    float *x = malloc(n * sizeof(float));
    int bad = !x;
    for (int k = 0; k < 3 && !bad; k++) {
        for (size_t i = 0; i < n; i++)
            x[i] = tgt_uniform(&rng, lo, hi);
        for (int w = 0; w < 2 && !bad; w++)
            bad = tgl_alloc(s[w].b, n * sizeof(float), &s[w].in[k]) ||
                  tgl_copy_htod(s[w].b, s[w].in[k], x, n * sizeof(float));
    }
    free(x);
    for (int w = 0; w < 2 && !bad; w++)
        bad = tgl_alloc(s[w].b, out_bytes, &s[w].out) != TGL_OK;
    if (bad) { /* a soak whose steps do not run would prove nothing: count it */
        printf("soak: setting up %zu floats failed: %s / %s\n", n, tgl_last_error(gl), tgl_last_error(cpu));
        mismatches++;
    }
    return bad ? -1 : 0;
}

static void release(side s[2])
{
    for (int w = 0; w < 2; w++) {
        for (int k = 0; k < 3; k++)
            tgl_free(s[w].b, s[w].in[k]);
        tgl_free(s[w].b, s[w].out);
    }
}

/* Compares the outputs (out_bytes) as f32 with `limit` (NMSE), or bit for bit when limit < 0. */
static void compare(side s[2], size_t out_bytes, double limit, int kind, const char *what)
{
    float *g = malloc(out_bytes), *c = malloc(out_bytes); /* out_bytes is a multiple of 4 */
    compared++;
    if (!g || !c || tgl_copy_dtoh(gl, g, s[0].out, out_bytes) || tgl_copy_dtoh(cpu, c, s[1].out, out_bytes)) {
        printf("soak: %s: read-back failed: %s\n", what, tgl_last_error(gl));
        mismatches++;
    } else if (limit < 0 ? memcmp(g, c, out_bytes) != 0 : !(tgt_nmse(g, c, out_bytes / 4) <= limit)) {
        printf("soak: %s (%s) mismatch (NMSE %.3g, limit %.3g)\n", kind_names[kind], what,
               tgt_nmse(g, c, out_bytes / 4), limit);
        mismatches++;
    }
    free(g);
    free(c);
}

#define BOTH(call_gl, call_cpu)                                                              \
    do {                                                                                     \
        tgl_status sg_ = (call_gl), sc_ = (call_cpu);                                        \
        if (sg_ != sc_) {                                                                    \
            printf("soak: %s: gl %s, cpu %s (%s)\n", kind_names[kind], tgl_status_string(sg_), \
                   tgl_status_string(sc_), tgl_last_error(sg_ ? gl : cpu));                  \
            mismatches++;                                                                    \
        }                                                                                    \
    } while (0)
#define G s[0].b
#define C s[1].b

static void step(int kind)
{
    side s[2] = {{gl, {0}, 0}, {cpu, {0}, 0}};
    size_t rows = dim(1, 64), cols = dim(1, 300), n = rows * cols;
    char what[64];
    snprintf(what, sizeof what, "%zu x %zu", rows, cols);
    calls[kind]++;
    switch (kind) {
    case 0: { /* every unary op over a domain where all are defined */
        int op = (int)tgt_below(&rng, TGL_UNARY_NOT); /* the float ops: all before NOT */
        if (prepare(s, n, 0.1f, 3.0f, n * 4))
            break;
        BOTH(tgl_unary(G, op, s[0].in[0], s[0].out, n), tgl_unary(C, op, s[1].in[0], s[1].out, n));
        compare(s, n * 4, 1e-9, kind, tgl_unary_name(op));
        break;
    }
    case 1: {
        int op = (int)tgt_below(&rng, TGL_BINARY_FLOOR_DIV); /* the float ops: all before FLOOR_DIV */
        if (prepare(s, n, 0.5f, 2.0f, n * 4))
            break;
        BOTH(tgl_binary(G, op, s[0].in[0], s[0].in[1], s[0].out, n), tgl_binary(C, op, s[1].in[0], s[1].in[1], s[1].out, n));
        compare(s, n * 4, 1e-9, kind, tgl_binary_name(op));
        break;
    }
    case 2: {
        static const char *const e[] = {"sqrt(a*b + c)", "gelu(a) * silu(b) - c", "clamp(a - b, -0.5, 0.5) * c",
                                        "select(a - 1, exp(-b), c)", "pow(a, 1.5) / (b + c)"};
        const char *expr = e[tgt_below(&rng, 5)];
        if (prepare(s, n, 0.5f, 2.0f, n * 4))
            break;
        BOTH(tgl_map(G, expr, s[0].in, 3, s[0].out, n), tgl_map(C, expr, s[1].in, 3, s[1].out, n));
        compare(s, n * 4, 1e-9, kind, expr);
        break;
    }
    case 3:
        if (prepare(s, n, -2.0f, 2.0f, n * 4))
            break;
        BOTH(tgl_fill(G, s[0].out, 0.75f, n), tgl_fill(C, s[1].out, 0.75f, n));
        BOTH(tgl_scale_add(G, 1.5f, s[0].in[0], -0.5f, s[0].out, n), tgl_scale_add(C, 1.5f, s[1].in[0], -0.5f, s[1].out, n));
        compare(s, n * 4, 1e-12, kind, what);
        break;
    case 4: {
        size_t as[2] = {rows, cols}, bs[1] = {cols};
        if (prepare(s, n, -2.0f, 2.0f, n * 4))
            break;
        BOTH(tgl_binary_broadcast(G, TGL_BINARY_SUB, s[0].in[0], as, 2, s[0].in[1], bs, 1, s[0].out),
             tgl_binary_broadcast(C, TGL_BINARY_SUB, s[1].in[0], as, 2, s[1].in[1], bs, 1, s[1].out));
        compare(s, n * 4, -1, kind, what);
        break;
    }
    case 5: {
        size_t a = dim(1, 12), b2 = dim(1, 12), c2 = dim(1, 40), shape[3] = {a, b2, c2}, perm[3] = {2, 0, 1};
        if (prepare(s, a * b2 * c2, -2.0f, 2.0f, a * b2 * c2 * 4))
            break;
        BOTH(tgl_permute(G, s[0].in[0], s[0].out, shape, 3, perm), tgl_permute(C, s[1].in[0], s[1].out, shape, 3, perm));
        compare(s, a * b2 * c2 * 4, -1, kind, what);
        break;
    }
    case 6: case 7: {
        size_t shape[2] = {rows, cols}, axis = tgt_below(&rng, 2), outs = axis ? rows : cols;
        int op = (int)tgt_below(&rng, TGL_REDUCE_COUNT);
        if (prepare(s, n, op == TGL_REDUCE_PROD ? 0.9f : 0.5f, op == TGL_REDUCE_PROD ? 1.1f : 1.5f, outs * 4))
            break;
        if (kind == 6)
            BOTH(tgl_reduce(G, op, s[0].in[0], s[0].out, shape, 2, axis), tgl_reduce(C, op, s[1].in[0], s[1].out, shape, 2, axis));
        else if (op & 1)
            BOTH(tgl_argmax(G, s[0].in[0], s[0].out, shape, 2, axis), tgl_argmax(C, s[1].in[0], s[1].out, shape, 2, axis));
        else
            BOTH(tgl_argmin(G, s[0].in[0], s[0].out, shape, 2, axis), tgl_argmin(C, s[1].in[0], s[1].out, shape, 2, axis));
        compare(s, outs * 4, kind == 7 ? -1 : op == TGL_REDUCE_PROD ? 1e-9 : 1e-10, kind, what);
        break;
    }
    case 8:
        if (prepare(s, n, -8.0f, 8.0f, n * 4))
            break;
        if (tgt_below(&rng, 2))
            BOTH(tgl_softmax(G, s[0].in[0], s[0].out, rows, cols), tgl_softmax(C, s[1].in[0], s[1].out, rows, cols));
        else
            BOTH(tgl_log_softmax(G, s[0].in[0], s[0].out, rows, cols), tgl_log_softmax(C, s[1].in[0], s[1].out, rows, cols));
        compare(s, n * 4, 1e-9, kind, what);
        break;
    case 9:
        if (prepare(s, n, -2.0f, 2.0f, n * 4))
            break;
        if (tgt_below(&rng, 2))
            BOTH(tgl_rmsnorm(G, s[0].in[0], s[0].in[1], s[0].out, rows, cols, 1e-5f),
                 tgl_rmsnorm(C, s[1].in[0], s[1].in[1], s[1].out, rows, cols, 1e-5f));
        else
            BOTH(tgl_layernorm(G, s[0].in[0], s[0].in[1], s[0].in[2], s[0].out, rows, cols, 1e-5f),
                 tgl_layernorm(C, s[1].in[0], s[1].in[1], s[1].in[2], s[1].out, rows, cols, 1e-5f));
        compare(s, n * 4, 1e-9, kind, what);
        break;
    case 10: /* f32 -> f16 -> f32 through the output */
        if (prepare(s, n, -70000.0f, 70000.0f, n * 4))
            break;
        BOTH(tgl_cast_f32_f16(G, s[0].in[0], s[0].in[1], n), tgl_cast_f32_f16(C, s[1].in[0], s[1].in[1], n));
        BOTH(tgl_cast_f16_f32(G, s[0].in[1], s[0].out, n), tgl_cast_f16_f32(C, s[1].in[1], s[1].out, n));
        compare(s, n * 4, -1, kind, what);
        break;
    case 11: case 12: {
        size_t m = dim(1, 96), nn = dim(1, 96), k = dim(1, 200), batch = kind == 12 ? dim(1, 4) : 1;
        size_t big = batch * (m * k > k * nn ? m * k : k * nn);
        if (prepare(s, big, 0.1f, 1.0f, batch * m * nn * 4))
            break;
        if (kind == 11)
            BOTH(tgl_gemm(G, 0, 1, m, nn, k, 1.0f, s[0].in[0], k, s[0].in[1], k, 0.0f, s[0].out, nn),
                 tgl_gemm(C, 0, 1, m, nn, k, 1.0f, s[1].in[0], k, s[1].in[1], k, 0.0f, s[1].out, nn));
        else
            BOTH(tgl_gemm_batched(G, 1, 0, m, nn, k, 1.0f, s[0].in[0], m, m * k, s[0].in[1], nn, k * nn, 0.0f, s[0].out,
                                  nn, m * nn, batch),
                 tgl_gemm_batched(C, 1, 0, m, nn, k, 1.0f, s[1].in[0], m, m * k, s[1].in[1], nn, k * nn, 0.0f, s[1].out,
                                  nn, m * nn, batch));
        compare(s, batch * m * nn * 4, 1e-9, kind, what);
        break;
    }
    case 13: { /* A and B cast to f16 into in[2]'s two halves; C (f16) cast back into in[0] */
        size_t m = dim(1, 96), nn = dim(1, 96), k = dim(1, 200), big = m * k > k * nn ? m * k : k * nn;
        if (big < m * nn)
            big = m * nn;
        if (prepare(s, big, 0.1f, 1.0f, m * nn * 2))
            break;
        for (int w = 0; w < 2; w++) {
            tgl_ptr a16 = s[w].in[2], b16 = s[w].in[2] + 2 * big;
            tgl_status st = tgl_cast_f32_f16(s[w].b, s[w].in[0], a16, m * k);
            if (!st)
                st = tgl_cast_f32_f16(s[w].b, s[w].in[1], b16, k * nn);
            if (!st)
                st = tgl_gemm_f16(s[w].b, 0, 0, m, nn, k, 1.0f, a16, k, b16, nn, 0.0f, s[w].out, nn);
            if (!st)
                st = tgl_cast_f16_f32(s[w].b, s[w].out, s[w].in[0], m * nn);
            if (st) {
                printf("soak: gemm_f16: %s\n", tgl_last_error(s[w].b));
                mismatches++;
            }
        }
        tgl_ptr o0 = s[0].out, o1 = s[1].out;
        s[0].out = s[0].in[0];
        s[1].out = s[1].in[0];
        compare(s, m * nn * 4, 1e-5, kind, what); /* f16 outputs may round a unit apart */
        s[0].out = o0;
        s[1].out = o1;
        break;
    }
    case 14:
        if (prepare(s, n, 0.1f, 1.0f, rows * 4))
            break;
        BOTH(tgl_matvec(G, rows, cols, s[0].in[0], s[0].in[1], s[0].out), tgl_matvec(C, rows, cols, s[1].in[0], s[1].in[1], s[1].out));
        compare(s, rows * 4, 1e-9, kind, what);
        break;
    case 15: {
        size_t heads = dim(1, 4), hd = 2 * dim(1, 32), seq = dim(1, 16), pos = tgt_below(&rng, 5000);
        int mode = (int)tgt_below(&rng, 2);
        if (prepare(s, seq * heads * hd, -1.0f, 1.0f, seq * heads * hd * 4))
            break;
        BOTH(tgl_rope(G, s[0].in[0], s[0].out, 1, seq, heads, hd, pos, 10000.0f, mode),
             tgl_rope(C, s[1].in[0], s[1].out, 1, seq, heads, hd, pos, 10000.0f, mode));
        compare(s, seq * heads * hd * 4, 1e-9, kind, what);
        break;
    }
    case 16: {
        size_t n_ids = dim(1, 50);
        int32_t *ids = malloc(n_ids * sizeof *ids);
        for (size_t i = 0; i < n_ids; i++)
            ids[i] = (int32_t)tgt_below(&rng, rows);
        if (!ids || prepare(s, n, -1.0f, 1.0f, n_ids * cols * 4)) {
            free(ids);
            break;
        }
        for (int w = 0; w < 2; w++)
            if (tgl_copy_htod(s[w].b, s[w].in[1], ids, n_ids * sizeof *ids < n * 4 ? n_ids * sizeof *ids : n * 4))
                mismatches++;
        free(ids);
        if (n_ids > n)
            n_ids = n;
        BOTH(tgl_gather_rows(G, s[0].in[0], s[0].in[1], s[0].out, rows, cols, n_ids),
             tgl_gather_rows(C, s[1].in[0], s[1].in[1], s[1].out, rows, cols, n_ids));
        compare(s, n_ids * cols * 4, -1, kind, what);
        break;
    }
    default: {
        if (tgt_below(&rng, 2)) {
            size_t heads = dim(1, 4), sq = dim(1, 40), sk = dim(1, 80), hd = dim(1, 96);
            size_t big = heads * (sq > sk ? sq : sk) * hd;
            if (prepare(s, big, 0.1f, 1.0f, heads * sq * hd * 4))
                break;
            float scale = 1.0f / sqrtf((float)hd);
            int causal = (int)tgt_below(&rng, 2);
            BOTH(tgl_attention(G, s[0].in[0], s[0].in[1], s[0].in[2], s[0].out, 1, heads, sq, sk, hd, scale, causal),
                 tgl_attention(C, s[1].in[0], s[1].in[1], s[1].in[2], s[1].out, 1, heads, sq, sk, hd, scale, causal));
            compare(s, heads * sq * hd * 4, 1e-9, kind, "attention");
        } else {
            tgl_conv2d_desc d = {.batch = dim(1, 2), .in_channels = dim(1, 8), .in_h = dim(3, 20), .in_w = dim(3, 20),
                                 .out_channels = dim(1, 8), .kernel_h = dim(1, 3), .kernel_w = dim(1, 3),
                                 .stride_h = dim(1, 2), .stride_w = dim(1, 2), .pad_h = tgt_below(&rng, 2),
                                 .pad_w = tgt_below(&rng, 2)};
            size_t oh, ow;
            if (tgl_conv2d_output_size(&d, &oh, &ow))
                break;
            size_t in_n = d.batch * d.in_channels * d.in_h * d.in_w, f_n = d.out_channels * d.in_channels * 9;
            size_t out_n = d.batch * d.out_channels * oh * ow;
            if (prepare(s, in_n > f_n ? in_n : f_n, 0.1f, 1.0f, out_n * 4))
                break;
            BOTH(tgl_conv2d(G, &d, s[0].in[0], s[0].in[1], s[0].in[2], s[0].out),
                 tgl_conv2d(C, &d, s[1].in[0], s[1].in[1], s[1].in[2], s[1].out));
            compare(s, out_n * 4, 1e-9, kind, "conv2d");
        }
        break;
    }
    }
    /* Now and then a call both backends must reject, leaving the output as it was. */
    if (tgt_below(&rng, 8) == 0 && s[0].out) {
        rejected++;
        BOTH(tgl_unary(G, TGL_UNARY_EXP, s[0].out, s[0].out, (size_t)1 << 40),
             tgl_unary(C, TGL_UNARY_EXP, s[1].out, s[1].out, (size_t)1 << 40));
    }
    release(s);
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 60.0;
    uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 10) : (uint64_t)time(NULL);
    tgt_rng_init(&rng, seed);
    tgl_options og = {.kind = TGL_BACKEND_GL}, oc = {.kind = TGL_BACKEND_CPU};
    if (tgl_open(&og, &gl) || tgl_open(&oc, &cpu)) {
        printf("soak: %s\n", tgl_last_error(NULL));
        return 2;
    }
    double t0 = now(), warm_until = t0 + (seconds / 5 > 60 ? seconds / 5 : 60), next_sample = t0;
    double rss_warm = -1, rss_max_after = 0, rss_now = 0;
    unsigned long steps = 0;
    printf("soak: %.0f s on %s, seed %llu\n", seconds, tgl_backend_name(gl), (unsigned long long)seed);
    while (now() - t0 < seconds) {
        step((int)tgt_below(&rng, KINDS));
        steps++;
        if (now() >= next_sample) {
            rss_now = rss_mib();
            if (now() >= warm_until) {
                if (rss_warm < 0)
                    rss_warm = rss_now;
                if (rss_now > rss_max_after)
                    rss_max_after = rss_now;
            }
            next_sample = now() + 5.0;
        }
    }
    rss_now = rss_mib();
    if (rss_warm < 0)
        rss_warm = rss_max_after = rss_now;
    printf("soak: %lu steps in %.0f s, %lu results compared, %lu mismatches, %lu rejected calls checked\n", steps,
           now() - t0, compared, mismatches, rejected);
    for (int k = 0; k < KINDS; k++)
        printf("  %-22s %lu\n", kind_names[k], calls[k]);
    double growth = rss_max_after - rss_warm;
    printf("soak: resident memory %.1f MiB after warm-up, at most %.1f MiB after (growth %.1f MiB), %.1f MiB at the end\n",
           rss_warm, rss_max_after, growth, rss_now);
    tgl_close(gl);
    tgl_close(cpu);
    return mismatches || growth > 16.0 ? 1 : 0;
}
